package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nearline/nearline/rpcserve"
)

// runServe answers NEAR JSON-RPC read methods from the archive.
func runServe(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "serve", "--database-url URL [--listen ADDR] [flags]")
	databaseURL := stringFlag(fs, env, "database-url", "NEARLINE_DATABASE_URL", "", "PostgreSQL URL of the archive (required)")
	listen := stringFlag(fs, env, "listen", "NEARLINE_LISTEN", rpcserve.DefaultListen, "address to answer JSON-RPC on")
	upstream := stringFlag(fs, env, "upstream", "NEARLINE_UPSTREAM", "", "NEAR RPC URL to forward what the archive cannot answer to (send_tx, blocks before the archive, validators, ...)")
	apiKeys := stringFlag(fs, env, "api-keys", "NEARLINE_API_KEYS", "", "comma-separated API keys; when set, requests must use /<api-key>/...")
	viewStateLimit := intFlag(fs, env, "view-state-limit", "NEARLINE_VIEW_STATE_LIMIT", rpcserve.DefaultViewStateLimit, "view_state limit in bytes of contract state, as a regular node (0 = no limit)")
	maxBody := intFlag(fs, env, "max-body-bytes", "NEARLINE_MAX_BODY_BYTES", rpcserve.DefaultMaxBodyBytes, "largest request body accepted")
	maxBatch := intFlag(fs, env, "max-batch", "NEARLINE_MAX_BATCH", rpcserve.DefaultMaxBatch, "most requests in one batch")
	timeout := durationFlag(fs, env, "request-timeout", "NEARLINE_REQUEST_TIMEOUT", rpcserve.DefaultRequestTimeout, "time limit of one HTTP request")
	maxConcurrent := intFlag(fs, env, "max-concurrent", "NEARLINE_MAX_CONCURRENT", rpcserve.DefaultMaxConcurrent, "most HTTP requests handled at once")
	shutdown := durationFlag(fs, env, "shutdown-timeout", "NEARLINE_SHUTDOWN_TIMEOUT", 10*time.Second, "time in-flight requests get to finish on shutdown")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *databaseURL == "" {
		fmt.Fprintln(fs.Output(), "nearline serve: --database-url (or NEARLINE_DATABASE_URL) is required")
		fs.Usage()
		return errUsage
	}
	if *maxBody <= 0 || *maxBatch <= 0 || *maxConcurrent <= 0 || *timeout <= 0 || *viewStateLimit < 0 {
		fmt.Fprintln(fs.Output(), "nearline serve: limits must be positive (--view-state-limit may be 0)")
		return errUsage
	}
	limit := *viewStateLimit
	if limit == 0 {
		limit = -1 // the flag's 0 means no limit; the config's 0 means the default
	}
	var keys []string
	for _, k := range strings.Split(*apiKeys, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return rpcserve.Serve(ctx, rpcserve.ServeConfig{
		DatabaseURL: *databaseURL,
		Listen:      *listen,
		Handler: rpcserve.Config{
			MaxBodyBytes:   int64(*maxBody),
			MaxBatch:       *maxBatch,
			RequestTimeout: *timeout,
			MaxConcurrent:  *maxConcurrent,
			APIKeys:        keys,
			Forward:        *upstream,
		},
		Archive:         rpcserve.ArchiveConfig{ViewStateLimit: limit},
		ShutdownTimeout: *shutdown,
		Logger:          env.logger,
	})
}
