package verify

import (
	"encoding/json"
	"fmt"
)

// Request is one JSON-RPC request asked of both the archive and the node.
type Request struct {
	Method string
	Params json.RawMessage
	// Kind names the request in the report: the method, and for `query`
	// and the changes methods the request or changes type
	// ("query/view_account", "EXPERIMENTAL_changes/data_changes").
	Kind string
}

// NewRequest builds a request; params must encode to JSON (maps, slices,
// strings and numbers do).
func NewRequest(method string, params any) Request {
	raw, err := json.Marshal(params)
	if err != nil {
		// Only ever called with values built in this package.
		panic(fmt.Sprintf("verify: encode params of %s: %v", method, err))
	}
	return Request{Method: method, Params: raw, Kind: kindOf(method, raw)}
}

// kindOf is the method, with the request type or changes type of an
// object's params.
func kindOf(method string, params json.RawMessage) string {
	var p struct {
		RequestType string `json:"request_type"`
		ChangesType string `json:"changes_type"`
	}
	if json.Unmarshal(params, &p) != nil {
		return method
	}
	switch {
	case p.RequestType != "":
		return method + "/" + p.RequestType
	case p.ChangesType != "":
		return method + "/" + p.ChangesType
	}
	return method
}

// Body is the request's JSON-RPC envelope.
func (r Request) Body() []byte {
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", "verify", r.Method, r.Params})
	if err != nil {
		panic(fmt.Sprintf("verify: encode request %s: %v", r.Method, err))
	}
	return body
}

// String is the method and its params, for the report.
func (r Request) String() string { return r.Method + " " + string(r.Params) }
