package packed

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func values(n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = json.RawMessage(fmt.Sprintf(`{"i":%d,"s":"%s"}`, i, strings.Repeat("ab", i)))
	}
	return out
}

func TestPackUnpackRoundTrip(t *testing.T) {
	c, err := NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 1, 2, 300} {
		in := values(n)
		doc := c.Pack(in)
		if doc[0] != FormatZstd {
			t.Fatalf("format %d", doc[0])
		}
		got, err := c.Unpack(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, in, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("%d values: round trip differs", n)
		}
	}
	in := values(10)
	got, err := c.Pick(c.Pack(in), []int{7, 0, 7})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0]) != string(in[7]) || string(got[1]) != string(in[0]) || string(got[2]) != string(in[7]) {
		t.Fatalf("pick: %s", got)
	}
	if _, err := c.Pick(c.Pack(in), []int{10}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("pick past the end: %v", err)
	}
}

// TestPackPiecesIsPackOfTheJoinedValues: a value given in pieces (none,
// one, empty ones, many) is the document Pack makes of it joined.
func TestPackPiecesIsPackOfTheJoinedValues(t *testing.T) {
	c, err := NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	in := values(40)
	pieces := make([][][]byte, len(in))
	for i, v := range in {
		for len(v) > 0 { // cut at i%5+1 bytes, an empty piece between
			k := min(len(v), i%5+1)
			pieces[i] = append(pieces[i], v[:k], nil)
			v = v[k:]
		}
	}
	pieces = append(pieces, nil, [][]byte{{}})
	in = append(in, json.RawMessage{}, json.RawMessage{})
	if got, want := c.PackPieces(pieces), c.Pack(in); string(got) != string(want) {
		t.Fatal("PackPieces differs from Pack of the joined values")
	}
	got, err := c.Unpack(c.PackPieces(pieces))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, in, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatal("round trip of pieces differs")
	}
}

func TestJSONFormatIsRead(t *testing.T) {
	c, err := NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	doc := append([]byte{FormatJSON}, `[{"a":1}, {"b" : [2]}]`...)
	got, err := c.Unpack(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != `{"a":1}` || string(got[1]) != `{"b" : [2]}` {
		t.Fatalf("got %s", got)
	}
}

func TestCorruptDocumentsAreErrors(t *testing.T) {
	c, err := NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	good := c.Pack(values(3))
	for name, doc := range map[string][]byte{
		"empty":      nil,
		"format":     {7, 1, 2},
		"json":       append([]byte{FormatJSON}, "[1,"...),
		"truncated":  good[:len(good)-3],
		"not zstd":   {FormatZstd, 1, 2, 3},
		"overrun":    c.enc.EncodeAll([]byte{1, 50, 'x'}, []byte{FormatZstd}),
		"trailing":   c.enc.EncodeAll([]byte{1, 1, 'x', 'y'}, []byte{FormatZstd}),
		"huge count": c.enc.EncodeAll([]byte{0xff, 0xff, 0x03}, []byte{FormatZstd}),
	} {
		if _, err := c.Unpack(doc); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func FuzzUnpack(f *testing.F) {
	c, err := NewCodec()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c.Pack(values(3)))
	f.Add([]byte{FormatJSON, '[', ']'})
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, _ = c.Unpack(doc) // never panics
	})
}

// TestUnpackReadsDocumentsWithAChecksum: documents packed before Pack left
// out zstd's checksum (frames with one) still read.
func TestUnpackReadsDocumentsWithAChecksum(t *testing.T) {
	c, err := NewCodec()
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true))
	if err != nil {
		t.Fatal(err)
	}
	in := values(20)
	doc := c.Pack(in)
	body, err := c.dec.DecodeAll(doc[1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	old := enc.EncodeAll(body, []byte{FormatZstd})
	if len(old) != len(doc)+4 {
		t.Fatalf("with a checksum %d bytes, without %d: want 4 more", len(old), len(doc))
	}
	got, err := c.Unpack(old)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, in, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatal("values differ")
	}
}
