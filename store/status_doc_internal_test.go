package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

const (
	fixtureTx     = `{"signer_id":"alice.near","public_key":"ed25519:1","nonce":7,"receiver_id":"bob.near","actions":["CreateAccount"],"signature":"ed25519:s","hash":"T","future_member":[1]}`
	fixtureStatus = `{"final_execution_status":"FINAL","status":{"SuccessValue":""},"transaction":` + fixtureTx +
		`,"transaction_outcome":{"id":"T"},"receipts_outcome":[{"id":"RA"}],"receipts":[{"receipt_id":"RA"}]}`
)

// partsWith are a batch's parts: block 10's chunk of shard 3, holding
// chunkTx second.
func partsWith(chunkTx string) statusParts {
	p := newStatusParts()
	p.addChunk(10, 3, json.RawMessage(`{"author":"v","header":{},"transactions":[{"hash":"X"},`+chunkTx+`],"receipts":[]}`),
		&near.ChunkView{Transactions: []near.SignedTransactionView{{Hash: "X"}, {Hash: "T"}}})
	return p
}

func expandWith(t *testing.T, p statusParts, stored json.RawMessage, withReceipts bool) json.RawMessage {
	t.Helper()
	got, err := expandStatus(stored, withReceipts, chunkViews(p))
	require.NoError(t, err)
	return got
}

// chunkViews reads the views of the parts' chunks.
func chunkViews(p statusParts) func(chunkKey) (json.RawMessage, error) {
	return func(at chunkKey) (json.RawMessage, error) {
		c, ok := p.chunks[at]
		if !ok {
			return nil, errors.New("no such chunk")
		}
		return c.view, nil
	}
}

func TestCompactStatusKeepsTheTransactionOnceAndExpandsByteForByte(t *testing.T) {
	p := partsWith(fixtureTx)
	stored := json.RawMessage(bytes.Join(p.compact(10, "T", json.RawMessage(fixtureStatus)), nil))
	require.Equal(t, `[{"final_execution_status":"FINAL","status":{"SuccessValue":""},"transaction":0,`+
		`"transaction_outcome":{"id":"T"},"receipts_outcome":[{"id":"RA"}],"receipts":[{"receipt_id":"RA"}]},[10,3,1]]`,
		string(stored))
	require.Equal(t, fixtureStatus, string(expandWith(t, p, stored, true)))
	without, err := jsonobject.Filter(json.RawMessage(fixtureStatus), func(key string) bool { return key != "receipts" })
	require.NoError(t, err)
	require.Equal(t, string(without), string(expandWith(t, p, stored, false)), "tx: the status without its receipts")
	receipts, err := statusReceipts(stored)
	require.NoError(t, err)
	require.Equal(t, []json.RawMessage{json.RawMessage(`{"receipt_id":"RA"}`)}, receipts)
}

func TestStatusIsKeptAsServedUnlessItsTransactionIsFoundByteForByte(t *testing.T) {
	status := json.RawMessage(fixtureStatus)
	// The chunk's copy differs by a space.
	p := partsWith(fixtureTx[:len(fixtureTx)-1] + ` }`)
	require.Equal(t, fixtureStatus, string(bytes.Join(p.compact(10, "T", status), nil)))
	p = partsWith(fixtureTx)
	// Another block, or another hash.
	require.Equal(t, fixtureStatus, string(bytes.Join(p.compact(11, "T", status), nil)))
	require.Equal(t, fixtureStatus, string(bytes.Join(p.compact(10, "U", status), nil)))
	// Not compact JSON: re-encoding it would change it.
	spaced := `{"transaction": ` + fixtureTx + `}`
	require.Equal(t, spaced, string(bytes.Join(p.compact(10, "T", json.RawMessage(spaced)), nil)))
	// Not an object.
	require.Equal(t, "null", string(bytes.Join(p.compact(10, "T", json.RawMessage("null")), nil)))
	// Kept as served, it reads as layout 3 stored it.
	require.Equal(t, fixtureStatus, string(expandWith(t, p, status, true)))
	receipts, err := statusReceipts(status)
	require.NoError(t, err)
	require.Len(t, receipts, 1)
}

func TestCorruptCompactStatusIsAnError(t *testing.T) {
	p := partsWith(fixtureTx)
	load := chunkViews(p)
	for _, stored := range []string{
		`[]`,
		`[{"transaction":0}]`,
		`[{"transaction":0},[10,3]]`,
		`[{"transaction":0},[10,3,9]]`,  // no such transaction
		`[{"transaction":0},[10,3,-1]]`, // nor this
		`[{"transaction":0},[12,3,0]]`,  // no such chunk
		`[{"transaction":0},["a",3,0]]`,
		`[{"transaction":0},[10,3,1]] trailing`,
		`[0,[10,3,1]]`,
	} {
		_, err := expandStatus(json.RawMessage(stored), true, load)
		require.Error(t, err, stored)
	}
}
