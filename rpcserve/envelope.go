package rpcserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// call is one decoded JSON-RPC request.
type call struct {
	method string
	params json.RawMessage
	id     json.RawMessage
	raw    []byte // the request object as received, forwarded as is when complete
	whole  bool   // raw carries jsonrpc, id and method itself
	// outcome is set to how the call ended, for the metrics: "ok",
	// "forwarded" or the error's cause name.
	outcome *string
}

func (c call) setOutcome(o string) {
	if c.outcome != nil {
		*c.outcome = o
	}
}

func causeOf(e *near.Error) string {
	if name := e.CauseName(); name != "" {
		return name
	}
	return e.Name
}

var nullID = json.RawMessage("null")

// handleBody answers a request body: one request or a batch. Members are
// read as nearcore's serde reads them: names exactly (case-sensitive), and
// a body that is not valid UTF-8 is not valid JSON. A batch's answers take
// room in the body memory res holds from.
func (h *handler) handleBody(ctx context.Context, body []byte, pathMethod string, res *reservation) []byte {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		if pathMethod == "" {
			return h.errorResponse(nil, near.ParseError("Empty request body: expected a JSON-RPC request object or a batch"))
		}
		trimmed = []byte("{}")
	}
	if !utf8.Valid(trimmed) {
		return h.errorResponse(nil, near.ParseError("Invalid JSON: the request is not valid UTF-8"))
	}
	if pathMethod != "" && trimmed[0] != '{' && trimmed[0] != '[' && json.Valid(trimmed) {
		return h.errorResponse(nil, near.ParseError(fmt.Sprintf(
			"Invalid request: expected the params of %q (an object or an array) or a JSON-RPC request object", near.Clip(pathMethod))))
	}
	if trimmed[0] != '[' {
		return h.handleOne(ctx, trimmed, pathMethod)
	}
	scanned, err := scanBatch(trimmed, h.cfg.MaxBatch, pathMethod)
	if err != nil {
		return h.errorResponse(nil, near.ParseError("Invalid JSON: "+describeSyntax(trimmed)))
	}
	if pathMethod != "" && !scanned.hasObject {
		// No batch item can be anything but an object, so with the
		// method in the path an array without one is its positional
		// params (`POST /gas_price` with `[null]`).
		return h.call(ctx, call{method: pathMethod, params: trimmed, id: near.DefaultID()})
	}
	items := scanned.items
	switch {
	case len(items) == 0:
		return h.errorResponse(nil, near.ParseError("Empty batch: send at least one request"))
	case scanned.over:
		return h.errorResponse(nil, near.ParseError(fmt.Sprintf("Batch exceeds the limit of %d requests", h.cfg.MaxBatch)))
	}
	var out bytes.Buffer
	out.WriteByte('[')
	answered, refused, unheld := 0, 0, 0
	for i, item := range items {
		if i > 0 {
			out.WriteByte(',')
		}
		switch {
		case int64(answered) > h.cfg.MaxResponseBytes:
			refused++
			out.Write(h.errorResponse(itemID(item), responseTooLarge(h.cfg.MaxResponseBytes)))
			continue
		case unheld > 0:
			unheld++
			out.Write(h.errorResponse(itemID(item), serverBusy()))
			continue
		}
		answer := h.handleOne(ctx, item, pathMethod)
		// The first answer is kept whatever its size, as MaxResponseBytes
		// never refuses one answer for its own size.
		if !res.grow(int64(len(answer))) && answered > 0 {
			unheld++
			out.Write(h.errorResponse(itemID(item), serverBusy()))
			continue
		}
		answered += len(answer)
		out.Write(answer)
	}
	out.WriteByte(']')
	if refused > 0 {
		h.logger.Warn("rpc batch answers exceed the response limit; refused the rest",
			"max_response_bytes", h.cfg.MaxResponseBytes, "answered_bytes", answered, "refused", refused, "batch", len(items))
	}
	if unheld > 0 {
		h.logger.Warn("rpc batch answers found no room in the body memory; refused the rest",
			"max_body_memory", h.cfg.MaxBodyMemory, "answered_bytes", answered, "refused", unheld, "batch", len(items))
	}
	return out.Bytes()
}

