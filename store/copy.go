package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// copyIn writes rows into table's columns with one COPY ... FROM STDIN in
// PostgreSQL's binary format. It is pgx's CopyFrom with the values of
// typed rows written by the functions of their types (copyWriter), each
// a branch rather than a per-value plan lookup of pgx's type map; a value
// for a column of another type is encoded by the connection's type map as
// pgx's CopyFrom encodes it. An account is written as its number in ids.
// TestCopyInAgreesWithCopyFrom holds the two to the same values.
func copyIn(ctx context.Context, tx pgx.Tx, table string, columns []string, rows tableRows, ids accountIDs) (int64, error) {
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	list := strings.Join(quoted, ", ")
	name := pgx.Identifier{table}.Sanitize()
	// The columns' types, as pgx's CopyFrom learns them: one describe.
	sd, err := tx.Conn().Prepare(ctx, "", "SELECT "+list+" FROM "+name)
	if err != nil {
		return 0, err
	}
	if len(sd.Fields) != len(columns) {
		return 0, fmt.Errorf("%s: %d columns described for %d", table, len(sd.Fields), len(columns))
	}
	oids := make([]uint32, len(sd.Fields))
	for i, f := range sd.Fields {
		oids[i] = f.DataTypeOID
	}
	r := &copyReader{w: copyWriter{m: tx.Conn().TypeMap(), oids: oids, ids: ids}, rows: rows}
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, r, "COPY "+name+" ("+list+") FROM STDIN (FORMAT binary)")
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// copyChunk is about how many bytes of rows a copyReader encodes at a time.
const copyChunk = 64 << 10

// copyReader reads as the binary COPY stream of rows: the header, the
// rows encoded a chunk at a time, the trailer.
type copyReader struct {
	w      copyWriter // buf holds the chunk encoded
	rows   tableRows
	next   int // the row to encode next
	at     int // what of w.buf has been read
	header bool
	done   bool
}

// copyHeader is the binary format's signature, flags and header extension
// length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (r *copyReader) Read(p []byte) (int, error) {
	if r.at == len(r.w.buf) {
		if r.done {
			return 0, io.EOF
		}
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.w.buf[r.at:])
	r.at += n
	return n, nil
}

// fill encodes the next chunk of rows into w.buf (the header before the
// first, the trailer after the last).
func (r *copyReader) fill() error {
	r.w.buf, r.at = r.w.buf[:0], 0
	if !r.header {
		r.header = true
		r.w.buf = append(r.w.buf, copyHeader...)
	}
	n := r.rows.len()
	for r.next < n && len(r.w.buf) < copyChunk {
		r.w.buf = binary.BigEndian.AppendUint16(r.w.buf, uint16(len(r.w.oids)))
		r.rows.encode(&r.w, r.next)
		if r.w.err != nil {
			return fmt.Errorf("row %d, %w", r.next, r.w.err)
		}
		r.next++
	}
	if r.next == n {
		r.w.buf = binary.BigEndian.AppendUint16(r.w.buf, 0xffff)
		r.done = true
	}
	return nil
}

// microsFromUnixToY2K is the microseconds from 1970 to 2000, PostgreSQL's
// epoch.
const microsFromUnixToY2K = 946_684_800 * 1_000_000

// appendCopyValue appends v as a field of the binary COPY format for a
// column of type oid: its length and its bytes, or -1 for NULL. The values
// of typed rows are written by the function of their type below (through
// copyWriter); this is the same for a value of any type.
func appendCopyValue(buf []byte, m *pgtype.Map, oid uint32, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return appendNull(buf), nil
	case int64:
		return appendInt8Value(buf, m, oid, v)
	case *int64:
		if v == nil {
			return appendNull(buf), nil
		}
		return appendInt8Value(buf, m, oid, *v)
	case int32:
		return appendInt4Value(buf, m, oid, v)
	case int16:
		return appendInt2Value(buf, m, oid, v)
	case bool:
		return appendBoolValue(buf, m, oid, v)
	case string:
		return appendTextValue(buf, m, oid, v)
	case *string:
		if v == nil {
			return appendNull(buf), nil
		}
		return appendTextValue(buf, m, oid, *v)
	case []byte:
		return appendBytesValue(buf, m, oid, v)
	case json.RawMessage:
		return appendJSONValue(buf, m, oid, v)
	case []string:
		return appendArrayValue(buf, m, oid, pgtype.TextArrayOID, pgtype.TextOID, v, always(appendText))
	case []*string:
		return appendArrayValue(buf, m, oid, pgtype.TextArrayOID, pgtype.TextOID, v, unlessNil(appendText))
	case []int32:
		return appendArrayValue(buf, m, oid, pgtype.Int4ArrayOID, pgtype.Int4OID, v, always(appendInt4))
	case []*int32:
		return appendArrayValue(buf, m, oid, pgtype.Int4ArrayOID, pgtype.Int4OID, v, unlessNil(appendInt4))
	case []*int64:
		return appendArrayValue(buf, m, oid, pgtype.Int8ArrayOID, pgtype.Int8OID, v, unlessNil(appendInt8))
	case numericValue:
		return appendNumericValue(buf, m, oid, v)
	case bigNumeric:
		return appendBigNumericValue(buf, m, oid, v)
	case []numericValue:
		return appendArrayValue(buf, m, oid, pgtype.NumericArrayOID, pgtype.NumericOID, v, appendNumericElem)
	case time.Time:
		return appendTimeValue(buf, m, oid, v)
	}
	return appendByMap(buf, m, oid, v)
}

