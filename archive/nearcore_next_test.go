package archive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/sim"
)

// TestArchiveServesANewerNearcoreAsItCame indexes, from its genesis, a
// chain whose node answers like a newer nearcore (sim's NearcoreNext:
// members Nearline does not model in accounts, access keys, chunk headers,
// transactions, outcomes and action receipts, in every answer and in
// genesis.json, and an action kind it does not model): every answer of the
// plan is the same bytes from the archive as from the simulator, and
// answers carrying each of the new members are among them, so a
// comparison of nothing new cannot pass.
func TestArchiveServesANewerNearcoreAsItCame(t *testing.T) {
	t.Parallel()
	members := []string{`"next_account_field"`, `"gas_key_info"`, `"proposed_split"`, `"nonce_index"`,
		`"compute_usage"`, `"refund_to"`, `"TransferToGasKey"`}
	outcomes, _ := compareWithSimulator(t, sim.Config{NearcoreNext: true, Seed: 5, Shards: 4, TxsPerBlock: 8, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: 40},
		extra{carrying: members})
	for _, m := range members {
		require.Positive(t, outcomes["carrying "+m], "no answer of the simulator carried %s", m)
	}
}
