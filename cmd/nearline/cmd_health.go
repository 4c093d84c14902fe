package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nearline/nearline/internal/envflag"
	"github.com/nearline/nearline/rpcserve"
)

// healthTimeout bounds `nearline health`'s request.
const healthTimeout = 5 * time.Second

// runHealth asks a running server's GET /health and succeeds when it
// answers 200: the healthcheck of a container whose image has no HTTP
// client. It reads the server's own --listen and --api-keys variables, so
// that inside the server's container it needs no flags.
func runHealth(ctx context.Context, env *environment, args []string) error {
	fs := newFlagSet(env, "health", "[--listen ADDR] [--api-keys KEYS]")
	listen, apiKeys := rpcserve.DefaultListen, ""
	fs.StringVar(&listen, "listen", listen,
		"address the server answers JSON-RPC on (an unspecified host, such as 0.0.0.0, is asked on loopback)")
	fs.Var(envflag.Secret(&apiKeys), "api-keys", "the server's API keys: the first is used; never shown")
	var url string
	err := env.flags().Parse(fs, args, func() (err error) {
		key := "" // the first of the server's keys
		if keys := envflag.Split(apiKeys); len(keys) > 0 {
			key = keys[0]
		}
		if url, err = rpcserve.HealthURL(listen, key); err != nil {
			return fmt.Errorf("--listen %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if err := rpcserve.AskHealth(ctx, url); err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, "healthy")
	return nil
}