// appendByMap appends v as pgx's CopyFrom does: by the type map's
// encoding, a nil one being NULL. It is how a value is written to a
// column of a type its own function does not write.
func appendByMap(buf []byte, m *pgtype.Map, oid uint32, v any) ([]byte, error) {
	at := len(buf)
	buf = appendNull(buf)
	out, err := m.Encode(oid, pgtype.BinaryFormatCode, v, buf)
	if err != nil {
		return nil, fmt.Errorf("encode %T as type %d: %w", v, oid, err)
	}
	if out == nil {
		return buf, nil
	}
	binary.BigEndian.PutUint32(out[at:], uint32(len(out)-at-4))
	return out, nil
}

// The values of each type, for a column of type oid.

func appendInt8Value(buf []byte, m *pgtype.Map, oid uint32, v int64) ([]byte, error) {
	if oid == pgtype.Int8OID {
		return appendInt8(binary.BigEndian.AppendUint32(buf, 8), v), nil
	}
	return appendByMap(buf, m, oid, v)
}

func appendInt4Value(buf []byte, m *pgtype.Map, oid uint32, v int32) ([]byte, error) {
	if oid == pgtype.Int4OID {
		return appendInt4(binary.BigEndian.AppendUint32(buf, 4), v), nil
	}
	return appendByMap(buf, m, oid, v)
}

func appendInt2Value(buf []byte, m *pgtype.Map, oid uint32, v int16) ([]byte, error) {
	if oid == pgtype.Int2OID {
		return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(buf, 2), uint16(v)), nil
	}
	return appendByMap(buf, m, oid, v)
}

