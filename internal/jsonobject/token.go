package jsonobject

import (
	"encoding/json"
	"fmt"
)

// ExpectDelim reads the next token of dec and fails unless it is want.
func ExpectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}
