package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/nearline/nearline/internal/packed"
)

// bareHandler answers the benchmark's requests with the one SQL statement
// each needs and a minimal envelope: no validation, no block selection, no
// error mapping, no contract runtime. It is the ceiling a server over this
// schema can reach on this machine, not a NEAR RPC.
type bareHandler struct {
	pool  *pgxpool.Pool
	codec *packed.Codec // reads the block's changes document
}

type bareRequest struct {
	Method string `json:"method"`
	Params struct {
		BlockID     uint64   `json:"block_id"`
		ShardID     int      `json:"shard_id"`
		RequestType string   `json:"request_type"`
		AccountID   string   `json:"account_id"`
		AccountIDs  []string `json:"account_ids"`
	} `json:"params"`
}

const (
	bareBlockSQL = `SELECT view::text FROM blocks WHERE height = $1`
	// The chunk's packed document, unpacked in Go.
	bareChunkSQL   = `SELECT c.doc FROM block_chunks bc JOIN chunks c ON c.chunk_hash = bc.chunk_hash WHERE bc.block_height = $1 AND bc.shard_id = $2`
	bareAccountSQL = `SELECT json_build_object('amount', amount::text, 'locked', locked::text, 'code_hash', code_hash,
		'storage_usage', storage_usage, 'storage_paid_at', storage_paid_at, 'block_height', $2::bigint)::text
		FROM account_history_ids WHERE account = (SELECT id FROM accounts WHERE name = $1) AND block_height <= $2
		ORDER BY block_height DESC LIMIT 1`
	bareStateSQL = `SELECT json_build_object('values', coalesce(json_agg(json_build_object('key', encode(data_key, 'base64'),
		'value', encode(value, 'base64'))), '[]'))::text FROM (SELECT DISTINCT ON (data_key) data_key, deleted, value
		FROM contract_data_history_ids WHERE account = (SELECT id FROM accounts WHERE name = $1) AND block_height <= $2 ORDER BY data_key, block_height DESC) s WHERE NOT deleted`
	// The positions of the matching changes and the block's document,
	// unpacked in Go (SQL has no zstd).
	bareChangesSQL = `SELECT (SELECT changes FROM block_changes WHERE block_height = $1),
		coalesce(array_agg(index_in_block ORDER BY index_in_block), '{}')
		FROM state_changes WHERE block_height = $1 AND account_id = ANY($2)
		AND change_type IN ('account_update', 'account_deletion')`
	// A view call reads the account's code hash first; the bare handler
	// stops there (no contract runtime).
	bareCallSQL = `SELECT json_build_object('code_hash', code_hash)::text FROM account_history_ids
		WHERE account = (SELECT id FROM accounts WHERE name = $1) AND block_height <= $2 ORDER BY block_height DESC LIMIT 1`
)

func (h bareHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req bareRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	result, err := h.answer(r.Context(), req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":`))
	_, _ = w.Write([]byte(result))
	_, _ = w.Write([]byte(`}`))
}

func (h bareHandler) answer(ctx context.Context, req bareRequest) (string, error) {
	p := req.Params
	height := int64(p.BlockID)
	var (
		sql  string
		args []any
	)
	switch {
	case req.Method == "block":
		sql, args = bareBlockSQL, []any{height}
	case req.Method == "chunk":
		return h.chunk(ctx, height, p.ShardID)
	case req.Method == "changes":
		return h.changes(ctx, height, p.AccountIDs)
	case p.RequestType == "view_account":
		sql, args = bareAccountSQL, []any{p.AccountID, height}
	case p.RequestType == "view_state":
		sql, args = bareStateSQL, []any{p.AccountID, height}
	case p.RequestType == "call_function":
		sql, args = bareCallSQL, []any{p.AccountID, height}
	default:
		return "", fmt.Errorf("bare handler: %s %s not supported", req.Method, p.RequestType)
	}
	var out string
	if err := h.pool.QueryRow(ctx, sql, args...).Scan(&out); err != nil {
		if err == pgx.ErrNoRows {
			return "null", nil
		}
		return "", err
	}
	return out, nil
}

func (h bareHandler) chunk(ctx context.Context, height int64, shard int) (string, error) {
	var doc []byte
	if err := h.pool.QueryRow(ctx, bareChunkSQL, height, shard).Scan(&doc); err != nil {
		if err == pgx.ErrNoRows {
			return "null", nil
		}
		return "", err
	}
	view, err := h.codec.Pick(doc, []int{0})
	if err != nil {
		return "", err
	}
	return string(view[0]), nil
}

func (h bareHandler) changes(ctx context.Context, height int64, accounts []string) (string, error) {
	var (
		doc     []byte
		indexes []int
	)
	if err := h.pool.QueryRow(ctx, bareChangesSQL, height, accounts).Scan(&doc, &indexes); err != nil {
		return "", err
	}
	changes := []json.RawMessage{}
	if len(indexes) > 0 {
		var err error
		if changes, err = h.codec.Pick(doc, indexes); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString(`{"changes":[`)
	for i, c := range changes {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(c)
	}
	b.WriteString(`]}`)
	return b.String(), nil
}
