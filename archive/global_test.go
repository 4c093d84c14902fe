package archive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/sim"
	"github.com/nearline/nearline/verify"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestArchiveMatchesSimulatorWithGlobalContracts compares the archive with
// a simulated chain at protocol 77, where accounts deploy global contracts
// (by hash and by account id, with redeploys), the code travels shard by
// shard, and accounts use it: at every height, view_account, view_code,
// view_state and call_function on each account that uses global code, and
// view_global_contract_code(_by_account_id) of each identifier, must be
// byte-identical, including the heights where a redeploy has reached some
// shards and not others. The chain carries relayed (Delegate)
// transactions and yields, resumed and timed out (a 20-block yield
// timeout), and the yielding contract's methods called as views are
// refused alike.
func TestArchiveMatchesSimulatorWithGlobalContracts(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Seed: 5, Shards: 3, TxsPerBlock: 10, SkipRate: 0.1, MissingChunkRate: 0.1, MaxHeight: 90, ProtocolVersion: 77,
		YieldTimeout: 20}
	var yieldViews []verify.Request
	for h := uint64(0); h <= cfg.MaxHeight; h += 10 {
		yieldViews = append(yieldViews, verifytest.YieldViews(h)...)
	}
	traffic := []string{`{"Delegate":{`, `"is_promise_yield":true`, `"is_promise_resume":true`, `"data":null,"is_promise_resume":true`,
		"promise_yield_create is not allowed in view calls", "promise_yield_resume is not allowed in view calls"}
	outcomes, _ := compareWithSimulator(t, cfg, extra{requests: yieldViews, carrying: traffic})
	requireOutcomes(t, outcomes, append(verifytest.AnsweredKinds(), verifytest.GlobalKinds()...),
		"query/view_global_contract_code NO_GLOBAL_CONTRACT_CODE", "query/view_global_contract_code_by_account_id NO_GLOBAL_CONTRACT_CODE")
	for _, c := range traffic {
		require.Positive(t, outcomes["carrying "+c], "no answer of the simulator carried %s", c)
	}
}
