package httpcall

import "errors"

// ErrBadBearer is a token Client cannot send: it holds a character
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
