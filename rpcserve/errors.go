package rpcserve

import (
	"encoding/json"
	"fmt"

	"github.com/nearline/nearline/near"
)

// ForwardError is a Backend's way to say "I cannot answer this; an upstream
// node can" (a height below the archive's start, the validators method).
// The handler forwards the request to Config.Forward when it is set, and
// otherwise answers Reason.
type ForwardError struct {
	Reason *near.Error
}

func (e *ForwardError) Error() string { return "forward upstream: " + e.Reason.Error() }

// Unwrap exposes Reason, so errors.As finds the *near.Error too.
func (e *ForwardError) Unwrap() error { return e.Reason }

// BeforeArchive is the reason a request for a height below the archive's
// first block cannot be answered without an upstream.
func BeforeArchive(height, start uint64) *near.Error {
	return near.HandlerError("UNKNOWN_BLOCK", nil, fmt.Sprintf(
		"Block #%d is before the first block this archive holds (#%d) and no upstream node is configured to forward to", height, start))
}

// NotServed is the error for a method nearcore has that the archive does
// not answer itself, when no upstream is configured to forward it to. It is
// a HANDLER_ERROR with cause NOT_SERVED, never METHOD_NOT_FOUND: the method
// exists, this server just cannot answer it.
func NotServed(method string) *near.Error {
	return near.HandlerError("NOT_SERVED", map[string]string{"method_name": method},
		fmt.Sprintf("Method `%s` is not served by this archive and no upstream node is configured to forward it to", method))
}

// QueryNotServed is NotServed for a `query` request type (and its
// EXPERIMENTAL_view_* method) that the archive does not answer itself.
func QueryNotServed(requestType string) *near.Error {
	return near.HandlerError("NOT_SERVED", map[string]string{"request_type": requestType},
		fmt.Sprintf("Query request type `%s` is not served by this archive and no upstream node is configured to forward it to", requestType))
}

func unauthorized() *near.Error {
	msg := "A valid API key is required: send the request to /<api-key>/..."
	return &near.Error{
		Name:    near.KindRequestValidation,
		Cause:   &near.ErrorCause{Name: "UNAUTHORIZED", Info: mustJSON(map[string]string{"error_message": msg})},
		Code:    near.CodeServerError,
		Message: "Unauthorized",
		Data:    mustJSON(msg),
	}
}

func responseTooLarge(limit int64) *near.Error {
	return near.ParseError(fmt.Sprintf(
		"Response too large: the answers to this batch exceed the limit of %d bytes, so this request was not run; send it in a smaller batch", limit))
}

func shuttingDown() *near.Error {
	return near.InternalError("The server is shutting down; retry shortly, or on another node")
}

func serverBusy() *near.Error {
	return near.InternalError("The server is busy with other requests; retry shortly")
}

func timedOut() *near.Error {
	return near.HandlerError("TIMEOUT_ERROR", nil, "Request timed out")
}

func genericInternal() *near.Error {
	return near.InternalError("The server failed to answer the request; see its logs")
}

func tooManyForwards(limit int) *near.Error {
	return near.InternalError(fmt.Sprintf("The request forwards more than %d calls to the upstream node; send the rest in another request", limit))
}

func upstreamFailed() *near.Error {
	return near.InternalError("The upstream node did not answer the forwarded request")
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("rpcserve: encode error detail: %v", err)) // only maps of strings
	}
	return b
}
