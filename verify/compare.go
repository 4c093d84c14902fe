package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/nearline/nearline/near"
)

// Answer is a JSON-RPC response: a result or an error, each kept as served.
type Answer struct {
	Result json.RawMessage
	Error  json.RawMessage
}

// errNotResponse is a body that is not a JSON-RPC response.
var errNotResponse = errors.New("not a JSON-RPC response")

// ParseAnswer reads a response envelope. A body that is not JSON, or has
// neither a result nor an error, is errNotResponse.
func ParseAnswer(body []byte) (Answer, error) {
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Answer{}, fmt.Errorf("%w: %w", errNotResponse, err)
	}
	if isAbsent(env.Result) && isAbsent(env.Error) {
		return Answer{}, fmt.Errorf("%w: neither result nor error in %s", errNotResponse, near.ClipTo(string(body), 200))
	}
	if isAbsent(env.Error) {
		return Answer{Result: env.Result}, nil
	}
	return Answer{Error: env.Error}, nil
}

func isAbsent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// Difference is where two answers first differ: a JSON path ("result",
// "result.header.gas_price", "error.cause.name", "result.chunks[2]") and
// the archive's and the node's values there, as compact JSON ("(absent)"
// for a member or element one side lacks).
type Difference struct {
	Path    string
	Archive string
	Node    string
}

// absent stands for a value one side does not have.
const absent = "(absent)"

// Diff returns the first difference between the archive's and the node's
// answers, or nil when they are identical: two results equal as JSON
// documents, or two errors with equal `name` and `cause`.
func Diff(archive, node Answer) *Difference {
	switch {
	case archive.Error == nil && node.Error == nil:
		return diffJSON("result", archive.Result, node.Result)
	case archive.Error != nil && node.Error != nil:
		return diffJSON("error", errorCore(archive.Error), errorCore(node.Error))
	case archive.Error != nil:
		return &Difference{Path: "", Archive: "error " + compact(archive.Error), Node: "result " + compact(node.Result)}
	default:
		return &Difference{Path: "", Archive: "result " + compact(archive.Result), Node: "error " + compact(node.Error)}
	}
}

// errorCore keeps an error's `name` and `cause`, the members compared; an
// error that is not an object is kept whole.
func errorCore(raw json.RawMessage) json.RawMessage {
	var e map[string]json.RawMessage
	if json.Unmarshal(raw, &e) != nil {
		return raw
	}
	core := map[string]json.RawMessage{}
	for _, k := range []string{"name", "cause"} {
		if v, ok := e[k]; ok {
			core[k] = v
		}
	}
	out, err := json.Marshal(core)
	if err != nil {
		return raw
	}
	return out
}

// diffJSON compares two JSON documents and returns their first difference
// below path, walking members in sorted order.
func diffJSON(path string, a, b json.RawMessage) *Difference {
	va, errA := decode(a)
	vb, errB := decode(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return &Difference{Path: path, Archive: compact(a), Node: compact(b)}
	}
	return diffValues(path, va, vb)
}

func decode(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func diffValues(path string, a, b any) *Difference {
	switch va := a.(type) {
	case map[string]any:
		vb, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(va)+len(vb))
		for k := range va {
			keys = append(keys, k)
		}
		for k := range vb {
			if _, ok := va[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			x, inA := va[k]
			y, inB := vb[k]
			sub := memberPath(path, k)
			switch {
			case !inA:
				return &Difference{Path: sub, Archive: absent, Node: encode(y)}
			case !inB:
				return &Difference{Path: sub, Archive: encode(x), Node: absent}
			}
			if d := diffValues(sub, x, y); d != nil {
				return d
			}
		}
		return nil
	case []any:
		vb, ok := b.([]any)
		if !ok {
			break
		}
		for i := range max(len(va), len(vb)) {
			sub := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(va):
				return &Difference{Path: sub, Archive: absent, Node: encode(vb[i])}
			case i >= len(vb):
				return &Difference{Path: sub, Archive: encode(va[i]), Node: absent}
			}
			if d := diffValues(sub, va[i], vb[i]); d != nil {
				return d
			}
		}
		return nil
	default:
		// Scalars: json.Number and string compare as their text, so 1.0
		// and 1 differ, as served.
		if a == b {
			return nil
		}
	}
	return &Difference{Path: path, Archive: encode(a), Node: encode(b)}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// memberPath appends a member name: .name, or ["odd name"].
func memberPath(path, key string) string {
	if identifier.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// encode writes a decoded value back as compact JSON.
func encode(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(out)
}

// compact is raw JSON without insignificant space (raw itself when it is
// not JSON).
func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// String is the difference on one line: path, archive's value, node's.
func (d *Difference) String() string {
	path := d.Path
	if path == "" {
		path = "answer"
	}
	return fmt.Sprintf("at %s: archive %s, node %s", path, near.ClipTo(d.Archive, 120), near.ClipTo(d.Node, 120))
}
