package near

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Borsh key types of a public key or a signature, with their data
// lengths: ed25519 keys are 32 bytes and its signatures 64; secp256k1
// keys are 64 bytes and its signatures 65.
var borshKeys = map[byte]struct {
	name           string
	keyLen, sigLen int
}{
	0: {"ed25519", 32, 64},
	1: {"secp256k1", 64, 65},
}

// minTxAfterKey is the fewest bytes a transaction holds after its public
// key: nonce (8), receiver id (4 + at least 2), block hash (32) and the
// count of actions (4).
const minTxAfterKey = 8 + 4 + 2 + 32 + 4

// signedTxID reads the hash and the signer of a transaction given as `tx`'s
// signed_tx_base64: base64 of a borsh SignedTransaction, the transaction
// followed by its signature. A V1 transaction begins with a 1 whose next
// byte is not 0 (nearcore's rule: a V0 begins with the signer id's u32
// length, at most 64); the hash is sha256 of all the transaction's bytes,
// that tag included. The transaction ends where the signature begins: a
// signature has the key type of the transaction's public key (no other
// ever verifies), so its length is known without decoding the actions.
func signedTxID(b64 string) (hash, signer string, perr error) {
	fail := func(format string, args ...any) (string, string, error) {
		return "", "", ParseError("Failed to decode transaction: " + fmt.Sprintf(format, args...))
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fail("not valid base64")
	}
	at := 0
	if len(raw) >= 2 && raw[0] == 1 && raw[1] != 0 {
		at = 1
	}
	if len(raw) < at+4 {
		return fail("too short")
	}
	n := uint64(binary.LittleEndian.Uint32(raw[at:]))
	at += 4
	if n > uint64(len(raw)-at) {
		return fail("too short")
	}
	signer = string(raw[at : at+int(n)])
	if !ValidAccountID(signer) {
		return fail("invalid signer id %q", Clip(signer))
	}
	at += int(n)
	if at >= len(raw) {
		return fail("too short")
	}
	keyType := raw[at]
	key, ok := borshKeys[keyType]
	if !ok {
		return fail("unknown key type %d", keyType)
	}
	txEnd := len(raw) - 1 - key.sigLen
	if txEnd < at+1+key.keyLen+minTxAfterKey || raw[txEnd] != keyType {
		return fail("no %s signature at its end", key.name)
	}
	return HashOf(raw[:txEnd]).String(), signer, nil
}
