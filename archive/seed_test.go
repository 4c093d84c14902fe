package archive

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fixture"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// The seeded archive: blocks 10, 11 and 13 (12 skipped), history from 10.
//
//	10: alice.near created with keys pk1 (full access) and pk2 (function
//	    call); status.near with the status_message contract and its STATE;
//	    big.near whose storage usage is over the view_state limit.
//	11: alice.near's balance drops to 90 (tx seedTx), pk2 deleted,
//	    status.near's STATX deleted.
//	13: nothing changes.
const (
	seedFirst = 10
	seedHead  = 13
	seedSkip  = 12
)

var (
	seedPK1 = "ed25519:" + near.Base58Encode(make32(1))
	seedPK2 = "ed25519:" + near.Base58Encode(make32(2))
	seedTx  = near.HashOf([]byte("seed-tx")).String()
)

func make32(b byte) []byte {
	out := make([]byte, 32)
	out[31] = b
	return out
}

func seedHash(kind string, n uint64) string {
	return near.HashOf(fmt.Appendf(nil, "seed-%s-%d", kind, n)).String()
}

func statusWasm(t testing.TB) []byte {
	t.Helper()
	return fixture.Read(t, "wasm/status_message.wasm")
}

func accountChange(id string, amount uint64, codeHash string, usage uint64, txHash string) bundle.StateChange {
	return bundle.StateChange{View: near.StateChangeWithCauseView{
		Cause:  near.StateChangeCauseView{Type: "transaction_processing", TxHash: txHash},
		Type:   near.ChangeAccountUpdate,
		Change: near.StateChangeValue{AccountID: id, Account: &near.Account{Amount: near.U128From64(amount), CodeHash: codeHash, StorageUsage: usage}},
	}}
}

func keyChange(id, pk string, key *near.AccessKeyView) bundle.StateChange {
	typ := near.ChangeAccessKeyUpdate
	if key == nil {
		typ = near.ChangeAccessKeyDeletion
	}
	return bundle.StateChange{View: near.StateChangeWithCauseView{
		Cause:  near.StateChangeCauseView{Type: "transaction_processing", TxHash: seedTx},
		Type:   typ,
		Change: near.StateChangeValue{AccountID: id, PublicKey: &pk, AccessKey: key},
	}}
}

func dataChange(id, key string, value []byte) bundle.StateChange {
	k := []byte(key)
	typ := near.ChangeDataUpdate
	var v *[]byte
	if value != nil {
		v = &value
	} else {
		typ = near.ChangeDataDeletion
	}
	return bundle.StateChange{View: near.StateChangeWithCauseView{
		Cause:  near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: seedHash("receipt", 1)},
		Type:   typ,
		Change: near.StateChangeValue{AccountID: id, KeyBase64: &k, ValueBase64: v},
	}}
}

func seedBundle(height uint64, prev uint64, changes []bundle.StateChange) bundle.Bundle {
	prevHeight := prev
	hdr := near.BlockHeaderView{
		Height: height, PrevHeight: &prevHeight, Hash: seedHash("block", height), PrevHash: seedHash("block", prev),
		EpochID: noCodeHash, PrevStateRoot: seedHash("root", height),
		Timestamp: 1_700_000_000_000_000_000 + height*1_000_000_000 + 500_000, GasPrice: near.U128From64(100_000_000 + height),
		LatestProtocolVersion: 73, ChunksIncluded: 1,
	}
	hdr.TimestampNanosec = fmt.Sprint(hdr.Timestamp)
	chunk := near.ChunkView{
		Author:       "validator.near",
		Header:       near.ChunkHeaderView{ChunkHash: seedHash("chunk", height), ShardID: 0, HeightCreated: height, HeightIncluded: height},
		Transactions: []near.SignedTransactionView{},
		Receipts:     []near.ReceiptView{},
	}
	block := near.BlockView{Author: "validator.near", Header: hdr, Chunks: []near.ChunkHeaderView{chunk.Header}}
	b := bundle.Bundle{Block: block, Chunks: []bundle.Chunk{{View: chunk}}, Changes: changes, Effects: []near.StateChangeKindView{}}
	for _, c := range changes {
		b.Effects = append(b.Effects, near.StateChangeKindView{Type: effectOf(c.View.Type), AccountID: c.View.Change.AccountID})
	}
	return b
}

