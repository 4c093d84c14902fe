package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/internal/logs"
)

// MigrateDistributed migrates the database at url, the coordinator of a
// Citus cluster, then places every table on the cluster (Distribute). A
// database that is not a coordinator is refused before any migration
// (CheckCitus).
func MigrateDistributed(ctx context.Context, url string, logger *slog.Logger) (DistributeResult, error) {
	logger = logs.OrDiscard(logger)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return DistributeResult{}, fmt.Errorf("connect to the coordinator: %w", err)
	}
	defer pool.Close()
	if err := CheckCitus(ctx, pool); err != nil {
		return DistributeResult{}, err
	}
	if err := MigrateLogged(ctx, url, logger); err != nil {
		return DistributeResult{}, err
	}
	logger.Info("database is up to date")
	return Distribute(ctx, pool, logger)
}
