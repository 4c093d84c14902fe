package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/nearline/nearline/near"
)

func u128(n pgtype.Numeric) (near.U128, error) {
	if !n.Valid || n.Int == nil {
		return near.U128{}, fmt.Errorf("null amount")
	}
	v := new(big.Int).Set(n.Int)
	for i := int32(0); i < n.Exp; i++ {
		v.Mul(v, big.NewInt(10))
	}
	return near.ParseU128(v.String())
}

func uint64Of(n pgtype.Numeric) (uint64, error) {
	v, err := u128(n)
	if err != nil {
		return 0, err
	}
	if v.Hi != 0 {
		return 0, fmt.Errorf("%s exceeds u64", v)
	}
	return v.Lo, nil
}

// The reads of one account's state name it by its number ($1, from
// accountNumber), not by a subquery on accounts.
const accountAtSQL = `
SELECT deleted, amount, locked, code_hash, storage_usage, storage_paid_at, extra::text
FROM account_history_ids WHERE account = $1 AND block_height <= $2
ORDER BY block_height DESC LIMIT 1`

// AccountAt returns the account after the block at height; ErrNotFound when
// it does not exist (never created, or deleted) at that height.
func (s *Store) AccountAt(ctx context.Context, accountID string, height uint64) (near.Account, error) {
	var (
		deleted        bool
		amount, locked pgtype.Numeric
		codeHash       *string
		usage, paidAt  *int64
		extra          *string
		acc            near.Account
		err            error
	)
	what := fmt.Sprintf("account %s at %d", accountID, height)
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return near.Account{}, err
	}
	if err := s.pool.QueryRow(ctx, accountAtSQL, account, int64(height)).Scan(&deleted, &amount, &locked, &codeHash, &usage, &paidAt, &extra); err != nil {
		return near.Account{}, notFound(err, what)
	}
	if deleted {
		return near.Account{}, fmt.Errorf("%s: %w: %w", what, ErrDeleted, ErrNotFound)
	}
	if acc.Amount, err = u128(amount); err != nil {
		return near.Account{}, fmt.Errorf("read %s: %w", what, err)
	}
	if acc.Locked, err = u128(locked); err != nil {
		return near.Account{}, fmt.Errorf("read %s: %w", what, err)
	}
	if codeHash != nil {
		acc.CodeHash = *codeHash
	}
	if usage != nil {
		acc.StorageUsage = uint64(*usage)
	}
	if paidAt != nil {
		acc.StoragePaidAt = uint64(*paidAt)
	}
	if extra != nil {
		acc.Extra = json.RawMessage(*extra)
	}
	return acc, nil
}

// decodeAccessKey builds a key from its access_key_history columns; extra
// (NULL when the key had no other members) is kept as stored.
func decodeAccessKey(nonce pgtype.Numeric, permission string, extra *string) (near.AccessKeyView, error) {
	var key near.AccessKeyView
	if extra != nil {
		key.Extra = json.RawMessage(*extra)
	}
	n, err := uint64Of(nonce)
	if err != nil {
		return key, err
	}
	key.Nonce = n
	if err := json.Unmarshal([]byte(permission), &key.Permission); err != nil {
		return key, err
	}
	return key, nil
}

const accessKeyAtSQL = `
SELECT deleted, nonce, permission::text, extra::text
FROM access_key_history_ids WHERE account = $1 AND public_key = $2 AND block_height <= $3
ORDER BY block_height DESC LIMIT 1`

// AccessKeyAt returns an access key after the block at height.
func (s *Store) AccessKeyAt(ctx context.Context, accountID, publicKey string, height uint64) (near.AccessKeyView, error) {
	var (
		deleted           bool
		nonce             pgtype.Numeric
		permission, extra *string
	)
	what := fmt.Sprintf("access key %s of %s at %d", publicKey, accountID, height)
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return near.AccessKeyView{}, err
	}
	err = s.pool.QueryRow(ctx, accessKeyAtSQL, account, publicKey, int64(height)).Scan(&deleted, &nonce, &permission, &extra)
	if err != nil {
		return near.AccessKeyView{}, notFound(err, what)
	}
	if deleted || permission == nil {
		return near.AccessKeyView{}, fmt.Errorf("%s: %w: %w", what, ErrDeleted, ErrNotFound)
	}
	key, err := decodeAccessKey(nonce, *permission, extra)
	if err != nil {
		return near.AccessKeyView{}, fmt.Errorf("decode %s: %w", what, err)
	}
	return key, nil
}

// accessKeysAtSQL scans the account's keys once, newest row per key first.
const accessKeysAtSQL = `
SELECT DISTINCT ON (public_key) public_key, deleted, nonce, permission::text, extra::text
FROM access_key_history_ids WHERE account = $1 AND block_height <= $2
ORDER BY public_key, block_height DESC`

// AccessKeysAt returns the account's access keys after the block at height,
// sorted as nearcore's trie holds them: by key type, then key bytes.
func (s *Store) AccessKeysAt(ctx context.Context, accountID string, height uint64) ([]near.AccessKeyInfoView, error) {
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, accessKeysAtSQL, account, int64(height))
	var (
		publicKey         string
		deleted           bool
		nonce             pgtype.Numeric
		permission, extra *string
		keys              = []near.AccessKeyInfoView{}
	)
	_, err = pgx.ForEachRow(rows, []any{&publicKey, &deleted, &nonce, &permission, &extra}, func() error {
		if deleted || permission == nil {
			return nil
		}
		key, err := decodeAccessKey(nonce, *permission, extra)
		if err != nil {
			return fmt.Errorf("decode access key %s: %w", publicKey, err)
		}
		keys = append(keys, near.AccessKeyInfoView{PublicKey: publicKey, AccessKey: key})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read access keys of %s at %d: %w", accountID, height, err)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		return bytes.Compare(near.PublicKeyBorsh(keys[i].PublicKey), near.PublicKeyBorsh(keys[j].PublicKey)) < 0
	})
	return keys, nil
}

