package verify

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChooseCalls(t *testing.T) {
	t.Parallel()
	ft := []string{"new_default_meta", "new", "ft_transfer", "ft_total_supply", "ft_balance_of", "storage_balance_of", "ft_metadata", "__contract_abi"}
	for _, c := range []struct {
		name    string
		exports []string
		n       int
		want    []string
	}{
		{"view-like first, in export order", ft, 4, []string{"ft_total_supply", "ft_balance_of", "storage_balance_of", "ft_metadata"}},
		{"capped", ft, 2, []string{"ft_total_supply", "ft_balance_of"}},
		{"status message", []string{"metadata", "set_status", "get_status"}, 4, []string{"metadata", "get_status"}},
		{"no view-like: two others", []string{"add_message", "__abi", "withdraw", "ping"}, 4, []string{"add_message", "withdraw"}},
		{"no view-like, cap 1", []string{"add_message", "withdraw"}, 1, []string{"add_message"}},
		{"nothing to call", []string{"__contract_abi"}, 4, nil},
	} {
		views, others := splitExports(c.exports)
		require.Equal(t, c.want, chooseCalls(views, others, c.n), c.name)
	}
}
