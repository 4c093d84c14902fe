package nearvm

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkWarmCall is a view of ft_balance_of on the fungible token with an
// in-memory Storage, the contract already compiled.
func BenchmarkWarmCall(b *testing.B) {
	r, err := New(context.Background(), Config{}, nil)
	require.NoError(b, err)
	defer func() { require.NoError(b, r.Close(context.Background())) }()
	f := loadFixture(b, "fungible_token")
	st := newMemStorage()
	c := changeCtx("ft.near", "owner.near", map[string]string{"owner_id": "owner.near", "total_supply": "1000000"}, U128{})
	out, err := r.Call(context.Background(), f.Code, f.CodeHash, "new_default_meta", c, st)
	require.NoError(b, err)
	st.apply(out)

	view := viewCtx("ft.near", map[string]string{"account_id": "owner.near"})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out, err := r.Call(ctx, f.Code, f.CodeHash, "ft_balance_of", view, st)
		if err != nil || string(out.ReturnData) != `"1000000"` {
			b.Fatalf("ft_balance_of: %v %q", err, out.ReturnData)
		}
	}
}
