package pgcluster

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nearline/nearline/internal/logs"
)

// EmbeddedDatabase is the database of the embedded PostgreSQL that holds
// the archive.
const EmbeddedDatabase = "nearline"

// releaseTimeout bounds the stop of the embedded PostgreSQL at exit.
const releaseTimeout = 2 * time.Minute

// ErrNoHome is returned by DefaultDir when no directory can be found for
// the embedded PostgreSQL.
var ErrNoHome = errors.New("HOME is not set")

// DefaultDir is the embedded PostgreSQL's directory when none is given:
// $XDG_DATA_HOME/nearline, else ~/.local/share/nearline; as root
// /var/lib/nearline, which the postgres user the server runs as can reach.
func DefaultDir(getenv func(string) string, root bool) (string, error) {
	if root {
		return "/var/lib/nearline", nil
	}
	if xdg := getenv("XDG_DATA_HOME"); filepath.IsAbs(xdg) {
		return filepath.Join(xdg, "nearline"), nil
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "share", "nearline"), nil
	}
	return "", ErrNoHome
}

// OpenEmbedded opens the embedded PostgreSQL: the Local cluster of cfg
// (its Database defaulting to EmbeddedDatabase), made when cfg.Create,
// started unless another nearline process runs it. It returns the
// database's URL and a release to call when done with it, which stops the
// server unless another process still uses it; logger is told which.
func OpenEmbedded(ctx context.Context, cfg LocalConfig, logger *slog.Logger) (string, func(), error) {
	logger = logs.OrDiscard(logger)
	cfg.Database = cmp.Or(cfg.Database, EmbeddedDatabase)
	local, err := OpenLocal(ctx, cfg)
	if err != nil {
		return "", nil, err
	}
	url := local.URL(cfg.Database)
	logger.Info("embedded PostgreSQL", "data_dir", local.Dir(), "created", local.Created, "started", local.Started,
		"log", local.LogFile(), "url", url)
	release := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		stopped, err := local.Release(ctx)
		switch {
		case err != nil:
			logger.Error("stop the embedded PostgreSQL", "data_dir", local.Dir(), "err", err)
		case stopped:
			logger.Info("embedded PostgreSQL stopped", "data_dir", local.Dir())
		default:
			logger.Info("embedded PostgreSQL left running for the other nearline processes using it", "data_dir", local.Dir())
		}
	}
	return url, release, nil
}
