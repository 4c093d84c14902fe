package verify

import (
	"net/url"
	"strings"
)

// ReadOnlyURL returns the PostgreSQL URL (or keyword/value connection
// string) with default_transaction_read_only set, so that every session
// opened with it refuses to write.
func ReadOnlyURL(databaseURL string) string {
	const param = "default_transaction_read_only"
	if strings.HasPrefix(databaseURL, "postgres://") || strings.HasPrefix(databaseURL, "postgresql://") {
		u, err := url.Parse(databaseURL)
		if err != nil {
			return databaseURL // the store reports it when it parses it
		}
		q := u.Query()
		q.Set(param, "on")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return strings.TrimSpace(databaseURL) + " " + param + "=on"
}