const codeAtSQL = `
SELECT h.deleted, h.code_hash, c.code
FROM (SELECT deleted, code_hash FROM contract_code_history_ids
      WHERE account = $1 AND block_height <= $2 ORDER BY block_height DESC LIMIT 1) h
LEFT JOIN contract_codes c ON c.code_hash = h.code_hash`

// ContractCodeAt returns the account's contract code and its hash after the
// block at height; ErrNotFound when it has none.
func (s *Store) ContractCodeAt(ctx context.Context, accountID string, height uint64) ([]byte, string, error) {
	var (
		deleted  bool
		codeHash *string
		code     []byte
	)
	what := fmt.Sprintf("contract code of %s at %d", accountID, height)
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return nil, "", err
	}
	if err := s.pool.QueryRow(ctx, codeAtSQL, account, int64(height)).Scan(&deleted, &codeHash, &code); err != nil {
		return nil, "", notFound(err, what)
	}
	if deleted || codeHash == nil {
		return nil, "", fmt.Errorf("%s: deleted: %w", what, ErrNotFound)
	}
	if code == nil {
		return nil, "", fmt.Errorf("%s: code %s missing from contract_codes", what, *codeHash)
	}
	return code, *codeHash, nil
}

const dataAtSQL = `
SELECT deleted, value FROM contract_data_history_ids
WHERE account = $1 AND data_key = $2 AND block_height <= $3
ORDER BY block_height DESC LIMIT 1`

// ContractDataAt returns one contract state value after the block at height.
func (s *Store) ContractDataAt(ctx context.Context, accountID string, key []byte, height uint64) ([]byte, error) {
	var (
		deleted bool
		value   []byte
	)
	if key == nil {
		key = []byte{}
	}
	what := fmt.Sprintf("data key %x of %s at %d", key, accountID, height)
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if err := s.pool.QueryRow(ctx, dataAtSQL, account, key, int64(height)).Scan(&deleted, &value); err != nil {
		return nil, notFound(err, what)
	}
	if deleted {
		return nil, fmt.Errorf("%s: deleted: %w", what, ErrNotFound)
	}
	if value == nil {
		value = []byte{}
	}
	return value, nil
}

// stateAtSQL walks the keys under the prefix by a skip scan of the
// primary key (account, data_key, block_height): each step of the
// recursive part is one index descent to the next smaller key, and each
// key's newest row at or below the height one more, so the time grows with
// the keys under the prefix, not with their updates (a DISTINCT ON over
// the range read every history row of the account: ~10^5 for a busy
// contract's few counters, BenchmarkViewStateManyUpdates). The caller
// sorts the keys (the walk goes down); a key with no row at or below the
// height is passed over. The account is named by its number ($1), read
// first: Citus runs a recursive CTE only with a filter on the
// distribution column, and a subquery on accounts is not one.
const stateAtSQL = `
WITH RECURSIVE walk(data_key) AS (
    (SELECT data_key FROM contract_data_history_ids
     WHERE account = $1 AND data_key >= $2 AND ($3::bytea IS NULL OR data_key < $3)
     ORDER BY data_key DESC LIMIT 1)
    UNION ALL
    SELECT (SELECT h.data_key FROM contract_data_history_ids h
            WHERE h.account = $1 AND h.data_key >= $2 AND h.data_key < walk.data_key
            ORDER BY h.data_key DESC LIMIT 1)
    FROM walk WHERE walk.data_key IS NOT NULL
)
SELECT walk.data_key, latest.deleted, latest.value FROM walk
CROSS JOIN LATERAL (
    SELECT deleted, value FROM contract_data_history_ids
    WHERE account = $1 AND data_key = walk.data_key AND block_height <= $4
    ORDER BY block_height DESC LIMIT 1) AS latest
WHERE walk.data_key IS NOT NULL`

// prefixEnd returns the smallest key greater than every key starting with
// prefix, or nil when there is none.
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// ContractStateAt returns the account's state under prefix after the block
// at height, in key order. With limitBytes > 0 it returns ErrTooLarge once
// keys plus values exceed it.
func (s *Store) ContractStateAt(ctx context.Context, accountID string, prefix []byte, height uint64, limitBytes int) ([]near.StateItem, error) {
	if prefix == nil {
		prefix = []byte{}
	}
	account, err := s.accountNumber(ctx, accountID)
	if err != nil {
		return nil, err
	}
	rows, _ := s.pool.Query(ctx, stateAtSQL, account, prefix, prefixEnd(prefix), int64(height))
	var (
		key, value []byte
		deleted    bool
		total      int
		items      = []near.StateItem{}
	)
	_, err = pgx.ForEachRow(rows, []any{&key, &deleted, &value}, func() error {
		if deleted {
			return nil
		}
		total += len(key) + len(value)
		if limitBytes > 0 && total > limitBytes {
			return ErrTooLarge
		}
		if value == nil {
			value = []byte{}
		}
		items = append(items, near.StateItem{Key: bytes.Clone(key), Value: bytes.Clone(value)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read state of %s at %d: %w", accountID, height, err)
	}
	slices.SortFunc(items, func(a, b near.StateItem) int { return bytes.Compare(a.Key, b.Key) })
	return items, nil
}
