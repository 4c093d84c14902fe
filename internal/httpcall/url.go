package httpcall

import (
	"net/url"
	"strings"
)

// IsHTTP reports whether s begins as an http:// or https:// URL does (a
// lake's location, say, is a directory otherwise).
func IsHTTP(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// ParseHTTP parses raw as an absolute http:// or https:// URL with a host,
// the one form an upstream, a forwarding target or a node to verify
// against may take; ok is false for anything else. The caller's message
// names raw as RedactURL shows it.
func ParseHTTP(raw string) (u *url.URL, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || !IsHTTP(raw) || u.Host == "" {
		return nil, false
	}
	return u, true
}
