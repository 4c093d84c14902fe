package httpcall

import (
	"net"
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

// InClear reports whether a request to raw would carry a secret across
// the network unencrypted: raw is an http:// URL to a host other than the
// loopback (localhost, 127.0.0.0/8, ::1), and it has what RedactURL
// hides and a request sends (user information, a query, a key-like path
// segment), or bearer says a key goes as a header.
func InClear(raw string, bearer bool) bool {
	u, ok := ParseHTTP(raw)
	if !ok || u.Scheme != "http" || isLoopback(u.Hostname()) {
		return false
	}
	return bearer || u.User != nil || u.RawQuery != "" || redactPath(u.Path) != u.Path
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