func appendBoolValue(buf []byte, m *pgtype.Map, oid uint32, v bool) ([]byte, error) {
	if oid == pgtype.BoolOID {
		b := byte(0)
		if v {
			b = 1
		}
		return append(binary.BigEndian.AppendUint32(buf, 1), b), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendTextValue appends text, an enum's label or JSON's text.
func appendTextValue(buf []byte, m *pgtype.Map, oid uint32, v string) ([]byte, error) {
	if textLike(m, oid) {
		return appendBytes(buf, v), nil
	}
	if oid == pgtype.JSONBOID {
		return appendJSONB(buf, v), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendBytesValue appends bytea (or text, or JSON), NULL when v is nil.
func appendBytesValue(buf []byte, m *pgtype.Map, oid uint32, v []byte) ([]byte, error) {
	if v == nil {
		return appendNull(buf), nil
	}
	if oid == pgtype.ByteaOID || oid == pgtype.TextOID || oid == pgtype.JSONOID {
		return appendBytes(buf, v), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendJSONValue appends JSON, NULL when v is nil.
func appendJSONValue(buf []byte, m *pgtype.Map, oid uint32, v json.RawMessage) ([]byte, error) {
	switch {
	case v == nil:
		return appendNull(buf), nil
	case oid == pgtype.JSONOID || oid == pgtype.TextOID:
		return appendBytes(buf, v), nil
	case oid == pgtype.JSONBOID:
		return appendJSONB(buf, v), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendArrayValue appends v as an array of elements of type elemOID,
// appended by elem, for a column of type arrayOID (NULL when v is nil).
func appendArrayValue[T any](buf []byte, m *pgtype.Map, oid, arrayOID, elemOID uint32, v []T,
	elem func([]byte, T) ([]byte, bool)) ([]byte, error) {
	if oid == arrayOID {
		return appendArray(buf, elemOID, v, elem), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendNumericValue appends v, NULL unless valid.
func appendNumericValue(buf []byte, m *pgtype.Map, oid uint32, v numericValue) ([]byte, error) {
	if !v.valid {
		return appendNull(buf), nil
	}
	if oid == pgtype.NumericOID {
		at := len(buf)
		buf = appendNumeric(binary.BigEndian.AppendUint32(buf, 0), v)
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		return buf, nil
	}
	return appendByMap(buf, m, oid, v.pgNumeric())
}

// appendBigNumericValue appends v: above 128 bits through pgx's numeric.
func appendBigNumericValue(buf []byte, m *pgtype.Map, oid uint32, v bigNumeric) ([]byte, error) {
	if v.big != nil {
		return appendByMap(buf, m, oid, pgtype.Numeric{Int: v.big, Valid: true})
	}
	return appendNumericValue(buf, m, oid, v.small)
}

func appendTimeValue(buf []byte, m *pgtype.Map, oid uint32, v time.Time) ([]byte, error) {
	if oid == pgtype.TimestamptzOID {
		us := v.Unix()*1_000_000 + int64(v.Nanosecond())/1000 - microsFromUnixToY2K
		return appendInt8(binary.BigEndian.AppendUint32(buf, 8), us), nil
	}
	return appendByMap(buf, m, oid, v)
}

// appendArray appends items as a one-dimensional array of elements of
// type elemOID, or NULL when items is nil; elem appends an item's bytes,
// or says it is NULL.
func appendArray[T any](buf []byte, elemOID uint32, items []T, elem func([]byte, T) ([]byte, bool)) []byte {
	if items == nil {
		return appendNull(buf)
	}
	at := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, 0) // the length, set below
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	flags := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, 0) // holds a NULL: set below
	buf = binary.BigEndian.AppendUint32(buf, elemOID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(items)))
	buf = binary.BigEndian.AppendUint32(buf, 1) // the lower bound
	for _, item := range items {
		lenAt := len(buf)
		buf = appendNull(buf)
		var ok bool
		if buf, ok = elem(buf, item); ok {
			binary.BigEndian.PutUint32(buf[lenAt:], uint32(len(buf)-lenAt-4))
		} else {
			binary.BigEndian.PutUint32(buf[flags:], 1)
		}
	}
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf
}

// appendBytes appends text, JSON or bytea: its length and its bytes.
func appendBytes[T ~string | ~[]byte](buf []byte, v T) []byte {
	return append(binary.BigEndian.AppendUint32(buf, uint32(len(v))), v...)
}

// appendJSONB appends JSON for a jsonb column: its length, the format
// version 1, its text.
func appendJSONB[T ~string | ~[]byte](buf []byte, v T) []byte {
	return append(append(binary.BigEndian.AppendUint32(buf, uint32(len(v)+1)), 1), v...)
}

// The bytes of an array's elements, without their length.
func appendText(b []byte, s string) []byte { return append(b, s...) }
func appendInt4(b []byte, n int32) []byte  { return binary.BigEndian.AppendUint32(b, uint32(n)) }
func appendInt8(b []byte, n int64) []byte  { return binary.BigEndian.AppendUint64(b, uint64(n)) }

// always makes an element encoder of appendArray that never says NULL.
func always[T any](f func([]byte, T) []byte) func([]byte, T) ([]byte, bool) {
	return func(b []byte, v T) ([]byte, bool) { return f(b, v), true }
}

// unlessNil makes an element encoder of appendArray for pointers: a nil
// one is NULL.
func unlessNil[T any](f func([]byte, T) []byte) func([]byte, *T) ([]byte, bool) {
	return func(b []byte, v *T) ([]byte, bool) {
		if v == nil {
			return b, false
		}
		return f(b, *v), true
	}
}

func appendNull(buf []byte) []byte { return binary.BigEndian.AppendUint32(buf, 0xffffffff) }

// textLike reports whether a string goes into a column of type oid as its
// bytes: text, varchar, json, and the types the connection's map does not
// know, such as the enums of migration 00012, whose binary form is their
// label (pgx encodes a string for an unknown type as text).
func textLike(m *pgtype.Map, oid uint32) bool {
	switch oid {
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.JSONOID:
		return true
	}
	_, known := m.TypeForOID(oid)
	return !known
}
