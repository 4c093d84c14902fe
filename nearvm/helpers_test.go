package nearvm

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	testfixture "github.com/nearline/nearline/internal/fixture"
)

// fixtureDir holds the compiled contracts and their descriptors.
var fixtureDir = filepath.Join(testfixture.Dir(), "wasm")

// fixture is a compiled contract and its descriptor.
type fixture struct {
	Name     string
	Code     []byte
	CodeHash string   `json:"code_hash_base58"`
	Imports  []string `json:"imports_env"`
	Exports  []string `json:"exports"`
	State    []struct {
		Key   []byte `json:"key_base64"`
		Value []byte `json:"value_base64"`
	} `json:"state"`
	ContractAccountID string `json:"contract_account_id"`
}

func fixtureNames(t testing.TB) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(fixtureDir, "*.wasm"))
	require.NoError(t, err)
	require.Len(t, matches, 10, "expected the ten fixture contracts in %s", fixtureDir)
	names := make([]string, 0, len(matches))
	for _, m := range matches {
		names = append(names, filepath.Base(m[:len(m)-len(".wasm")]))
	}
	sort.Strings(names)
	return names
}

func loadFixture(t testing.TB, name string) *fixture {
	t.Helper()
	code, err := os.ReadFile(filepath.Join(fixtureDir, name+".wasm"))
	require.NoError(t, err)
	desc, err := os.ReadFile(filepath.Join(fixtureDir, name+".json"))
	require.NoError(t, err)
	f := &fixture{Name: name, Code: code}
	require.NoError(t, json.Unmarshal(desc, f))
	return f
}

// memStorage is an in-memory Storage that counts reads.
type memStorage struct {
	mu    sync.Mutex
	data  map[string][]byte
	reads int
}

func newMemStorage() *memStorage { return &memStorage{data: map[string][]byte{}} }

func (m *memStorage) Get(_ context.Context, key []byte) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	v, ok := m.data[string(key)]
	return v, ok, nil
}

// apply writes an outcome's changes, in order.
func (m *memStorage) apply(out *Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range out.Writes {
		if w.Removed {
			delete(m.data, string(w.Key))
			continue
		}
		m.data[string(w.Key)] = w.Value
	}
}

// clone returns an independent snapshot.
func (m *memStorage) clone() *memStorage {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := newMemStorage()
	for k, v := range m.data {
		c.data[k] = v
	}
	return c
}

func newTestRuntime(t testing.TB, cfg Config) *Runtime {
	t.Helper()
	ctx := context.Background()
	r, err := New(ctx, cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close(context.Background())) })
	return r
}

// nearAmount is n NEAR in yoctoNEAR.
func nearAmount(t testing.TB, n string) U128 {
	t.Helper()
	v, err := ParseU128(n + "000000000000000000000000")
	require.NoError(t, err)
	return v
}

// changeCtx is a change-mode call from signer on contract.
func changeCtx(contract, signer string, args any, deposit U128) Context {
	input, _ := json.Marshal(args)
	return Context{
		CurrentAccountID:     contract,
		SignerAccountID:      signer,
		PredecessorAccountID: signer,
		SignerAccountPK:      append([]byte{0}, make([]byte, 32)...),
		Input:                input,
		BlockHeight:          100,
		BlockTimestamp:       1_700_000_000_000_000_000,
		EpochHeight:          10,
		StorageUsage:         1000,
		AccountBalance:       U128FromUint64(0),
		AttachedDeposit:      deposit,
		RandomSeed:           make([]byte, 32),
	}
}

// viewCtx is a view-mode call on contract, as the RPC makes it.
func viewCtx(contract string, args any) Context {
	c := changeCtx(contract, contract, args, U128{})
	c.View = true
	return c
}

// LegacyString is the `error` string of a failed `query` call_function
// result in nearcore 1.x, `wasm execution failed with error:
// HostError(GuestPanic { panic_msg: "boom" })`: the Debug form of the
// VM-side error before it is collapsed, which the tests check through it.
func (e *FunctionCallError) LegacyString() string {
	var inner string
	switch e.Kind {
	case KindLink:
		inner = "LinkError { msg: " + rustQuote(e.Message) + " }"
	case KindMethodResolve:
		inner = "MethodResolveError(" + e.Variant + ")"
	default:
		inner = string(e.Kind) + "(" + e.debug + ")"
	}
	return "wasm execution failed with error: " + inner
}
