package near_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/near"
)

// TestDelegateActionsDecodeAndEncodeAsServed: the recorded localnet chunk
// carries a relayed transaction (one Delegate action) and its receipt;
// both decode into the modelled delegate action and encode back byte for
// byte. A Delegate of another shape stays Other, as it came.
func TestDelegateActionsDecodeAndEncodeAsServed(t *testing.T) {
	t.Parallel()
	var shard struct {
		Chunk struct {
			Transactions []struct {
				Transaction struct {
					Actions []json.RawMessage `json:"actions"`
				} `json:"transaction"`
			} `json:"transactions"`
			Receipts []struct {
				Receipt struct {
					Action struct {
						Actions []json.RawMessage `json:"actions"`
					} `json:"Action"`
				} `json:"receipt"`
			} `json:"receipts"`
		} `json:"chunk"`
	}
	require.NoError(t, json.Unmarshal(fixture.Read(t, "lake/localnet-000000879765-shard_0.json"), &shard))
	raws := []json.RawMessage{shard.Chunk.Transactions[0].Transaction.Actions[0], shard.Chunk.Receipts[0].Receipt.Action.Actions[0]}
	for _, raw := range raws {
		var a near.ActionView
		require.NoError(t, json.Unmarshal(raw, &a))
		require.NotNil(t, a.Delegate, "modelled, not Other")
		require.Nil(t, a.Other)
		require.Equal(t, near.ActionDelegate, a.Kind())
		d := a.Delegate.DelegateAction
		require.Equal(t, "test.near", d.SenderID)
		require.Equal(t, "test.near", d.ReceiverID)
		require.Equal(t, uint64(879546), d.Nonce)
		require.Equal(t, uint64(100), d.MaxBlockHeight)
		require.Equal(t, "ed25519:8Rn4FJeeRYcrLbcrAQNFVgvbZ2FCEQjgydbXwqBwF1ib", d.PublicKey)
		require.Len(t, d.Actions, 1)
		require.NotNil(t, d.Actions[0].AddKey)
		again, err := json.Marshal(a)
		require.NoError(t, err)
		require.JSONEq(t, string(raw), string(again))
		var compact []byte
		compact, err = json.Marshal(json.RawMessage(raw))
		require.NoError(t, err)
		require.Equal(t, string(compact), string(again), "same members in the same order")
	}

	for _, other := range []string{
		`{"Delegate":{"sender_id":"a.near","future":1}}`,
		`{"Delegate":{"delegate_action":{"sender_id":"a.near","receiver_id":"b.near","actions":[],"nonce":1,"max_block_height":2,"public_key":"ed25519:K","v2":true},"signature":"ed25519:S"}}`,
	} {
		var a near.ActionView
		require.NoError(t, json.Unmarshal([]byte(other), &a))
		require.Nil(t, a.Delegate, other)
		require.Equal(t, "Delegate", a.Kind())
		again, err := json.Marshal(a)
		require.NoError(t, err)
		require.Equal(t, other, string(again))
	}
}
