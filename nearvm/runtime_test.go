package nearvm

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	c := Config{}.withDefaults()
	require.Equal(t, DefaultMaxGas, c.MaxGas)
	require.Equal(t, DefaultCacheSize, c.CacheSize)
	require.Equal(t, DefaultMemoryLimitPages, c.MemoryLimitPages)
	require.Equal(t, DefaultMaxConcurrentCalls, c.MaxConcurrentCalls)
	require.NoError(t, c.validate())

	for _, bad := range []Config{{MemoryLimitPages: 70000}, {CacheSize: -1}, {MaxGas: 1 << 63}, {MaxConcurrentCalls: -1}} {
		_, err := New(context.Background(), bad, nil)
		require.Error(t, err, "%+v", bad)
	}
}

func TestCompileCache(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{CacheSize: 2})
	ctx := context.Background()
	contracts := map[string]*fixture{}
	for _, name := range []string{"status_message", "guestbook_rs", "whitelist"} {
		contracts[name] = loadFixture(t, name)
	}
	call := func(name string) {
		f := contracts[name]
		_, err := r.Call(ctx, f.Code, f.CodeHash, "no_such_method", viewCtx("c.near", nil), nil)
		requireFCE(t, err, `{"MethodResolveError":"MethodNotFound"}`)
	}
	call("status_message")
	call("status_message")
	require.EqualValues(t, 1, r.compiles.Load(), "a warm call does not compile again")
	call("guestbook_rs")
	call("whitelist")
	require.EqualValues(t, 3, r.compiles.Load())
	require.Equal(t, 2, r.cache.len(), "the cache holds CacheSize contracts")
	call("whitelist")
	require.EqualValues(t, 3, r.compiles.Load())
	call("status_message") // evicted as least recently used
	require.EqualValues(t, 4, r.compiles.Load())

	// An empty code hash keys the cache by the code's sha256.
	f := contracts["status_message"]
	_, err := r.Call(ctx, f.Code, "", "get_status", viewCtx("c.near", map[string]string{"account_id": "a.near"}), nil)
	require.NoError(t, err)
	_, err = r.Call(ctx, f.Code, "", "get_status", viewCtx("c.near", map[string]string{"account_id": "a.near"}), nil)
	require.NoError(t, err)
	require.EqualValues(t, 5, r.compiles.Load())
}

func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{CacheSize: 1})
	ctx := context.Background()
	ft := loadFixture(t, "fungible_token")
	st := newMemStorage()
	out, err := r.Call(ctx, ft.Code, ft.CodeHash, "new_default_meta",
		changeCtx("ft.near", "owner.near", map[string]string{"owner_id": "owner.near", "total_supply": "777"}, U128{}), st)
	require.NoError(t, err)
	st.apply(out)
	status := loadFixture(t, "status_message")

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				// Alternate contracts so that the one-entry cache evicts
				// modules other goroutines are still running.
				if (g+i)%2 == 0 {
					out, err := r.Call(ctx, ft.Code, ft.CodeHash, "ft_balance_of", viewCtx("ft.near", map[string]string{"account_id": "owner.near"}), st)
					if err != nil || string(out.ReturnData) != `"777"` {
						errs <- fmt.Errorf("ft_balance_of: %v %q", err, out.ReturnData)
					}
					continue
				}
				out, err := r.Call(ctx, status.Code, status.CodeHash, "get_status", viewCtx("s.near", map[string]string{"account_id": "x.near"}), newMemStorage())
				if err != nil || string(out.ReturnData) != "null" {
					errs <- fmt.Errorf("get_status: %v %q", err, out.ReturnData)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

// TestHistoricalState calls a view at an old state after the state changed:
// each Storage is a snapshot, and the runtime keeps nothing between calls.
func TestHistoricalState(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newTestRuntime(t, Config{}), "fungible_token")
	h.change("new_default_meta", "owner.near", map[string]string{"owner_id": "owner.near", "total_supply": "5000"}, U128{})
	h.change("storage_deposit", "bob.near", map[string]string{"account_id": "bob.near"}, nearAmount(t, "1"))
	old := h.st.clone()
	h.change("ft_transfer", "owner.near", map[string]string{"receiver_id": "bob.near", "amount": "1200"}, U128FromUint64(1))

	viewAt := func(st Storage, account string) string {
		out, err := h.r.Call(context.Background(), h.f.Code, h.f.CodeHash, "ft_balance_of",
			h.ctx(viewCtx(h.account, map[string]string{"account_id": account})), st)
		require.NoError(t, err)
		return string(out.ReturnData)
	}
	require.Equal(t, `"0"`, viewAt(old, "bob.near"))
	require.Equal(t, `"5000"`, viewAt(old, "owner.near"))
	require.Equal(t, `"1200"`, viewAt(h.st, "bob.near"))
	require.Equal(t, `"3800"`, viewAt(h.st, "owner.near"))
	require.Equal(t, `"0"`, viewAt(old, "bob.near"), "the old snapshot still answers as before")
}

type failingStorage struct{}

var errStorageDown = errors.New("storage down")

func (failingStorage) Get(context.Context, []byte) ([]byte, bool, error) {
	return nil, false, errStorageDown
}

func TestStorageErrorIsNotAContractError(t *testing.T) {
	t.Parallel()
	r := newTestRuntime(t, Config{})
	f := loadFixture(t, "status_message")
	out, err := r.Call(context.Background(), f.Code, f.CodeHash, "get_status",
		viewCtx("c.near", map[string]string{"account_id": "a.near"}), failingStorage{})
	require.Nil(t, out)
	require.ErrorIs(t, err, errStorageDown)
	var fce *FunctionCallError
	require.False(t, errors.As(err, &fce))
}
