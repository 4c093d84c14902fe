package near

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// docSignedTx is the signed transaction of near/docs' send_tx example
// (testdata/fixtures/rpc/send_tx): a transfer by sender.testnet whose
// hash is that of the tx fixture testnet-6zgh2u-transfer.json.
const (
	docSignedTx     = "DgAAAHNlbmRlci50ZXN0bmV0AOrmAai64SZOv9e/naX4W15pJx0GAap35wTT1T/DwcbbDwAAAAAAAAAQAAAAcmVjZWl2ZXIudGVzdG5ldNMnL7URB1cxPOu3G8jTqlEwlcasagIbKlAJlF5ywVFLAQAAAAMAAACh7czOG8LTAAAAAAAAAGQcOG03xVSFQFjoagOb4NBBqWhERnnz45LY4+52JgZhm1iQKz7qAdPByrGFDQhQ2Mfga8RlbysuQ8D8LlA6bQE="
	docSignedTxHash = "6zgh2u9DqHHiXzdy9ouTP7oGky2T4nugqzqt9wJZwNFm"
)

// signedTx is base64 of a borsh SignedTransaction: tx, then a signature of
// key type keyType (64 bytes of ed25519, 65 of secp256k1, none of them 0
// or 1, as no key type).
func signedTx(tx []byte, keyType byte) string {
	sig := bytes.Repeat([]byte{0xab}, 65)
	if keyType == 1 {
		sig = append(sig, 0xab)
	}
	sig[0] = keyType
	return base64.StdEncoding.EncodeToString(append(append([]byte(nil), tx...), sig...))
}

// borshTx is a transaction's borsh bytes up to its actions: signer, a
// public key of keyType, nonce, receiver, block hash and no actions.
func borshTx(signer string, keyType byte) []byte {
	var b []byte
	str := func(s string) {
		b = append(b, byte(len(s)), 0, 0, 0)
		b = append(b, s...)
	}
	str(signer)
	b = append(b, keyType)
	b = append(b, make([]byte, map[byte]int{0: 32, 1: 64}[keyType])...)
	b = append(b, 7, 0, 0, 0, 0, 0, 0, 0) // nonce
	str("receiver.near")
	b = append(b, make([]byte, 32)...) // block hash
	return append(b, 0, 0, 0, 0)       // no actions
}

func TestParseTxRequestBySignedTransaction(t *testing.T) {
	t.Parallel()
	v0 := borshTx("alice.near", 0)
	v1 := append(append([]byte{1}, borshTx("bob.near", 0)...), 9, 0, 0, 0, 0, 0, 0, 0) // priority fee
	secp := borshTx("carol.near", 1)
	for _, c := range []struct {
		name, params, hash, sender, waitUntil string
	}{
		{"the near/docs example", `{"signed_tx_base64":"` + docSignedTx + `"}`, docSignedTxHash, "sender.testnet", ""},
		{"with wait_until", `{"signed_tx_base64":"` + docSignedTx + `","wait_until":"NONE"}`, docSignedTxHash, "sender.testnet", "NONE"},
		{"positional", `["` + docSignedTx + `"]`, docSignedTxHash, "sender.testnet", ""},
		{"V0 ed25519", `{"signed_tx_base64":"` + signedTx(v0, 0) + `"}`, HashOf(v0).String(), "alice.near", ""},
		{"V1: the hash covers its tag", `{"signed_tx_base64":"` + signedTx(v1, 0) + `"}`, HashOf(v1).String(), "bob.near", ""},
		{"secp256k1", `{"signed_tx_base64":"` + signedTx(secp, 1) + `"}`, HashOf(secp).String(), "carol.near", ""},
	} {
		req, perr := ParseTxRequest(json.RawMessage(c.params))
		require.Nil(t, perr, c.name)
		require.Equal(t, TxRequest{TxHash: c.hash, SenderAccountID: c.sender, WaitUntil: c.waitUntil}, req, c.name)
	}
	for _, c := range []struct{ name, params, want string }{
		{"not base64", `{"signed_tx_base64":"%%%"}`, "Failed to decode transaction: not valid base64"},
		{"empty", `{"signed_tx_base64":""}`, "Failed to decode transaction: too short"},
		{"truncated signer", `["DgAAAHNlbmRlcg=="]`, "Failed to decode transaction: too short"},
		{"invalid signer", `{"signed_tx_base64":"` + signedTx(borshTx("Alice", 0), 0) + `"}`, `Failed to decode transaction: invalid signer id "Alice"`},
		{"unknown key type", `{"signed_tx_base64":"` + signedTx(borshTx("alice.near", 2), 2) + `"}`, "Failed to decode transaction: unknown key type 2"},
		{"signature of another key type", `{"signed_tx_base64":"` + signedTx(v0, 1) + `"}`, "Failed to decode transaction: no ed25519 signature at its end"},
		{"unknown wait_until", `{"signed_tx_base64":"` + docSignedTx + `","wait_until":"SOON"}`, `Failed parsing args: unknown wait_until "SOON"`},
		{"neither form", `{"wait_until":"FINAL"}`, "Failed parsing args: expected `signed_tx_base64`, or `tx_hash` and `sender_account_id`"},
		{"three elements", `["a","b","c"]`, "Failed parsing args: expected [signed_tx_base64] or [tx_hash, sender_account_id]"},
	} {
		_, err := ParseTxRequest(json.RawMessage(c.params))
		perr, ok := errors.AsType[*Error](err)
		require.True(t, ok, "%s: a *Error: %v", c.name, err)
		require.Equal(t, "PARSE_ERROR", perr.CauseName(), c.name)
		require.JSONEq(t, `{"error_message":`+string(mustJSON(c.want))+`}`, string(perr.Cause.Info), c.name)
	}
}
