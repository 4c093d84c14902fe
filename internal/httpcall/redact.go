package httpcall

import (
	"errors"
	"net/url"
	"strings"
)

// redactedMark stands in for what RedactURL hides.
const redactedMark = "REDACTED"

// RedactURL is how an upstream URL is shown in logs, errors and output:
// scheme, host and path as given, and every query value, the user
// information (user:password@), the fragment and every path segment that
// looks like a key (looksLikeKey: .../v3/9aa3d95b3bc440fa88ea12eaa4456161,
// as Infura, Ankr or GetBlock take one) replaced by REDACTED, so that an
// API key or a password given in the URL appears nowhere:
// https://mainnet.neardata.xyz?apiKey=KEY&x=1 is shown as
// https://mainnet.neardata.xyz?apiKey=REDACTED&x=REDACTED, and
// https://user:pass@host/ as https://REDACTED@host/. A query part without
// "=" (?KEY) is replaced whole. A string that does not parse as a URL is
// redacted the same way by its text (query values after "?", all after
// "#", all before "@" in the host part, key-like path segments). A path
// that is not an http(s) URL's (a lake directory) is shown whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactText(raw)
	}
	if u.User != nil {
		u.User = url.User(redactedMark)
	}
	if IsHTTP(raw) {
		if path := redactPath(u.Path); path != u.Path {
			u.Path, u.RawPath = path, ""
		}
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = redactedMark, ""
	}
	return u.String()
}

// redactPath replaces each segment of path that looksLikeKey.
func redactPath(path string) string {
	segments := strings.Split(path, "/")
	for i, s := range segments {
		if looksLikeKey(s) {
			segments[i] = redactedMark
		}
	}
	return strings.Join(segments, "/")
}

// looksLikeKey reports whether a path segment is an API key as providers
// put them in a path: 20 characters or more of letters, digits, '-' and
// '_', with at least one letter and one digit. The paths Nearline itself
// asks for (/v0/block/151768255, /000151768255/shard_3.json) have none.
func looksLikeKey(segment string) bool {
	if len(segment) < 20 {
		return false
	}
	var letter, digit bool
	for _, c := range segment {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letter = true
		case c != '-' && c != '_':
			return false
		}
	}
	return letter && digit
}

// redactQuery replaces each value of a raw query (each part, when it has
// no "=").
func redactQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		if name, _, ok := strings.Cut(p, "="); ok {
			parts[i] = name + "=" + redactedMark
		} else if p != "" {
			parts[i] = redactedMark
		}
	}
	return strings.Join(parts, "&")
}

// redactText is RedactURL for a string url.Parse refuses.
func redactText(raw string) string {
	tail := ""
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		beforeFragment, fragment, hasFragment := strings.Cut(raw[i:], "#")
		if query, ok := strings.CutPrefix(beforeFragment, "?"); ok {
			tail = "?" + redactQuery(query)
		}
		if hasFragment && fragment != "" {
			tail += "#" + redactedMark
		}
		raw = raw[:i]
	}
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 {
		prefix, rest = raw[:i+3], raw[i+3:]
	}
	host, path := rest, ""
	if i := strings.Index(rest, "/"); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = redactedMark + host[at:]
	}
	if IsHTTP(raw) {
		path = redactPath(path)
	}
	return prefix + host + path + tail
}

// redactError redacts the URL a *url.Error names (which net/http's client
// and url.Parse return, the URL with its query in the message), in place.
func redactError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = RedactURL(ue.URL)
	}
	return err
}
