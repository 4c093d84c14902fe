package envflag

import (
	"flag"
	"fmt"
	"log/slog"
	"net"

	"github.com/nearline/nearline/internal/httpcall"
)

// CheckURLs refuses a comma-separated list of the flag name that holds
// something other than absolute http(s) URLs (which may have a query: an
// API key), naming them redacted.
func (e Env) CheckURLs(fs *flag.FlagSet, name string) error {
	for _, s := range Split(fs.Lookup(name).Value.String()) {
		if _, ok := httpcall.ParseHTTP(s); !ok {
			return fmt.Errorf("%s: %q is not an http:// or https:// URL", e.OriginShown(fs, name, ShownURLs), httpcall.RedactURL(s))
		}
	}
	return nil
}

// WarnInClear logs a warning for each URL of the flag name that would
// carry a secret unencrypted (httpcall.InClear): its own query or
// password, or, when bearer is set, the flag's API key. The URL is shown
// redacted.
func WarnInClear(fs *flag.FlagSet, name string, bearer bool, logger *slog.Logger) {
	for _, u := range Split(fs.Lookup(name).Value.String()) {
		if httpcall.InClear(u, bearer) {
			logger.Warn("an API key or password goes unencrypted over http://; use https://", "flag", "--"+name, "url", httpcall.RedactURL(u))
		}
	}
}

// CheckAddress refuses a listen address of the flag name that is not
// host:port (empty passes: off).
func (e Env) CheckAddress(fs *flag.FlagSet, name string) error {
	addr := fs.Lookup(name).Value.String()
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%s: want host:port, such as 127.0.0.1:3030 or :3030", e.Origin(fs, name))
	}
	return nil
}
