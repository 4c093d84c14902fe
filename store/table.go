package store

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A table is where Write copies one kind of a batch's rows. Each is a
// rowTable of the row type its builders make (rows.go, rows_chunk.go,
// rows_status.go, rows_state.go, explorer.go), its columns defined
// beside the value each takes from a row: no value is placed by its
// position, and the rows are built and read without the database.
type table interface {
	spec() *tableSpec
	// of returns rs's rows of the table.
	of(rs *rowSet) tableRows
}

// tableSpec is what Write needs of a table besides its rows.
type tableSpec struct {
	name    string
	columns []string
	// heightColumn, when set, is the column (or expression) deleted over
	// the batch's height range before the rows are copied (re-indexed
	// heights).
	heightColumn string
	// conflict, when set, loads through a temporary table and this
	// ON CONFLICT clause when a plain COPY fails.
	conflict string
}

// tableRows are a table's rows of a batch, as COPY writes them.
type tableRows interface {
	len() int
	// encode writes row i's values, column by column.
	encode(w *copyWriter, i int)
	// accounts calls visit with every account name the rows hold by
	// number (accounts.go).
	accounts(visit func(name string))
}

// column is a column of a table whose rows are R: its name and how it is
// written from a row.
type column[R any] struct {
	name string
	put  func(w *copyWriter, r *R)
	// account, set for a column holding an account by number, is the
	// account's name (ok false: NULL).
	account func(r *R) (name string, ok bool)
}

// rowTable is a table whose rows are R, taken from a rowSet by rows.
type rowTable[R any] struct {
	tableSpec
	cols []column[R]
	rows func(rs *rowSet) []R
}

func newTable[R any](spec tableSpec, rows func(rs *rowSet) []R, cols ...column[R]) *rowTable[R] {
	t := &rowTable[R]{tableSpec: spec, cols: cols, rows: rows}
	for _, c := range cols {
		t.columns = append(t.columns, c.name)
	}
	return t
}

func (t *rowTable[R]) spec() *tableSpec { return &t.tableSpec }

func (t *rowTable[R]) of(rs *rowSet) tableRows { return typedRows[R]{t, t.rows(rs)} }

// typedRows are a rowTable's rows of a batch.
type typedRows[R any] struct {
	t    *rowTable[R]
	rows []R
}

func (r typedRows[R]) len() int { return len(r.rows) }

func (r typedRows[R]) encode(w *copyWriter, i int) {
	row := &r.rows[i]
	for k := range r.t.cols {
		w.col = k
		r.t.cols[k].put(w, row)
	}
}

func (r typedRows[R]) accounts(visit func(string)) {
	for k := range r.t.cols {
		get := r.t.cols[k].account
		if get == nil {
			continue
		}
		for i := range r.rows {
			if name, ok := get(&r.rows[i]); ok {
				visit(name)
			}
		}
	}
}

// col is a column written by put.
func col[R any](name string, put func(w *copyWriter, r *R)) column[R] {
	return column[R]{name: name, put: put}
}

// accountCol is a column holding the account get names, by number.
func accountCol[R any](name string, get func(r *R) string) column[R] {
	return column[R]{name: name, put: func(w *copyWriter, r *R) { w.account(get(r)) },
		account: func(r *R) (string, bool) { return get(r), true }}
}

// optAccountCol is a column holding the account get names, by number, or
// NULL when it names none.
func optAccountCol[R any](name string, get func(r *R) *string) column[R] {
	return column[R]{name: name,
		put: func(w *copyWriter, r *R) {
			if name := get(r); name != nil {
				w.account(*name)
			} else {
				w.null()
			}
		},
		account: func(r *R) (string, bool) {
			if name := get(r); name != nil {
				return *name, true
			}
			return "", false
		}}
}

