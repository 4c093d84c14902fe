package nearvm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// descriptorView is a view method entry of a fixture descriptor with the
// expectations it records.
type descriptorView struct {
	Name     string          `json:"name"`
	Args     json.RawMessage `json:"args_json"`
	Expected *struct {
		ResultUTF8 *string          `json:"result_utf8"`
		ResultJSON *json.RawMessage `json:"result_json"`
		Logs       []string         `json:"logs"`
		Error      string           `json:"error"`
	} `json:"expected"`
	EmptyState *struct {
		Error string `json:"error"`
	} `json:"expected_on_empty_state"`
	State []struct {
		Key   []byte `json:"key_base64"`
		Value []byte `json:"value_base64"`
	} `json:"state"`
}

// TestDescriptorExpectations runs every view method whose result a fixture
// descriptor records (with the state it records) and every
// expected_on_empty_state panic.
func TestDescriptorExpectations(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	ctx := context.Background()
	checked := 0
	for _, name := range fixtureNames(t) {
		f := loadFixture(t, name)
		var desc struct {
			Views []descriptorView `json:"view_methods"`
		}
		raw, err := os.ReadFile(filepath.Join(fixtureDir, name+".json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &desc))
		account := f.ContractAccountID
		if account == "" {
			account = "contract.near"
		}
		for i, v := range desc.Views {
			args := []byte(v.Args)
			if string(args) == "null" {
				args = nil
			}
			c := viewCtx(account, nil)
			c.Input = args
			if v.EmptyState != nil {
				out, err := r.Call(ctx, f.Code, f.CodeHash, v.Name, c, newMemStorage())
				var fce *FunctionCallError
				require.True(t, errors.As(err, &fce), "%s.%s on empty state: want a contract error, got %v", name, v.Name, err)
				require.Equal(t, v.EmptyState.Error, fce.ExecutionErrorText(), "%s.%s", name, v.Name)
				require.NotNil(t, out)
				checked++
			}
			if v.Expected == nil {
				continue
			}
			st := newMemStorage()
			for _, kv := range f.State {
				st.data[string(kv.Key)] = kv.Value
			}
			for _, kv := range v.State {
				st.data[string(kv.Key)] = kv.Value
			}
			out, err := r.Call(ctx, f.Code, f.CodeHash, v.Name, c, st)
			if v.Expected.Error != "" {
				var fce *FunctionCallError
				require.True(t, errors.As(err, &fce), "%s view %d: %v", name, i, err)
				require.Equal(t, KindMethodResolve, fce.Kind)
				require.Equal(t, "MethodNotFound", fce.Variant)
				checked++
				continue
			}
			require.NoError(t, err, "%s view %d (%s)", name, i, v.Name)
			switch {
			case v.Expected.ResultUTF8 != nil:
				require.Equal(t, *v.Expected.ResultUTF8, string(out.ReturnData), "%s.%s", name, v.Name)
			case v.Expected.ResultJSON != nil:
				require.JSONEq(t, string(*v.Expected.ResultJSON), string(out.ReturnData), "%s.%s", name, v.Name)
			}
			if v.Expected.Logs != nil {
				require.Equal(t, v.Expected.Logs, out.Logs, "%s.%s logs", name, v.Name)
			}
			require.Empty(t, out.Writes)
			require.Positive(t, out.GasUsed)
			checked++
		}
	}
	require.GreaterOrEqual(t, checked, 30, "descriptor expectations checked")
}
