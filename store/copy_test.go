package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/store"
	"github.com/nearline/nearline/store/storetest"
)

// TestCopyInAgreesWithCopyFrom: the store's binary COPY stores what pgx's
// CopyFrom stores, value for value, for every kind of value the rows hold
// (those it encodes itself, NULLs of each, and those it hands to pgx's
// type map: numerics, arrays, an int64 for an int4 column) in every
// column type the archive uses, an enum among them; and it refuses a row
// of the wrong width and a value that does not fit its column, as pgx
// does, leaving nothing written.
func TestCopyInAgreesWithCopyFrom(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.NewEmptyDatabaseURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, `CREATE TYPE kind AS ENUM ('Action', 'Data');
		CREATE TABLE a (i8 bigint, i4 integer, i2 smallint, b boolean, t text, v varchar, j json, jb jsonb,
			by bytea, ts timestamptz, n numeric(39,0), k kind, arr bigint[], tarr text[], i4big integer,
			parr bigint[], ptarr text[], iarr integer[], piarr integer[], narr numeric[]);
		CREATE TABLE b (LIKE a)`)
	require.NoError(t, err)
	columns := []string{"i8", "i4", "i2", "b", "t", "v", "j", "jb", "by", "ts", "n", "k", "arr", "tarr", "i4big",
		"parr", "ptarr", "iarr", "piarr", "narr"}
	s, i32, i64 := "s", int32(-4), int64(1)<<40
	h := int64(151768255)
	when := time.Date(2025, 11, 3, 12, 34, 56, 789_123_456, time.UTC)
	rows := [][]any{
		{int64(-1), int32(7), int16(-3), true, "alice.near", "é ∑ \x01", `{"a":[1,2]}`, `{"b": 1}`, []byte{0, 1, 255},
			when, pgtype.Numeric{Int: new(big.Int).Lsh(big.NewInt(1), 127), Valid: true}, "Data", []int64{1, 2}, []string{"x", ""}, int64(5),
			[]*int64{&i64, nil}, []*string{nil, &s}, []int32{3, -3}, []*int32{&i32, nil}, []pgtype.Numeric{{Int: big.NewInt(9), Valid: true}}},
		{&h, int32(0), int16(0), false, (*string)(nil), "", json.RawMessage(`null`), json.RawMessage(`[]`), []byte{},
			time.Unix(0, 0).UTC(), pgtype.Numeric{Int: big.NewInt(0), Valid: true}, "Action", []int64{}, []string{}, int64(-5),
			[]*int64{}, []*string{}, []int32{}, []*int32{}, []pgtype.Numeric{}},
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{(*int64)(nil), nil, nil, nil, []byte("bytes as text"), &s, []byte(`{"c":3}`), json.RawMessage(nil), []byte(nil),
			time.Date(1969, 7, 20, 20, 17, 40, 1_000, time.FixedZone("x", 3600)), nil, nil, []int64(nil), []string(nil), nil,
			[]*int64(nil), []*string(nil), []int32(nil), []*int32(nil), []pgtype.Numeric(nil)},
	}
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	n, err := store.CopyIn(ctx, tx, "a", columns, rows)
	require.NoError(t, err)
	require.EqualValues(t, len(rows), n)
	m, err := tx.CopyFrom(ctx, pgx.Identifier{"b"}, columns, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	require.EqualValues(t, len(rows), m)
	require.NoError(t, tx.Commit(ctx))

	text := func(table string) []string {
		rs, err := conn.Query(ctx, fmt.Sprintf(`SELECT row(t.*)::text FROM %s t ORDER BY i2 NULLS LAST, t NULLS LAST`, table))
		require.NoError(t, err)
		out, err := pgx.CollectRows(rs, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	got, want := text("a"), text("b")
	require.Len(t, got, len(rows))
	require.Equal(t, want, got)

	for _, bad := range [][]any{
		{int64(1)}, // too few values
		{nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, int64(1) << 40, nil, nil, nil, nil, nil}, // an int4 out of range
	} {
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		_, err = store.CopyIn(ctx, tx, "a", columns, [][]any{rows[0], bad})
		require.Error(t, err)
		require.NoError(t, tx.Rollback(ctx))
	}
	require.Equal(t, got, text("a"), "a refused COPY writes nothing")
}

// TestCopyInEncodesNumericsAsPgxDoes: the numeric values the store encodes
// itself (magnitudes up to 2^128-1, either sign, zero, digits of zeros
// inside and at the end, NULL, and arrays holding NULLs) are stored as
// pgx's CopyFrom stores the same numbers as pgtype.Numeric; a magnitude
// above 128 bits goes through pgx's encoding.
func TestCopyInEncodesNumericsAsPgxDoes(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, storetest.NewEmptyDatabaseURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, `CREATE TABLE a (i integer, n numeric, n39 numeric(39,0), narr numeric[]);
		CREATE TABLE b (LIKE a)`)
	require.NoError(t, err)
	num := func(s string) *big.Int {
		v, ok := new(big.Int).SetString(s, 10)
		require.True(t, ok, s)
		return v
	}
	u128max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
	values := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(-1), big.NewInt(9999), big.NewInt(10000),
		big.NewInt(10001), big.NewInt(100000000), num("100000000000000000000000000"), num("18446744073709551615"),
		num("18446744073709551616"), num("-1000000000000000000000000"), num("340282366920938463463374607431768211455"),
		u128max, new(big.Int).Neg(u128max), num("10000000000000000000000000000000000000"), num("12345678901234567890123")}
	columns := []string{"i", "n", "n39", "narr"}
	var ours, theirs [][]any
	for i, v := range values {
		arr := []*big.Int{v, nil, big.NewInt(int64(i))}
		pgArr := []pgtype.Numeric{{Int: v, Valid: true}, {}, {Int: big.NewInt(int64(i)), Valid: true}}
		ours = append(ours, []any{int32(i), store.NumericOf(v), store.NumericOf(v), store.NumericArrayOf(arr)})
		theirs = append(theirs, []any{int32(i), pgtype.Numeric{Int: v, Valid: true}, pgtype.Numeric{Int: v, Valid: true}, pgArr})
	}
	above := new(big.Int).Lsh(big.NewInt(3), 140)
	ours = append(ours, []any{int32(100), store.NumericOf(above), nil, store.NumericArrayOf(nil)},
		[]any{int32(101), store.NumericOf(nil), store.NumericOf(nil), store.NumericArrayOf([]*big.Int{nil})})
	theirs = append(theirs, []any{int32(100), pgtype.Numeric{Int: above, Valid: true}, nil, []pgtype.Numeric{}},
		[]any{int32(101), nil, nil, []pgtype.Numeric{{}}})
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = store.CopyIn(ctx, tx, "a", columns, ours)
	require.NoError(t, err)
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"b"}, columns, pgx.CopyFromRows(theirs))
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	text := func(table string) []string {
		rs, err := conn.Query(ctx, fmt.Sprintf(`SELECT row(t.*)::text FROM %s t ORDER BY i`, table))
		require.NoError(t, err)
		out, err := pgx.CollectRows(rs, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	got := text("a")
	require.Equal(t, text("b"), got)
	require.Contains(t, got, "(12,340282366920938463463374607431768211455,340282366920938463463374607431768211455,\"{340282366920938463463374607431768211455,NULL,12}\")")
	require.Contains(t, got, "(3,9999,9999,\"{9999,NULL,3}\")")
}