// envelope is a request object's members, each the JSON text of its value
// (a slice of the request), nil when absent, and the name of its first
// member that is none of them ("" when it has none).
type envelope struct {
	jsonrpc, id, method, params json.RawMessage
	other                       string
}

// bare reports whether the object has none of the envelope's members: with
// the method in the path, it is the method's params themselves.
func (e envelope) bare() bool {
	return e.jsonrpc == nil && e.id == nil && e.method == nil && e.params == nil
}

// firstMember names the first of the envelope members the object has.
func (e envelope) firstMember() string {
	for _, m := range []struct {
		name  string
		value json.RawMessage
	}{{"jsonrpc", e.jsonrpc}, {"id", e.id}, {"method", e.method}, {"params", e.params}} {
		if m.value != nil {
			return m.name
		}
	}
	return ""
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// decodeEnvelope reads a request object. Only the exact names jsonrpc, id,
// method and params count (serde's, case-sensitive: "METHOD" is another
// member, ignored); a repeated one is an error, as serde's derived
// Deserialize refuses a duplicate field. Other members are ignored.
func decodeEnvelope(raw []byte) (envelope, *near.Error) {
	var env envelope
	err := jsonobject.Each(raw, func(name string, value json.RawMessage) error {
		var slot *json.RawMessage
		switch name {
		case "jsonrpc":
			slot = &env.jsonrpc
		case "id":
			slot = &env.id
		case "method":
			slot = &env.method
		case "params":
			slot = &env.params
		default:
			if env.other == "" {
				env.other = name
			}
			return nil
		}
		if *slot != nil {
			return errDuplicate{name}
		}
		*slot = value
		return nil
	})
	var dup errDuplicate
	switch {
	case errors.As(err, &dup):
		return env, near.ParseError("Invalid request: duplicate field `" + dup.name + "`")
	case err != nil:
		return env, near.ParseError("Invalid JSON: " + describeSyntax(raw))
	}
	return env, nil
}

type errDuplicate struct{ name string }

func (e errDuplicate) Error() string { return "duplicate field " + e.name }

// itemID is the id a batch item's answer carries when the item is not run:
// its id, "dontcare" when it has none, null when it is no request object.
func itemID(raw []byte) json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	env, perr := decodeEnvelope(raw)
	switch {
	case perr != nil:
		return nil
	case env.id == nil:
		return near.DefaultID()
	}
	return env.id
}

// handleOne decodes one request object and answers it.
func (h *handler) handleOne(ctx context.Context, raw []byte, pathMethod string) []byte {
	if len(raw) == 0 || raw[0] != '{' {
		if !json.Valid(raw) {
			return h.errorResponse(nil, near.ParseError("Invalid JSON: the request is not valid JSON"))
		}
		return h.errorResponse(nil, near.ParseError("Invalid request: expected a JSON-RPC request object"))
	}
	req, perr := decodeEnvelope(raw)
	if perr != nil {
		return h.errorResponse(nil, perr)
	}
	if pathMethod != "" && req.bare() {
		// `POST /block` with `{"finality": "final"}`, or `{}`.
		return h.call(ctx, call{method: pathMethod, params: raw, id: near.DefaultID()})
	}
	c := call{params: req.params, id: req.id, raw: raw}
	if c.id == nil {
		c.id = near.DefaultID()
	}
	if req.jsonrpc != nil {
		var version string
		if json.Unmarshal(req.jsonrpc, &version) != nil || version != "2.0" {
			return h.errorResponse(c.id, near.ParseError(`Invalid request: "jsonrpc" must be "2.0"`))
		}
	}
	if req.method != nil {
		if json.Unmarshal(req.method, &c.method) != nil {
			return h.errorResponse(c.id, near.ParseError(`Invalid request: "method" must be a string`))
		}
	}
	switch {
	case pathMethod == "":
	case req.params == nil && req.other != "":
		// Neither form: the params are not under "params", and the
		// object is not the params alone.
		return h.errorResponse(c.id, near.ParseError(fmt.Sprintf(
			"Invalid request: with the method in the path, send the params alone or under \"params\" in a JSON-RPC request object, not beside its members (%q beside %q)",
			req.firstMember(), near.Clip(req.other))))
	case c.method == "":
		c.method = pathMethod
	case c.method != pathMethod:
		return h.errorResponse(c.id, near.ParseError(fmt.Sprintf(
			"Invalid request: method %q in the body differs from method %q in the path", near.Clip(c.method), near.Clip(pathMethod))))
	}
	if c.method == "" {
		return h.errorResponse(c.id, near.ParseError(`Invalid request: missing field "method"`))
	}
	c.whole = req.jsonrpc != nil && req.id != nil && req.method != nil
	return h.call(ctx, c)
}

