// Package httpcall makes one HTTP exchange and reads its response body
// within a bound. It is the one way the JSON-RPC client, the document
// getter, serve's forwarder and verify's node send a request and read
// what comes back; what a status or a body means stays with each caller.
//
// A URL may carry a secret (an API key in its query, a password): the
// errors of this package show it as RedactURL does, and so must every
// log line or message that names an upstream. An API key may go as a
// header instead (SetBearer): nothing here logs or shows a request's
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
)

// PostJSON returns a POST of body to url, sent as application/json.
func PostJSON(ctx context.Context, url string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", redactError(err))
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// Get returns a GET of url.
func Get(ctx context.Context, url string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", redactError(err))
	}
	return req, nil
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

// Do sends req through client and reads at most limit bytes of the
// response body (in one allocation when the server announces its length),
// then closes it. Its error is the client's or the read's as it came
// (the URL it names redacted), so that a caller can tell a timeout from a
// refused connection; a body over the limit is not an error but
// TooLarge, so that a caller can weigh the status first (a 429 says more
// than its body's size).
func Do(client *http.Client, req *http.Request, limit int64) (Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, redactError(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit+1)); err != nil {
		return Response{}, err
	}
	return Response{
		StatusCode: resp.StatusCode,
		Header:     resp.Header,
		Body:       buf.Bytes(),
		TooLarge:   int64(buf.Len()) > limit,
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
