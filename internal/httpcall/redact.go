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
// information (user:password@) and the fragment replaced by REDACTED, so
// that an API key or a password given in the URL appears nowhere:
// https://mainnet.neardata.xyz?apiKey=KEY&x=1 is shown as
// https://mainnet.neardata.xyz?apiKey=REDACTED&x=REDACTED, and
// https://user:pass@host/ as https://REDACTED@host/. A query part without
// "=" (?KEY) is replaced whole. A string that does not parse as a URL is
// redacted the same way by its text (query values after "?", all after
// "#", all before "@" in the host part).
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redactText(raw)
	}
	if u.User != nil {
		u.User = url.User(redactedMark)
	}
	u.RawQuery = redactQuery(u.RawQuery)
	if u.Fragment != "" {
		u.Fragment, u.RawFragment = redactedMark, ""
	}
	return u.String()
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
