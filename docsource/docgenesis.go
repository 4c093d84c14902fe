package docsource

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nearline/nearline/internal/jsonobject"
)

// GenesisConfigFromFile reads a nearcore genesis.json token by token and
// returns its config: every top-level member but `records`, in file order
// (what genesis_config answers, for a Source without an RPC upstream),
// compacted.
// The records, mainnet's many gigabytes, are skipped without being held.
func GenesisConfigFromFile(r io.Reader) (json.RawMessage, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("read genesis config: %w", err)
	}
	if tok != json.Delim('{') {
		return nil, fmt.Errorf("read genesis config: want an object, got %v", tok)
	}
	var members []jsonobject.Member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read genesis config: %w", err)
		}
		key, _ := t.(string)
		if key == "records" {
			if err := skipTokens(dec); err != nil {
				return nil, fmt.Errorf("skip genesis records: %w", err)
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("read genesis config %s: %w", key, err)
		}
		members = append(members, jsonobject.Member{Key: key, Value: v})
	}
	if len(members) == 0 {
		return nil, errors.New("read genesis config: empty")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, jsonobject.Object(members)); err != nil {
		return nil, fmt.Errorf("read genesis config: %w", err)
	}
	return out.Bytes(), nil
}

// skipTokens reads one JSON value of any size token by token.
func skipTokens(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
