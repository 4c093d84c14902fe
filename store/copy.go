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

// copyIn writes rows (values in the order of columns) into table with one
// COPY ... FROM STDIN in PostgreSQL's binary format. It is pgx's CopyFrom
// with the values of the types rows mostly hold (integers, text, JSON,
// bytea, booleans, times, numericValue, NULL, and arrays of text, integers
// and numerics) encoded here, each with one type switch, rather than
// through a per-value plan lookup of pgx's type map;
// any other value, or a value for a column of another type, is encoded by
// the connection's type map as pgx's CopyFrom encodes it. An accountName
// is written as its number in ids (the rows are copied as they are, not
// rewritten first). TestCopyInAgreesWithCopyFrom holds the two to the same
// rows.
func copyIn(ctx context.Context, tx pgx.Tx, table string, columns []string, rows [][]any, ids accountIDs) (int64, error) {
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
	r := &copyReader{m: tx.Conn().TypeMap(), oids: oids, rows: rows, ids: ids}
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
	m      *pgtype.Map
	oids   []uint32
	rows   [][]any
	ids    accountIDs // the numbers of the rows' accountNames
	next   int        // the row to encode next
	buf    []byte
	at     int // what of buf has been read
	header bool
	done   bool
}

// copyHeader is the binary format's signature, flags and header extension
// length.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

func (r *copyReader) Read(p []byte) (int, error) {
	if r.at == len(r.buf) {
		if r.done {
			return 0, io.EOF
		}
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.at:])
	r.at += n
	return n, nil
}

// fill encodes the next chunk of rows into buf (the header before the
// first, the trailer after the last).
func (r *copyReader) fill() error {
	r.buf, r.at = r.buf[:0], 0
	if !r.header {
		r.header = true
		r.buf = append(r.buf, copyHeader...)
	}
	for r.next < len(r.rows) && len(r.buf) < copyChunk {
		row := r.rows[r.next]
		if len(row) != len(r.oids) {
			return fmt.Errorf("row %d has %d values for %d columns", r.next, len(row), len(r.oids))
		}
		r.buf = binary.BigEndian.AppendUint16(r.buf, uint16(len(row)))
		for i, v := range row {
			if name, ok := v.(accountName); ok {
				id, known := r.ids[string(name)]
				if !known || r.oids[i] != pgtype.Int4OID {
					return fmt.Errorf("row %d, column %d: account %q has no number for a column of type %d", r.next, i+1, name, r.oids[i])
				}
				r.buf = appendInt4(binary.BigEndian.AppendUint32(r.buf, 4), id)
				continue
			}
			var err error
			if r.buf, err = appendCopyValue(r.buf, r.m, r.oids[i], v); err != nil {
				return fmt.Errorf("row %d, column %d: %w", r.next, i+1, err)
			}
		}
		r.next++
	}
	if r.next == len(r.rows) {
		r.buf = binary.BigEndian.AppendUint16(r.buf, 0xffff)
		r.done = true
	}
	return nil
}

// microsFromUnixToY2K is the microseconds from 1970 to 2000, PostgreSQL's
// epoch.
const microsFromUnixToY2K = 946_684_800 * 1_000_000

// appendCopyValue appends v as a field of the binary COPY format for a
// column of type oid: its length and its bytes, or -1 for NULL.
func appendCopyValue(buf []byte, m *pgtype.Map, oid uint32, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return appendNull(buf), nil
	case int64:
		if oid == pgtype.Int8OID {
			return appendInt8(binary.BigEndian.AppendUint32(buf, 8), v), nil
		}
	case *int64:
		if v == nil {
			return appendNull(buf), nil
		}
		if oid == pgtype.Int8OID {
			return appendCopyValue(buf, m, oid, *v)
		}
	case int32:
		if oid == pgtype.Int4OID {
			return appendInt4(binary.BigEndian.AppendUint32(buf, 4), v), nil
		}
	case int16:
		if oid == pgtype.Int2OID {
			return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint32(buf, 2), uint16(v)), nil
		}
	case bool:
		if oid == pgtype.BoolOID {
			b := byte(0)
			if v {
				b = 1
			}
			return append(binary.BigEndian.AppendUint32(buf, 1), b), nil
		}
	case string:
		if textLike(m, oid) {
			return appendBytes(buf, v), nil
		}
		if oid == pgtype.JSONBOID {
			return appendJSONB(buf, v), nil
		}
	case *string:
		if v == nil {
			return appendNull(buf), nil
		}
		if textLike(m, oid) || oid == pgtype.JSONBOID {
			return appendCopyValue(buf, m, oid, *v)
		}
	case []byte:
		if v == nil {
			return appendNull(buf), nil
		}
		if oid == pgtype.ByteaOID || oid == pgtype.TextOID || oid == pgtype.JSONOID {
			return appendBytes(buf, v), nil
		}
	case json.RawMessage:
		if v == nil {
			return appendNull(buf), nil
		}
		if oid == pgtype.JSONOID || oid == pgtype.TextOID {
			return appendBytes(buf, v), nil
		}
		if oid == pgtype.JSONBOID {
			return appendJSONB(buf, v), nil
		}
	case []string:
		if oid == pgtype.TextArrayOID {
			return appendArray(buf, pgtype.TextOID, v, always(appendText)), nil
		}
	case []*string:
		if oid == pgtype.TextArrayOID {
			return appendArray(buf, pgtype.TextOID, v, unlessNil(appendText)), nil
		}
	case []int32:
		if oid == pgtype.Int4ArrayOID {
			return appendArray(buf, pgtype.Int4OID, v, always(appendInt4)), nil
		}
	case []*int32:
		if oid == pgtype.Int4ArrayOID {
			return appendArray(buf, pgtype.Int4OID, v, unlessNil(appendInt4)), nil
		}
	case []*int64:
		if oid == pgtype.Int8ArrayOID {
			return appendArray(buf, pgtype.Int8OID, v, unlessNil(appendInt8)), nil
		}
	case numericValue:
		if !v.valid {
			return appendNull(buf), nil
		}
		if oid == pgtype.NumericOID {
			at := len(buf)
			buf = appendNumeric(binary.BigEndian.AppendUint32(buf, 0), v)
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			return buf, nil
		}
		return appendCopyValue(buf, m, oid, v.pgNumeric())
	case []numericValue:
		if oid == pgtype.NumericArrayOID {
			return appendArray(buf, pgtype.NumericOID, v, appendNumericElem), nil
		}
	case time.Time:
		if oid == pgtype.TimestamptzOID {
			us := v.Unix()*1_000_000 + int64(v.Nanosecond())/1000 - microsFromUnixToY2K
			return appendInt8(binary.BigEndian.AppendUint32(buf, 8), us), nil
		}
	}
	// As pgx's CopyFrom: the type map's encoding, a nil one being NULL.
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
