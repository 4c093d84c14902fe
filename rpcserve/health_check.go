package rpcserve

import (
	"context"
	"fmt"
	"net"
	"net/http"
)

// HealthURL is the GET /health URL of a server listening on listen (an
// unspecified host, such as 0.0.0.0, is asked on loopback), behind apiKey
// unless it is "".
func HealthURL(listen, apiKey string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("%q: want host:port", listen)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	path := "/health"
	if apiKey != "" {
		path = "/" + apiKey + path
	}
	return "http://" + net.JoinHostPort(host, port) + path, nil
}

// AskHealth asks a server's /health at url (HealthURL) and returns nil
// when it answers 200.
func AskHealth(ctx context.Context, url string) error {
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
	return nil
}
