package store

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// TestAccountExtraTakesTheChangeEncodingJSONWould: accountExtra reads the
// member encoding/json decodes as `change` (names folded, the last of
// several), and fails where it fails.
func TestAccountExtraTakesTheChangeEncodingJSONWould(t *testing.T) {
	t.Parallel()
	reference := func(raw json.RawMessage) (*string, error) {
		var c struct {
			Change json.RawMessage `json:"change"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		extra, err := jsonobject.Filter(c.Change, func(key string) bool {
			return key != "account_id" && !near.IsAccountField(key)
		})
		if err != nil {
			return nil, err
		}
		return jsonOrNull(extra), nil
	}
	for _, raw := range []string{
		`{"cause":{"type":"transaction_processing","tx_hash":"T"},"type":"account_update","change":{"account_id":"a.near","amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":182,"storage_paid_at":0,"future":[1]}}`,
		`{"change":{"account_id":"a.near","amount":"1"}}`,
		`{"Change":{"x":1},"CHANGE":{"y":2}}`,
		`{"change":{"x":1},"change":{"y":2}}`,
		`{"ſhange":{"x":1}}`,
		`{ "change" : { "account_id" : "a.near" , "z" : null } }`,
		`{"change":null}`, `{}`, `[]`, `null`, `{"change":{"x":1}`, `{"change":[1]}`,
	} {
		want, wantErr := reference(json.RawMessage(raw))
		got, err := accountExtra(json.RawMessage(raw))
		require.Equal(t, wantErr == nil, err == nil, "%s: %v, encoding/json's %v", raw, err, wantErr)
		require.Equal(t, want, got, raw)
	}
}
