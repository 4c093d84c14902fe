package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/nearline/nearline/rpcserve"

	"github.com/nearline/nearline/internal/envflag"
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
	err := parseCommand(fs, env, args, func() (err error) {
		url, err = healthURL(listen, envflag.Split(apiKeys))
		return err
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("ask %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	fmt.Fprintln(env.stdout, "healthy")
	return nil
}

// healthURL is the /health URL of a server listening on listen, behind the
// first of keys when there are any.
func healthURL(listen string, keys []string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("--listen %q: want host:port", listen)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	path := "/health"
	if len(keys) > 0 {
		path = "/" + keys[0] + path
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}