// call runs one method and encodes its response; it never panics.
func (h *handler) call(ctx context.Context, c call) (resp []byte) {
	start := time.Now()
	outcome := "ok"
	c.outcome = &outcome
	m, known := h.methods[c.method]
	defer func() {
		took := time.Since(start)
		h.cfg.Metrics.observe(c.method, outcome, known || isUpstreamMethod(c.method), took)
		h.logger.Debug("rpc request", "method", c.method, "outcome", outcome, "elapsed", took, "response_bytes", len(resp))
	}()
	defer func() {
		if p := recover(); p != nil {
			h.logger.Error("rpc method panicked", "method", c.method, "panic", p, "stack", string(debug.Stack()))
			outcome = near.KindInternal
			resp = h.errorResponse(c.id, genericInternal())
		}
	}()
	if !known {
		if !isUpstreamMethod(c.method) {
			outcome = "METHOD_NOT_FOUND"
			return h.errorResponse(c.id, near.MethodNotFound(c.method))
		}
		m = upstreamMethod(c.method)
	}
	if longList(c.params, h.cfg.MaxListItems) {
		return h.fail(ctx, c, listTooLong(h.cfg.MaxListItems))
	}
	result, err := m(ctx, h.backend, c.params)
	if err != nil {
		return h.fail(ctx, c, err)
	}
	var buf bytes.Buffer
	if raw, ok := result.(json.RawMessage); ok {
		buf.Grow(len(raw) + len(c.id) + 40)
	}
	buf.WriteString(`{"jsonrpc":"2.0","result":`)
	if err := resultInto(&buf, result); err != nil {
		return h.fail(ctx, c, fmt.Errorf("encode %s result: %w", c.method, err))
	}
	// The envelope around the result is written here rather than by
	// encodeResponse: encoding near.Response would validate and compact
	// the (already compact) result a second time, which for stored block
	// and chunk views was a sixth of the server's CPU.
	end := buf.Len()
	buf.WriteString(`,"id":`)
	if len(c.id) == 0 {
		buf.WriteString("null")
	} else if err := compactInto(&buf, c.id); err != nil {
		result := buf.Bytes()[len(`{"jsonrpc":"2.0","result":`):end]
		return h.encodeResponse(near.Response{JSONRPC: "2.0", Result: result, ID: c.id})
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// fail turns a method's error into its response: forwarded, a NEAR error
// as is, or a logged generic INTERNAL_ERROR.
func (h *handler) fail(ctx context.Context, c call, err error) []byte {
	var fwd *ForwardError
	if errors.As(err, &fwd) && fwd.Reason != nil {
		return h.forwardOr(ctx, c, fwd.Reason)
	}
	var nerr *near.Error
	if errors.As(err, &nerr) && nerr != nil {
		c.setOutcome(causeOf(nerr))
		return h.errorResponse(c.id, nerr)
	}
	if errors.Is(err, context.DeadlineExceeded) || (ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		h.logger.Warn("rpc method timed out", "method", c.method, "timeout", h.cfg.RequestTimeout)
		c.setOutcome("TIMEOUT_ERROR")
		return h.errorResponse(c.id, timedOut())
	}
	c.setOutcome(near.KindInternal)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		h.logger.Debug("rpc request canceled by the client", "method", c.method)
		return h.errorResponse(c.id, genericInternal())
	}
	h.logger.Error("rpc method failed", "method", c.method, "err", err)
	return h.errorResponse(c.id, genericInternal())
}

// forwardOr forwards c upstream when an upstream is configured, else
// answers reason.
func (h *handler) forwardOr(ctx context.Context, c call, reason *near.Error) []byte {
	if h.forward == nil {
		c.setOutcome(causeOf(reason))
		return h.errorResponse(c.id, reason)
	}
	body := c.raw
	if !c.whole || body == nil {
		req := near.Request{JSONRPC: "2.0", ID: c.id, Method: c.method, Params: c.params}
		if req.Params == nil {
			req.Params = json.RawMessage("[]")
		}
		var buf bytes.Buffer
		if err := encodeInto(&buf, req); err != nil {
			h.logger.Error("encode forwarded request", "method", c.method, "err", err)
			return h.errorResponse(c.id, genericInternal())
		}
		body = buf.Bytes()
	}
	if !takeForward(ctx, h.cfg.MaxForwards) {
		c.setOutcome("FORWARD_LIMIT")
		return h.errorResponse(c.id, tooManyForwards(h.cfg.MaxForwards))
	}
	release, ok := h.forward.acquire(ctx)
	if !ok {
		h.logger.Warn("rpc request not forwarded: too many forwarded requests in flight", "method", c.method, "max_forwards", h.cfg.MaxForwards)
		c.setOutcome(near.KindInternal)
		return h.errorResponse(c.id, serverBusy())
	}
	resp, err := h.forward.do(ctx, body)
	release()
	if err != nil {
		h.logger.Warn("forward request upstream", "method", c.method, "err", err)
		c.setOutcome("UPSTREAM_FAILED")
		return h.errorResponse(c.id, upstreamFailed())
	}
	c.setOutcome("forwarded")
	return resp
}

// errorResponse encodes an error envelope; a nil id becomes null.
func (h *handler) errorResponse(id json.RawMessage, e *near.Error) []byte {
	if id == nil {
		id = nullID
	}
	return h.encodeResponse(near.Response{JSONRPC: "2.0", Error: e, ID: id})
}

func (h *handler) encodeResponse(r near.Response) []byte {
	var buf bytes.Buffer
	if err := encodeInto(&buf, r); err != nil {
		// Only an id that is not valid JSON could get here, and ids come
		// from a decoded request.
		h.logger.Error("encode rpc response", "err", err)
		return []byte(`{"jsonrpc":"2.0","error":{"name":"INTERNAL_ERROR","cause":{"name":"INTERNAL_ERROR","info":{"error_message":"encode response"}},"code":-32000,"message":"Server error","data":"encode response"},"id":null}`)
	}
	return buf.Bytes()
}

// encodeInto writes v as compact JSON without HTML escaping (as nearcore's
// serde_json does) and without a trailing newline.
func encodeInto(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1)
	return nil
}

// resultInto writes a method's result as encodeInto does. A stored view
// (json.RawMessage) that is already compact and valid, as the archive
// keeps its views, is copied as it is after one scan (jsonobject's strict
// compact scan, ~5× encoding/json's validating compaction on a mainnet
// block's document: BenchmarkResultInto); anything else is encoded.
func resultInto(buf *bytes.Buffer, result any) error {
	if raw, ok := result.(json.RawMessage); ok {
		if end, err := jsonobject.SkipValue(raw, 0); err == nil && jsonobject.Trailing(raw, end) == nil {
			buf.Write(raw)
			return nil
		}
	}
	return encodeInto(buf, result)
}

// compactInto writes raw JSON compacted, failing on invalid JSON.
func compactInto(buf *bytes.Buffer, raw json.RawMessage) error {
	return json.Compact(buf, raw)
}

// describeSyntax says where raw, which is not valid JSON, goes wrong.
func describeSyntax(raw []byte) string {
	var syn *json.SyntaxError
	if err := json.Unmarshal(raw, new(struct{})); errors.As(err, &syn) {
		return fmt.Sprintf("%s at offset %d", strings.TrimPrefix(syn.Error(), "json: "), syn.Offset)
	}
	return "the request is not valid JSON"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
