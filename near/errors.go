package near

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// JSON-RPC error codes nearcore uses.
const (
	CodeParseError     = -32700
	CodeMethodNotFound = -32601
	CodeServerError    = -32000
)

// Error kinds: the top-level `name` of NEAR's error envelope.
const (
	KindRequestValidation = "REQUEST_VALIDATION_ERROR"
	KindHandler           = "HANDLER_ERROR"
	KindInternal          = "INTERNAL_ERROR"
)

// Error is NEAR's JSON-RPC error object: the structured `name` and `cause`
// that nearcore 1.20+ serves, plus the legacy `code`, `message` and `data`
// that older clients parse.
type Error struct {
	Name    string          `json:"name,omitempty"`
	Cause   *ErrorCause     `json:"cause,omitempty"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ErrorCause names the precise condition and carries its details.
type ErrorCause struct {
	Name string          `json:"name"`
	Info json.RawMessage `json:"info"`
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %s", e.Name, e.Cause.Name, e.Data)
	}
	return fmt.Sprintf("%s: %s", e.Message, e.Data)
}

// CauseName returns the cause's name, or "" when the error has none.
func (e *Error) CauseName() string {
	if e == nil || e.Cause == nil {
		return ""
	}
	return e.Cause.Name
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only ever called with maps and strings built here.
		panic(fmt.Sprintf("near: encode error detail: %v", err))
	}
	return b
}

// Bounds on how much of a client's input an error repeats.
const (
	// MaxEcho is the most bytes of one input value (an id, a key, a method
	// name, a number) that an error text repeats; Clip cuts longer ones.
	MaxEcho = 256
	// MaxParseErrorText is the most bytes of a PARSE_ERROR's text, which
	// appears twice in its envelope (cause info and data). Texts are
	// Nearline's own words around clipped echoes, far below it; it bounds
	// an echo a caller forgot to clip.
	MaxParseErrorText = 4096
)

// Clip is ClipTo(s, MaxEcho): what an error text repeats of a client's
// input.
func Clip(s string) string { return ClipTo(s, MaxEcho) }

// ClipTo returns s when its JSON text is at most limit bytes, and
// otherwise its longest prefix whose JSON text is, cut at a character
// boundary, followed by "…". The JSON text counts escapes as encoding/json
// writes them (a control character, <, > or & takes six bytes), so an echo
// stays within limit bytes of the answer whatever the input holds.
func ClipTo(s string, limit int) string {
	n := 0
	for i, r := range s {
		if n += jsonTextLen(r); n > limit {
			return s[:i] + "…"
		}
	}
	return s
}

// jsonTextLen is the most bytes encoding/json writes for r in a string
// (an invalid byte, decoded as utf8.RuneError, becomes \ufffd).
func jsonTextLen(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
		return 6
	}
	return utf8.RuneLen(r)
}

// newError is the envelope of kind with the cause's name and info (any
// value encoding/json takes), the legacy code and message, and data.
func newError(kind, cause string, info any, code int, message string, data any) *Error {
	return &Error{
		Name:    kind,
		Cause:   &ErrorCause{Name: cause, Info: mustJSON(info)},
		Code:    code,
		Message: message,
		Data:    mustJSON(data),
	}
}

// ParseError is a REQUEST_VALIDATION_ERROR / PARSE_ERROR: the request or its
// params could not be decoded. A message longer than MaxParseErrorText is
// cut.
func ParseError(message string) *Error {
	message = ClipTo(message, MaxParseErrorText)
	return newError(KindRequestValidation, "PARSE_ERROR", map[string]string{"error_message": message},
		CodeParseError, "Parse error", message)
}

// MethodNotFound is a REQUEST_VALIDATION_ERROR / METHOD_NOT_FOUND; a method
// name longer than MaxEcho is clipped.
func MethodNotFound(method string) *Error {
	method = Clip(method)
	return newError(KindRequestValidation, "METHOD_NOT_FOUND", map[string]string{"method_name": method},
		CodeMethodNotFound, "Method not found", method)
}

// InternalError is an INTERNAL_ERROR whose message is safe to show a client.
// Never pass it a Go error's text: log that, and say what failed in words.
func InternalError(message string) *Error {
	return newError(KindInternal, "INTERNAL_ERROR", map[string]string{"error_message": message},
		CodeServerError, "Server error", message)
}

// HandlerError is a HANDLER_ERROR with the given cause name, info object and
// legacy data string.
func HandlerError(cause string, info any, data string) *Error {
	if info == nil {
		info = struct{}{}
	}
	return newError(KindHandler, cause, info, CodeServerError, "Server error", data)
}

// UnknownBlock is the error for a block nobody has: a height the chain
// skipped, one above the head, or an unknown hash. ref is the block_id as the
// client gave it (a height or a hash).
func UnknownBlock(ref BlockID) *Error {
	what := "BLOCK: " + ref.Hash
	if ref.IsHeight() {
		what = fmt.Sprintf("BLOCK HEIGHT: %d", ref.Height)
	}
	return HandlerError("UNKNOWN_BLOCK", nil, "DB Not Found Error: "+what+" \n Cause: Unknown")
}

// NotSyncedYet is the error a node gives before it has any block.
func NotSyncedYet() *Error {
	return HandlerError("NOT_SYNCED_YET", nil, "Node is syncing")
}

// UnknownChunk is the error for a chunk hash nobody has.
func UnknownChunk(chunkHash string) *Error {
	return HandlerError("UNKNOWN_CHUNK", map[string]string{"chunk_hash": chunkHash},
		fmt.Sprintf("Chunk Missing (unavailable on the node): ChunkHash(`%s`) \n Cause: Unknown", chunkHash))
}

// InvalidShardID is the error for a shard id the block does not have.
func InvalidShardID(shardID uint64) *Error {
	return HandlerError("INVALID_SHARD_ID", map[string]uint64{"shard_id": shardID},
		fmt.Sprintf("Shard id %d does not exist", shardID))
}

// IsUnknownBlock reports whether err is NEAR's UNKNOWN_BLOCK.
func IsUnknownBlock(err error) bool {
	var ne *Error
	return errors.As(err, &ne) && ne.CauseName() == "UNKNOWN_BLOCK"
}
