package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

func receiptTo(id, receiver string, actions ...near.ActionView) near.ReceiptView {
	return near.ReceiptView{PredecessorID: storetest.Alice, ReceiverID: receiver, ReceiptID: id,
		Receipt: near.ReceiptEnumView{Action: &near.ActionReceiptView{SignerID: storetest.Alice, SignerPublicKey: storetest.AliceKey,
			GasPrice: near.U128From64(1), OutputDataReceivers: []near.DataReceiverView{}, InputDataIDs: []string{}, Actions: actions}}}
}

func changeBy(receipt, typ string, v near.StateChangeValue) bundle.StateChange {
	view := near.StateChangeWithCauseView{Cause: near.StateChangeCauseView{Type: "receipt_processing", ReceiptHash: receipt}, Type: typ, Change: v}
	raw, _ := json.Marshal(view)
	return bundle.StateChange{View: view, JSON: raw}
}

func requireBase(t *testing.T, s *store.Store, id string, height uint64, source string) {
	t.Helper()
	h, src, err := s.AccountBase(context.Background(), id)
	require.NoError(t, err, id)
	require.Equal(t, height, h, id)
	require.Equal(t, source, src, id)
}

func requireNoBase(t *testing.T, s *store.Store, id string) {
	t.Helper()
	_, _, err := s.AccountBase(context.Background(), id)
	require.ErrorIs(t, err, store.ErrNotFound, id)
}

// TestAccountBases: Commit records creation (CreateAccount, implicit
// creation by a transfer that adds a key) and deletion bases, never a base
// for an update of an existing account; snapshots record theirs; the
// earliest base wins.
func TestAccountBases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	implicit, refunded := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	transfer := near.ActionView{Transfer: &near.TransferAction{Deposit: near.U128From64(5)}}
	s, c := storetest.NewChainStore(t, storetest.ChainConfig{Start: 1, End: 4, Edit: func(b *bundle.Bundle) {
		if b.Height() != 3 {
			return
		}
		rs := &b.Chunks[0].View.Receipts
		*rs = append(*rs,
			receiptTo("r-new", "new.near", near.ActionView{CreateAccount: true}, transfer),
			receiptTo("r-old", "old.near", transfer),
			receiptTo("r-implicit", implicit, transfer),
			receiptTo("r-gone", "gone.near", near.ActionView{DeleteAccount: &near.DeleteAccountAction{BeneficiaryID: storetest.Alice}}),
			receiptTo("r-named", "named.near", transfer))
		refund := receiptTo("r-refund", refunded, transfer)
		refund.PredecessorID = "system"
		*rs = append(*rs, refund)
		pk := "ed25519:" + near.Base58Encode(make([]byte, 32))
		acc := &near.Account{Amount: near.U128From64(5), CodeHash: "11111111111111111111111111111111", StorageUsage: 100}
		b.Changes = append(b.Changes,
			changeBy("r-new", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "new.near", Account: acc}),
			changeBy("r-old", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "old.near", Account: acc}),
			changeBy("r-implicit", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: implicit, Account: acc}),
			changeBy("r-implicit", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: implicit, PublicKey: &pk, AccessKey: &near.AccessKeyView{}}),
			changeBy("r-gone", near.ChangeAccountDeletion, near.StateChangeValue{AccountID: "gone.near"}),
			// A gas refund returning allowance to a function-call key, and a
			// named account's key written by a transfer: no creation.
			changeBy("r-refund", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: refunded, Account: acc}),
			changeBy("r-refund", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: refunded, PublicKey: &pk, AccessKey: &near.AccessKeyView{}}),
			changeBy("r-named", near.ChangeAccountUpdate, near.StateChangeValue{AccountID: "named.near", Account: acc}),
			changeBy("r-named", near.ChangeAccessKeyUpdate, near.StateChangeValue{AccountID: "named.near", PublicKey: &pk, AccessKey: &near.AccessKeyView{}}))
	}})

	requireBase(t, s, "new.near", 3, "creation")
	requireBase(t, s, implicit, 3, "creation")
	requireBase(t, s, "gone.near", 3, "deletion")
	for _, id := range []string{"old.near", refunded, "named.near", storetest.Alice, storetest.Bob, storetest.Contract} {
		requireNoBase(t, s, id)
	}

	// The bases are derived from the stored rows alone: derived again from
	// them (as migration 00002 did for archives of layout 1, whose schema
	// it was written for), they are the same.
	_, err := s.Pool().Exec(ctx, "DELETE FROM account_bases")
	require.NoError(t, err)
	_, err = s.Pool().Exec(ctx, store.RecordBasesSQL, 0, 1_000_000)
	require.NoError(t, err)
	requireBase(t, s, "new.near", 3, "creation")
	requireBase(t, s, implicit, 3, "creation")
	requireBase(t, s, "gone.near", 3, "deletion")
	require.Equal(t, 3, count(t, s, "account_bases"))

	// Re-committing the same heights changes nothing.
	commitRange(t, s, c, 2, 4, 1)
	requireBase(t, s, "new.near", 3, "creation")

	// A snapshot records a base (also for an account that did not exist);
	// the earliest base wins.
	require.NoError(t, s.PutAccountSnapshot(ctx, 2, "old.near", nil))
	require.NoError(t, s.PutAccountSnapshot(ctx, 4, "old.near", nil))
	requireBase(t, s, "old.near", 2, "snapshot")
	require.NoError(t, s.PutAccountSnapshot(ctx, 1, "new.near", nil))
	requireBase(t, s, "new.near", 1, "snapshot")

	// A deleted account reads as ErrDeleted, an unknown one not.
	_, err = s.AccountAt(ctx, "gone.near", 3)
	require.ErrorIs(t, err, store.ErrDeleted)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.AccountAt(ctx, "nobody.near", 3)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.NotErrorIs(t, err, store.ErrDeleted)
}