func effectOf(changeType string) string {
	switch changeType {
	case near.ChangeAccessKeyUpdate, near.ChangeAccessKeyDeletion:
		return near.EffectAccessKeyTouched
	case near.ChangeDataUpdate, near.ChangeDataDeletion:
		return near.EffectDataTouched
	case near.ChangeContractCodeUpdate, near.ChangeContractCodeDeletion:
		return near.EffectContractCodeTouched
	}
	return near.EffectAccountTouched
}

// seedStore returns a fresh archive holding the seeded chain.
func seedStore(t testing.TB) *store.Store {
	t.Helper()
	st := storetest.NewStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	code := statusWasm(t)
	codeHash := near.HashOf(code).String()
	state, err := base64.StdEncoding.DecodeString("AQAAAAgAAABib2IubmVhcgUAAABoZWxsbw==")
	require.NoError(t, err)
	allowance := near.U128From64(1000)
	fullKey := &near.AccessKeyView{Nonce: 1}
	callKey := &near.AccessKeyView{Permission: near.AccessKeyPermission{FunctionCall: &near.FunctionCallPermission{
		Allowance: &allowance, ReceiverID: "status.near", MethodNames: []string{"get_status"}}}}

	b10 := seedBundle(10, 9, []bundle.StateChange{
		accountChange("alice.near", 100, noCodeHash, 182, seedTx),
		keyChange("alice.near", seedPK1, fullKey),
		keyChange("alice.near", seedPK2, callKey),
		accountChange("status.near", 50, codeHash, uint64(len(code))+100, seedTx),
		{View: near.StateChangeWithCauseView{
			Cause:  near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: seedHash("receipt", 0)},
			Type:   near.ChangeContractCodeUpdate,
			Change: near.StateChangeValue{AccountID: "status.near", CodeBase64: &code},
		}},
		dataChange("status.near", "STATE", state),
		dataChange("status.near", "STATX", []byte("x")),
		accountChange("big.near", 1, noCodeHash, 60_000, seedTx),
	})
	b10.ProtocolConfig = &bundle.ProtocolConfig{EpochID: noCodeHash, ProtocolVersion: 73,
		JSON: json.RawMessage(`{"chain_id":"nearline-test","protocol_version":73,"runtime_config":{}}`)}
	b11 := seedBundle(11, 10, []bundle.StateChange{
		accountChange("alice.near", 90, noCodeHash, 182, seedTx),
		keyChange("alice.near", seedPK2, nil),
		dataChange("status.near", "STATX", nil),
	})
	b11.TxStatuses = []bundle.TxStatus{{TxHash: seedTx, SignerID: "alice.near", JSON: json.RawMessage(
		`{"final_execution_status":"FINAL","status":{"SuccessValue":""},"transaction":{"hash":"` + seedTx +
			`"},"transaction_outcome":null,"receipts_outcome":[],"receipts":[{"receipt_id":"x"}]}`)}}
	b13 := seedBundle(13, 11, nil)
	b13.Skipped = []uint64{seedSkip}

	_, err = st.Commit(ctx, []bundle.Bundle{b10, b11, b13})
	require.NoError(t, err)
	require.NoError(t, st.PutGenesisConfig(ctx, json.RawMessage(`{"protocol_version":73,"chain_id":"nearline-test","genesis_height":10}`)))
	require.NoError(t, st.SetHistoryStart(ctx, seedFirst, "genesis"))
	return st
}
