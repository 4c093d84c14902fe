// Package packed keeps a list of JSON values, each exactly as served, in one
// compressed document: the archive stores a block's state changes and its
// transaction statuses this way instead of one uncompressed value per row.
//
// A document is one format byte and a body:
//
//   - FormatJSON (0): the body is a JSON array of the values. Migrations
//     write this from SQL (which has no zstd); PostgreSQL's TOAST compresses
//     it.
//   - FormatZstd (1): the body is a zstd frame of uvarint(n), n uvarint
//     lengths, then the n values back to back. Value i is found without
//     scanning the others.
package packed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Document formats (the first byte of a document).
const (
	FormatJSON byte = 0
	FormatZstd byte = 1
)

// maxDecoded bounds what one document may decompress to.
const maxDecoded = 1 << 30

// ErrCorrupt is returned (wrapped) for a document that cannot be read.
var ErrCorrupt = errors.New("corrupt packed document")

// Codec packs and unpacks documents. It is safe for concurrent use.
type Codec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

// NewCodec returns a Codec compressing at zstd's fastest level, which
// compresses JSON of blocks about as well as gzip's default at a fraction of
// the CPU. Its frames carry no checksum: a document is stored in
// PostgreSQL, whose pages have their own, and its framing is checked as
// it is read; BenchmarkPackLevels compares the settings on a real block.
func NewCodec() (*Codec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, fmt.Errorf("new zstd encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxDecoded))
	if err != nil {
		return nil, fmt.Errorf("new zstd decoder: %w", err)
	}
	return &Codec{enc: enc, dec: dec}, nil
}

// bodies are the buffers Pack frames values in before compressing them.
var bodies sync.Pool

// Pack returns the FormatZstd document of values.
func (c *Codec) Pack(values []json.RawMessage) []byte {
	return c.pack(len(values), func(i int) int { return len(values[i]) },
		func(body []byte, i int) []byte { return append(body, values[i]...) })
}

// PackPieces returns Pack's document of values each made of its pieces
// back to back, without joining them first: a value that is another with
// a part cut out is framed from the two sides of the cut.
func (c *Codec) PackPieces(values [][][]byte) []byte {
	length := func(i int) int {
		n := 0
		for _, piece := range values[i] {
			n += len(piece)
		}
		return n
	}
	return c.pack(len(values), length, func(body []byte, i int) []byte {
		for _, piece := range values[i] {
			body = append(body, piece...)
		}
		return body
	})
}

// pack frames n values, each of length(i), written by write, and
// compresses the frame: uvarint(n), the n lengths, the values.
func (c *Codec) pack(n int, length func(i int) int, write func(body []byte, i int) []byte) []byte {
	size := binary.MaxVarintLen64 * (n + 1)
	for i := range n {
		size += length(i)
	}
	var body []byte
	if p, ok := bodies.Get().(*[]byte); ok && cap(*p) >= size {
		body = (*p)[:0]
	} else {
		body = make([]byte, 0, size)
	}
	body = binary.AppendUvarint(body, uint64(n))
	for i := range n {
		body = binary.AppendUvarint(body, uint64(length(i)))
	}
	for i := range n {
		body = write(body, i)
	}
	// The frame is written into a buffer it cannot outgrow (zstd stores
	// a block it cannot shrink as it is), then copied out at its size:
	// grown as it was written, a document was copied a second time
	// whenever it compressed less than guessed, and kept its spare room.
	var out []byte
	if p, ok := outputs.Get().(*[]byte); ok && cap(*p) >= maxFrame(len(body)) {
		out = (*p)[:0]
	} else {
		out = make([]byte, 0, maxFrame(len(body)))
	}
	out = c.enc.EncodeAll(body, append(out, FormatZstd))
	doc := bytes.Clone(out)
	release(&bodies, body)
	release(&outputs, out)
	return doc
}

// release keeps b in pool for reuse, unless it is larger than maxPooled.
func release(pool *sync.Pool, b []byte) {
	if cap(b) <= maxPooled {
		pool.Put(&b)
	}
}

// outputs are the buffers Pack compresses into.
var outputs sync.Pool

// maxFrame bounds the FormatZstd document of a body of n bytes: the
// format byte, the frame's header, each block of at most 128 KiB stored
// as it is with its 3-byte header, and a checksum.
func maxFrame(n int) int { return 1 + 18 + n + 3*(n/(128<<10)+1) + 4 }

// maxPooled is the largest buffer Pack keeps for reuse.
const maxPooled = 16 << 20

// Unpack returns every value of doc, in order.
func (c *Codec) Unpack(doc []byte) ([]json.RawMessage, error) {
	if len(doc) == 0 {
		return nil, fmt.Errorf("empty document: %w", ErrCorrupt)
	}
	switch doc[0] {
	case FormatJSON:
		var values []json.RawMessage
		if err := json.Unmarshal(doc[1:], &values); err != nil {
			return nil, fmt.Errorf("decode JSON document: %w: %w", ErrCorrupt, err)
		}
		return values, nil
	case FormatZstd:
		body, err := c.dec.DecodeAll(doc[1:], nil)
		if err != nil {
			return nil, fmt.Errorf("decompress document: %w: %w", ErrCorrupt, err)
		}
		return split(body)
	default:
		return nil, fmt.Errorf("format %d: %w", doc[0], ErrCorrupt)
	}
}

// Pick returns the values of doc at the given indexes, in the order asked.
func (c *Codec) Pick(doc []byte, indexes []int) ([]json.RawMessage, error) {
	all, err := c.Unpack(doc)
	if err != nil {
		return nil, err
	}
	out := make([]json.RawMessage, len(indexes))
	for i, at := range indexes {
		if at < 0 || at >= len(all) {
			return nil, fmt.Errorf("value %d of %d: %w", at, len(all), ErrCorrupt)
		}
		out[i] = all[at]
	}
	return out, nil
}

// split reads the framing of a FormatZstd body.
func split(body []byte) ([]json.RawMessage, error) {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)) {
		return nil, fmt.Errorf("value count: %w", ErrCorrupt)
	}
	body = body[k:]
	lens := make([]uint64, n)
	for i := range lens {
		l, k := binary.Uvarint(body)
		if k <= 0 {
			return nil, fmt.Errorf("length of value %d: %w", i, ErrCorrupt)
		}
		lens[i], body = l, body[k:]
	}
	values := make([]json.RawMessage, n)
	for i, l := range lens {
		if l > uint64(len(body)) {
			return nil, fmt.Errorf("value %d overruns the document: %w", i, ErrCorrupt)
		}
		values[i], body = json.RawMessage(body[:l:l]), body[l:]
	}
	if len(body) != 0 {
		return nil, fmt.Errorf("%d bytes after the last value: %w", len(body), ErrCorrupt)
	}
	return values, nil
}
