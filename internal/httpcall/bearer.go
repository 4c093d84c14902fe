package httpcall

import (
	"errors"
	"net/http"
)

// SetBearer sets req's Authorization header to "Bearer token", the header
// form of an API key (FastNEAR's RPC and neardata take it so); an empty
// token sets nothing. It is the one place a request gets its key as a
// header: the token is a secret, shown nowhere (no log line, error or
// output names it).
func SetBearer(req *http.Request, token string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
}

// ErrBadBearer is a token SetBearer cannot send: it holds a character
// other than visible ASCII (a space, a line break, a control character,
// a non-ASCII letter).
var ErrBadBearer = errors.New("an API key may hold only visible ASCII characters (no space, line break or control character)")

// CheckBearer returns ErrBadBearer (which never shows the token) for a
// token that cannot go in an Authorization header; the empty token, which
// sends none, passes.
func CheckBearer(token string) error {
	for i := range len(token) {
		if c := token[i]; c <= ' ' || c > '~' {
			return ErrBadBearer
		}
	}
	return nil
}
