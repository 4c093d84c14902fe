package archive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// indexRange indexes from..to of c's chain on cursor into the archive at
// url, as `nearline index --cursor cursor --from from --to to`.
func (c *partialChain) indexRange(t *testing.T, ctx context.Context, url, cursor string, from, to uint64) *store.Store {
	t.Helper()
	st, err := store.Open(ctx, url, store.Config{MaxConns: 4, Cursor: cursor})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	client, err := near.NewClient(near.ClientConfig{Endpoints: []string{c.upstream.URL}})
	require.NoError(t, err)
	c.run(t, ctx, client, st, from, to)
	return st
}

func errorData(t *testing.T, resp []byte) string {
	t.Helper()
	var env near.Response
	require.NoError(t, json.Unmarshal(resp, &env))
	require.NotNil(t, env.Error, "an error, not %s", resp)
	var data string
	require.NoError(t, json.Unmarshal(env.Error.Data, &data))
	return env.Error.CauseName() + ": " + data
}

// TestSplitArchiveAnswersOnlyWhatItHolds fills an archive's upper range
// first and its lower range after: blocks of either range are answered
// at once; a height between them is UNKNOWN_BLOCK naming the heights not
// indexed yet; state at a height of the upper range is refused, naming
// them, until the lower range reaches it; then every state query is
// answered exactly as by an archive one indexer filled in order.
func TestSplitArchiveAnswersOnlyWhatItHolds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := newPartialChain(t, ctx)
	reqs := c.stateRequests(t)
	one := c.archive(t, c.index(t, ctx, nil), "")

	url := storetest.NewDatabaseURL(t)
	const mid = 26
	c.indexRange(t, ctx, url, "upper", mid, partialHead)
	lower := c.indexRange(t, ctx, url, "lower", c.start, c.start+4)
	low, ok, err := lower.Range(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	split := c.archive(t, lower, "")

	for h := mid; h <= partialHead; h++ {
		body := request("block", map[string]any{"block_id": h})
		require.JSONEq(t, string(post(t, c.simH, body)), string(post(t, split, body)), "block %d", h)
	}
	gap := fmt.Sprintf("heights #%d-#%d, which this archive has not indexed yet", low.Last.Height+1, mid-1)
	require.Contains(t, errorData(t, post(t, split, request("block", map[string]any{"block_id": mid - 1}))), "UNKNOWN_BLOCK: Block #25 is in "+gap)
	require.Contains(t, errorData(t, post(t, split, request("chunk", map[string]any{"block_id": mid - 2, "shard_id": 0}))), "UNKNOWN_BLOCK: Block #24 is in "+gap)
	notDecided := fmt.Sprintf("UNKNOWN_BLOCK: The state at block #33 is not complete in this archive yet: heights #%d-#%d below it are not indexed", low.Last.Height+1, mid-1)
	require.Contains(t, errorData(t, post(t, split, request("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "block_id": 33}))), notDecided)
	require.Contains(t, errorData(t, post(t, split, request("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final"}))), "below it are not indexed")

	// The lower range, asked for more, stops where the upper one starts.
	c.indexRange(t, ctx, url, "lower", c.start, partialHead)
	low, _, err = lower.Range(ctx)
	require.NoError(t, err)
	require.Less(t, low.Last.Height, uint64(mid+2), "the lower range stops at the upper one")
	for _, r := range reqs {
		require.Equal(t, string(post(t, one, r.body)), string(post(t, split, r.body)), r.body)
	}
	t.Logf("%d state queries answered as by one indexer", len(reqs))
}