// copyWriter writes the values of rows in PostgreSQL's binary COPY
// format, each for the type of its column (as pgx's CopyFrom would:
// appendCopyValue), an account as its number in ids. The first value it
// cannot write is its error.
type copyWriter struct {
	buf  []byte
	m    *pgtype.Map
	oids []uint32 // the columns' types
	ids  accountIDs
	col  int // the column being written
	err  error
}

func (w *copyWriter) oid() uint32 { return w.oids[w.col] }

// keep takes what an append made of buf, or its error.
func (w *copyWriter) keep(buf []byte, err error) {
	if err != nil {
		if w.err == nil {
			w.err = fmt.Errorf("column %d: %w", w.col+1, err)
		}
		return
	}
	w.buf = buf
}

func (w *copyWriter) null()            { w.buf = appendNull(w.buf) }
func (w *copyWriter) int8(v int64)     { w.keep(appendInt8Value(w.buf, w.m, w.oid(), v)) }
func (w *copyWriter) int4(v int32)     { w.keep(appendInt4Value(w.buf, w.m, w.oid(), v)) }
func (w *copyWriter) int2(v int16)     { w.keep(appendInt2Value(w.buf, w.m, w.oid(), v)) }
func (w *copyWriter) bool(v bool)      { w.keep(appendBoolValue(w.buf, w.m, w.oid(), v)) }
func (w *copyWriter) text(v string)    { w.keep(appendTextValue(w.buf, w.m, w.oid(), v)) }
func (w *copyWriter) time(v time.Time) { w.keep(appendTimeValue(w.buf, w.m, w.oid(), v)) }

// bytes writes b, NULL when nil.
func (w *copyWriter) bytes(b []byte) { w.keep(appendBytesValue(w.buf, w.m, w.oid(), b)) }

// numeric writes v, NULL unless valid.
func (w *copyWriter) numeric(v numericValue) { w.keep(appendNumericValue(w.buf, w.m, w.oid(), v)) }

// bigNumeric writes v, NULL when it holds no number.
func (w *copyWriter) bigNumeric(v bigNumeric) { w.keep(appendBigNumericValue(w.buf, w.m, w.oid(), v)) }

// optInt8 writes *v, NULL when v is nil.
func (w *copyWriter) optInt8(v *int64) {
	if v == nil {
		w.null()
		return
	}
	w.int8(*v)
}

// optText writes *v, NULL when v is nil.
func (w *copyWriter) optText(v *string) {
	if v == nil {
		w.null()
		return
	}
	w.text(*v)
}

// The arrays, NULL when nil; an element of an array of pointers is NULL
// when nil.

func (w *copyWriter) texts(v []string) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.TextArrayOID, pgtype.TextOID, v, always(appendText)))
}

func (w *copyWriter) optTexts(v []*string) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.TextArrayOID, pgtype.TextOID, v, unlessNil(appendText)))
}

func (w *copyWriter) int4s(v []int32) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.Int4ArrayOID, pgtype.Int4OID, v, always(appendInt4)))
}

func (w *copyWriter) optInt4s(v []*int32) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.Int4ArrayOID, pgtype.Int4OID, v, unlessNil(appendInt4)))
}

func (w *copyWriter) optInt8s(v []*int64) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.Int8ArrayOID, pgtype.Int8OID, v, unlessNil(appendInt8)))
}

func (w *copyWriter) numerics(v []numericValue) {
	w.keep(appendArrayValue(w.buf, w.m, w.oid(), pgtype.NumericArrayOID, pgtype.NumericOID, v, appendNumericElem))
}

// account writes the number of the account named.
func (w *copyWriter) account(name string) {
	id, known := w.ids[name]
	if !known || w.oid() != pgtype.Int4OID {
		w.keep(nil, fmt.Errorf("account %q has no number for a column of type %d", name, w.oid()))
		return
	}
	w.buf = appendInt4(binary.BigEndian.AppendUint32(w.buf, 4), id)
}

// value writes v as appendCopyValue does (tests' rows of any values).
func (w *copyWriter) value(v any) { w.keep(appendCopyValue(w.buf, w.m, w.oid(), v)) }
