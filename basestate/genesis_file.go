package basestate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/nearline/nearline/chain"
	"github.com/nearline/nearline/docsource"
	"github.com/nearline/nearline/internal/logs"
	"github.com/nearline/nearline/store"
)

// Archive is a Sink that says where its history starts: ErrNotFound
// before a genesis file or a snapshot is loaded (*store.Store implements
// it).
type Archive interface {
	Sink
	HistoryStart(ctx context.Context) (uint64, error)
}

var _ Archive = (*store.Store)(nil)

// GenesisConfigOf reads the config of the genesis file at path (its
// records skipped).
func GenesisConfigOf(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open genesis: %w", err)
	}
	defer f.Close()
	return docsource.GenesisConfigFromFile(f)
}

// LoadGenesisFile loads the genesis file at path (LoadGenesis) into an
// archive with no history start; one that has it is left as it is.
func LoadGenesisFile(ctx context.Context, path string, archive Archive, logger *slog.Logger) error {
	logger = logs.OrDiscard(logger)
	if _, err := archive.HistoryStart(ctx); err == nil {
		logger.Info("history start already recorded; not loading genesis records again", "genesis", path)
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open genesis: %w", err)
	}
	defer f.Close()
	_, err = LoadGenesis(ctx, f, archive, logger)
	return err
}

// CheckGenesisFile compares the chain of the genesis file at path, while
// it is still to be loaded (no history start recorded), with the
// upstream's (named upName): chain.Compare's error when they differ.
func CheckGenesisFile(ctx context.Context, path string, archive Archive, upstream chain.Identity, upName string) error {
	if _, err := archive.HistoryStart(ctx); err == nil {
		return nil // loaded already, and checked then; the archive's chain stands for it
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	cfg, err := GenesisConfigOf(path)
	if err != nil {
		return err
	}
	file, err := chain.FromConfig(cfg)
	if err != nil {
		return fmt.Errorf("--genesis %s: %w", path, err)
	}
	return chain.Compare(file, "--genesis "+path, upstream, upName)
}
