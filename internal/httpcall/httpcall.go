// Package httpcall makes one HTTP exchange and reads its response body
// within a bound. It is the one way the JSON-RPC client, the document
// getter, serve's forwarder and verify's node send a request and read
// what comes back; what a status or a body means stays with each caller.
//
// A URL may carry a secret (an API key in its query, a password): the
// errors of this package show it as RedactURL does, and so must every
// log line or message that names an upstream. An API key may go as a
// header instead (Client.Bearer): nothing here logs or shows a request's
// headers.
package httpcall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/nearline/nearline/internal/bufpool"
)

// Client is how one upstream is asked: the HTTP client that sends, the
// API key every request carries as an Authorization: Bearer header
// (none when empty; see CheckBearer), and the bound on a response body.
// Its PostJSON and Get are the one way a request is built, given its key
// and read.
type Client struct {
	HTTP *http.Client
	// Bearer is a secret: nothing here logs or shows it.
	Bearer string
	// Limit bounds a response body: a longer one is TooLarge.
	Limit int64
	// Buffers, when set, holds the buffers bodies of MinSize bytes or
	// more are read into: the caller owns such a Body, and may Put it
	// back once nothing reads it any more.
	Buffers *bufpool.Pool
}

// PostJSON posts body to url as application/json and reads the response
// (see do for what comes back).
func (c Client) PostJSON(ctx context.Context, url string, body []byte) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Response{}, fmt.Errorf("build request: %w", redactError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req)
}

// Get sends a GET of url and reads the response (see do).
func (c Client) Get(ctx context.Context, url string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Response{}, fmt.Errorf("build request: %w", redactError(err))
	}
	return c.do(req)
}

// Response is a response whose body has been read.
type Response struct {
	StatusCode int
	Header     http.Header
	// Body is the body read, at most the limit plus one byte.
	Body []byte
	// TooLarge says the body is longer than the limit; Body is then cut.
	TooLarge bool
}

// do sends req, with the key when there is one, and reads at most Limit
// bytes of the response body (in one buffer when the server announces
// its length, from Buffers when it is set and the body is large), then
// closes it. Its error is the HTTP client's or the
// read's as it came (the URL it names redacted), so that a caller can tell
// a timeout from a refused connection; a body over the limit is not an
// error but TooLarge, so that a caller can weigh the status first (a 429
// says more than its body's size).
func (c Client) do(req *http.Request) (Response, error) {
	if c.Bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.Bearer)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Response{}, redactError(err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, c.Limit+1)
	var buf bytes.Buffer
	switch n := resp.ContentLength; {
	case n > 0 && n <= c.Limit && c.Buffers != nil && n >= bufpool.MinSize:
		buf = *bytes.NewBuffer(c.Buffers.Get(int(n) + bytes.MinRead))
	case n > 0 && n <= c.Limit:
		buf.Grow(int(n) + bytes.MinRead)
	case n < 0 && c.Buffers != nil:
		// Not announced (chunked, or decompressed on the way): its first
		// MinSize bytes are read on their own, so that a small body (an
		// error, a null) keeps no buffer out of the pool, and a larger
		// one goes on in a pooled buffer.
		buf.Grow(bufpool.MinSize + bytes.MinRead)
		if _, err := buf.ReadFrom(io.LimitReader(body, bufpool.MinSize)); err != nil {
			return Response{}, err
		}
		if buf.Len() == bufpool.MinSize {
			buf = *bytes.NewBuffer(append(c.Buffers.Get(2*bufpool.MinSize), buf.Bytes()...))
		}
	}
	if _, err := buf.ReadFrom(body); err != nil {
		return Response{}, err
	}
	return Response{
		StatusCode: resp.StatusCode,
		Header:     resp.Header,
		Body:       buf.Bytes(),
		TooLarge:   int64(buf.Len()) > c.Limit,
	}, nil
}

// RetryAfter is the wait a Retry-After header of whole seconds asks for;
// ok is false when there is none (or it is a date, or negative).
func (r Response) RetryAfter() (wait time.Duration, ok bool) {
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 0 {
		return 0, false
	}
	return time.Duration(secs) * time.Second, true
}
