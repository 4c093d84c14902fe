package near

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Request is a JSON-RPC 2.0 request as NEAR accepts it: `jsonrpc` and `id`
// are optional (id defaults to "dontcare").
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// Response is a JSON-RPC 2.0 response: exactly one of Result and Error.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

// DefaultID is the id NEAR clients send when they do not care.
var defaultID = json.RawMessage(`"dontcare"`)

// DefaultID returns the id used when a request carries none.
func DefaultID() json.RawMessage { return append(json.RawMessage(nil), defaultID...) }

// Finality values.
const (
	FinalityFinal      = "final"
	FinalityNearFinal  = "near-final"
	FinalityOptimistic = "optimistic"
)

// BlockID is a block height or a block hash, as `block_id` gives it.
type BlockID struct {
	Height uint64
	Hash   string
	height bool
}

// HeightID returns a BlockID for a height.
func HeightID(h uint64) BlockID { return BlockID{Height: h, height: true} }

// HashID returns a BlockID for a hash.
func HashID(hash string) BlockID { return BlockID{Hash: hash} }

// IsHeight reports whether the id is a height.
func (b BlockID) IsHeight() bool { return b.height }

// String returns the height in decimal or the hash.
func (b BlockID) String() string {
	if b.height {
		return strconv.FormatUint(b.Height, 10)
	}
	return b.Hash
}

// MarshalJSON encodes a height as a number and a hash as a string.
func (b BlockID) MarshalJSON() ([]byte, error) {
	if b.height {
		return []byte(strconv.FormatUint(b.Height, 10)), nil
	}
	return json.Marshal(b.Hash)
}

// maxHashJSON is the longest JSON string a hash can be written as: its at
// most 44 base58 characters (Base58MaxLen(32)) each escaped as \u00XX,
// and the quotes.
const maxHashJSON = 2 + 6*44

// UnmarshalJSON decodes a uint64 height or a base58 32-byte hash. A string
// too long to be a hash is refused before it is decoded.
func (b *BlockID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > maxHashJSON && data[0] == '"' {
		return fmt.Errorf("invalid block hash %s: %v", ClipTo(string(data), MaxEcho), ErrBase58TooLong)
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if _, err := ParseCryptoHash(s); err != nil {
			return fmt.Errorf("invalid block hash %q: %v", Clip(s), err)
		}
		*b = HashID(s)
		return nil
	}
	h, err := strconv.ParseUint(string(data), 10, 64)
	if err != nil {
		return fmt.Errorf("invalid block height %s: want an integer from 0 to 18446744073709551615 or a block hash", Clip(string(data)))
	}
	*b = HeightID(h)
	return nil
}

// blockIDText is the JSON text of a block_id as a params object holds it,
// cut to maxHashJSON+1 bytes: no height or hash is longer, and BlockID's
// errors repeat only a clipped part of the text, so a longer text fails as
// it would whole, without a copy of all of it.
type blockIDText []byte

// UnmarshalJSON keeps (the start of) data.
func (t *blockIDText) UnmarshalJSON(data []byte) error {
	*t = append((*t)[:0], data[:min(len(data), maxHashJSON+1)]...)
	return nil
}

// BlockReference selects a block: by finality, by block_id, or by sync
// checkpoint ("genesis" or "earliest_available").
type BlockReference struct {
	Finality       string
	BlockID        *BlockID
	SyncCheckpoint string
}

// ParseBlockReference reads `finality`, `block_id` or `sync_checkpoint` from
// a params object. Exactly one must be given.
func ParseBlockReference(params json.RawMessage) (BlockReference, error) {
	var raw struct {
		Finality       *string     `json:"finality"`
		BlockID        blockIDText `json:"block_id"`
		SyncCheckpoint *string     `json:"sync_checkpoint"`
	}
	if err := decodeParams(params, &raw); err != nil {
		return BlockReference{}, err
	}
	var ref BlockReference
	given := 0
	if raw.Finality != nil {
		given++
		switch *raw.Finality {
		case FinalityFinal, FinalityNearFinal, FinalityOptimistic:
			ref.Finality = *raw.Finality
		default:
			return ref, ParseError(fmt.Sprintf("Failed parsing args: unknown variant `%s`, expected one of `optimistic`, `near-final`, `final`", Clip(*raw.Finality)))
		}
	}
	if raw.BlockID != nil && !bytes.Equal(bytes.TrimSpace(raw.BlockID), []byte("null")) {
		given++
		id, perr := parseBlockID(raw.BlockID)
		if perr != nil {
			return ref, perr
		}
		ref.BlockID = id
	}
	if raw.SyncCheckpoint != nil {
		given++
		switch *raw.SyncCheckpoint {
		case "genesis", "earliest_available":
			ref.SyncCheckpoint = *raw.SyncCheckpoint
		default:
			return ref, ParseError(fmt.Sprintf("Failed parsing args: unknown variant `%s`, expected `genesis` or `earliest_available`", Clip(*raw.SyncCheckpoint)))
		}
	}
	switch {
	case given == 0:
		return ref, ParseError("Failed parsing args: expected one of `finality`, `block_id` or `sync_checkpoint`")
	case given > 1:
		return ref, ParseError("Failed parsing args: give one of `finality`, `block_id` or `sync_checkpoint`, not several")
	}
	return ref, nil
}

// decodeParams decodes a params object into v with nearcore's member names
// (UnmarshalExact: exact, case-sensitive), turning any failure into a
// PARSE_ERROR that says what was wrong.
func decodeParams(params json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return ParseError("Failed parsing args: params must be an object")
	}
	if err := UnmarshalExact(trimmed, v); err != nil {
		return ParseError("Failed parsing args: " + describeJSONError(err))
	}
	return nil
}

// DecodeParams is decodeParams for other packages' method params.
func DecodeParams(params json.RawMessage, v any) error { return decodeParams(params, v) }

// describeJSONError words a decoding error for a client, without Go type
// names.
func describeJSONError(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		if e.Field != "" {
			return fmt.Sprintf("invalid type: %s for field `%s`", Clip(e.Value), Clip(e.Field))
		}
		return fmt.Sprintf("invalid type: %s", Clip(e.Value))
	case *json.SyntaxError:
		return fmt.Sprintf("invalid JSON at offset %d", e.Offset)
	}
	return err.Error()
}
