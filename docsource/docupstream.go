package docsource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/bufpool"
	"github.com/nearline/nearline/internal/httpcall"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
	"github.com/nearline/nearline/upstream"
)

// ErrNoDocument is returned (wrapped) by a Fetcher for a height it has no
// document for (yet): NEAR Lake's missing objects, neardata's
// BLOCK_DOES_NOT_EXIST for a height too far past its head. Whether the chain
// skipped the height is decided by Source (a later block linking over
// it), never by the absence alone.
var ErrNoDocument = errors.New("no block document")

// Fetcher fetches block documents, one per height: what Source
// reads. NeardataFetcher and LakeFetcher implement it.
type Fetcher interface {
	// Document returns the document at height. It returns bundle.ErrNoBlock when
	// the upstream says the chain skipped the height, ErrNoDocument when it
	// has no document there (yet).
	Document(ctx context.Context, height uint64) (*BlockDocument, error)
	// FinalHead returns the height of the latest final block.
	FinalHead(ctx context.Context) (uint64, error)
}

// BlockDocument is nearcore's StreamerMessage as neardata serves it and
// NEAR Lake splits it: the block view and, per shard of the layout, the
// chunk included in this block with its transactions and their outcomes,
// the receipts executed in the shard with their outcomes, and the shard's
// state changes. Parts are kept as served.
type BlockDocument struct {
	Block  json.RawMessage `json:"block"`
	Shards []DocumentShard `json:"shards"`
	// body is the buffer of the fetcher's pool the document was read
	// into (its parts are slices of it), nil when it is in none.
	body []byte
}

// DocumentShard is one shard's part of a block document (IndexerShard).
type DocumentShard struct {
	ShardID uint64 `json:"shard_id"`
	// Chunk is the chunk included in this block ({author, header,
	// transactions: [{transaction, outcome}], receipts[, local_receipts]}),
	// null when the shard's chunk is missing.
	Chunk                    json.RawMessage          `json:"chunk"`
	ReceiptExecutionOutcomes []DocumentReceiptOutcome `json:"receipt_execution_outcomes"`
	StateChanges             []json.RawMessage        `json:"state_changes"`
	// chunk is what the document's scan found of Chunk (scanChunk); nil
	// when Chunk was not taken apart as it was scanned.
	chunk *chunkScan
}

// DocumentReceiptOutcome is a receipt executed in the shard at this block.
type DocumentReceiptOutcome struct {
	ExecutionOutcome json.RawMessage `json:"execution_outcome"`
	Receipt          json.RawMessage `json:"receipt"`
	TxHash           *string         `json:"tx_hash"`
}

// NeardataFetcher reads FastNEAR's neardata API: GET /v0/block/{height}
// (null for a skipped height; a height a little past the head is waited
// for by the server) and GET /v0/last_block/final (a redirect naming the
// final height).
type NeardataFetcher struct {
	get     *upstream.Getter
	buffers *bufpool.Pool
}

var _ Fetcher = (*NeardataFetcher)(nil)

// NewNeardataFetcher returns a fetcher over cfg.Endpoints (base URLs such as
// https://mainnet.neardata.xyz, or https://mainnet.neardata.xyz?apiKey=KEY
// with FastNEAR's key, which every request carries; or the key as
// cfg.BearerToken, sent as a header with every request), with cfg's
// timeouts, retries and failover; logger receives the retries (nil: none).
// Documents are read into the buffers of cfg.Buffers, or of a pool of
// documentBuffers bytes when it is nil; Source gives each back once its
// block is written.
func NewNeardataFetcher(cfg upstream.Config, logger *slog.Logger) (*NeardataFetcher, error) {
	if cfg.Buffers == nil {
		cfg.Buffers = bufpool.New(documentBuffers)
	}
	g, err := upstream.NewGetter(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("configure neardata: %w", err)
	}
	return &NeardataFetcher{get: g, buffers: cfg.Buffers}, nil
}

// documentBuffers is what a NeardataFetcher's own pool keeps of buffers
// given back: about twenty mainnet documents, more than the workers and
// the read-ahead have in flight.
const documentBuffers = 32 << 20

// recycle gives body, a document's buffer, back to f's pool.
func (f *NeardataFetcher) recycle(body []byte) { f.buffers.Put(body) }

// Document fetches the document at height.
func (f *NeardataFetcher) Document(ctx context.Context, height uint64) (*BlockDocument, error) {
	var doc *BlockDocument
	var result error
	err := f.get.Get(ctx, "/v0/block/"+strconv.FormatUint(height, 10), func(a upstream.Answer) error {
		switch a.Status {
		case http.StatusOK:
			if string(bytes.TrimSpace(a.Body)) == "null" {
				result = fmt.Errorf("block %d: %w", height, bundle.ErrNoBlock)
				return nil
			}
			d, err := decodeDocument(a.Body)
			if err != nil {
				return fmt.Errorf("%w: %w", upstream.ErrMalformedAnswer, err)
			}
			d.body, doc = a.Body, d
			return nil
		case http.StatusNotFound:
			var e struct {
				Type string `json:"type"`
			}
			_ = json.Unmarshal(a.Body, &e)
			if e.Type == "BLOCK_HEIGHT_TOO_LOW" {
				return fmt.Errorf("block %d is below the upstream's genesis", height)
			}
			result = fmt.Errorf("block %d: %w", height, ErrNoDocument)
			return nil
		default:
			return fmt.Errorf("http %d", a.Status)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("fetch block document %d: %w", height, err)
	}
	return doc, result
}

// FinalHead reads the height /v0/last_block/final redirects to (or, when a
// proxy followed the redirect, the block it served). The target is read,
// not fetched: the block at that height is fetched by Document, below the
// endpoint, with its query (the API key).
func (f *NeardataFetcher) FinalHead(ctx context.Context) (uint64, error) {
	var head uint64
	err := f.get.Get(ctx, "/v0/last_block/final", func(a upstream.Answer) error {
		switch {
		case a.Status >= 300 && a.Status < 400:
			h, err := redirectHeight(a.Location)
			if err != nil {
				return fmt.Errorf("%w: redirect to %q names no height", upstream.ErrMalformedAnswer, httpcall.RedactURL(a.Location))
			}
			head = h
			return nil
		case a.Status == http.StatusOK:
			d, err := decodeDocument(a.Body)
			if err != nil {
				return fmt.Errorf("%w: %w", upstream.ErrMalformedAnswer, err)
			}
			h, err := near.HeaderHeight(d.Block)
			if err != nil {
				return fmt.Errorf("%w: %w", upstream.ErrMalformedAnswer, err)
			}
			head = h
			return nil
		default:
			return fmt.Errorf("http %d", a.Status)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("fetch final head: %w", err)
	}
	return head, nil
}

// redirectHeight is the height a redirect of /v0/last_block/final names:
// its target's last path segment, whether the target is a path or an
// absolute URL, with a query (the API key carried along) or without.
func redirectHeight(location string) (uint64, error) {
	u, err := url.Parse(location)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(path.Base(u.Path), 10, 64)
}

// LakeFetcher reads NEAR Lake's layout: {height:012}/block.json (the block
// view) and {height:012}/shard_{id}.json (one per shard of the block's
// chunks), from a local directory or an HTTP base URL (a bucket's public
// endpoint or a mirror). Lake has no head of its own: FinalHead asks the
// head RPC when one is given, else takes the highest height folder of a
// directory.
type LakeFetcher struct {
	dir    string           // local directory, or
	get    *upstream.Getter // HTTP base URL
	head   upstream.RPC
	epochs *upstream.Epochs // layouts from head; nil without it
}

var _ Fetcher = (*LakeFetcher)(nil)

// NewLakeFetcher returns a fetcher reading cfg.Endpoints: one directory,
// or http(s) base URLs (cfg's timeouts, retries, failover and bearer
// token apply; a directory refuses a token). head,
// when not nil, answers FinalHead; it is required over HTTP. logger
// receives the retries (nil: none).
func NewLakeFetcher(cfg upstream.Config, head upstream.RPC, logger *slog.Logger) (*LakeFetcher, error) {
	if len(cfg.Endpoints) == 1 && !httpcall.IsHTTP(cfg.Endpoints[0]) {
		dir := cfg.Endpoints[0]
		if cfg.BearerToken != "" {
			return nil, errors.New("lake directory: a bearer token is for an HTTP upstream")
		}
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("open lake directory: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("lake %s: not a directory", dir)
		}
		return &LakeFetcher{dir: dir, head: head, epochs: lakeEpochs(head)}, nil
	}
	if head == nil {
		return nil, errors.New("lake over HTTP needs an RPC upstream for the final head")
	}
	g, err := upstream.NewGetter(cfg, logger)
	if err != nil {
		return nil, fmt.Errorf("configure lake: %w", err)
	}
	return &LakeFetcher{get: g, head: head, epochs: lakeEpochs(head)}, nil
}

func lakeEpochs(head upstream.RPC) *upstream.Epochs {
	if head == nil {
		return nil
	}
	return upstream.NewEpochs(head)
}

// object reads one object, compacted, that check accepts; ErrNoDocument
// when it is missing. Over HTTP, one check refuses (an error page, a cut
// body) is fetched again.
func (f *LakeFetcher) object(ctx context.Context, name string, check func([]byte) error) ([]byte, error) {
	if f.dir != "" {
		body, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", name, ErrNoDocument)
		}
		if err != nil {
			return nil, fmt.Errorf("read lake object: %w", err)
		}
		if body, err = compactChecked(body, check); err != nil {
			return nil, fmt.Errorf("lake object %s: %w", name, err)
		}
		return body, nil
	}
	var body []byte
	var result error
	err := f.get.Get(ctx, "/"+name, func(a upstream.Answer) error {
		switch a.Status {
		case http.StatusOK:
			b, err := compactChecked(a.Body, check)
			if err != nil {
				return fmt.Errorf("%w: %s: %w", upstream.ErrMalformedAnswer, name, err)
			}
			body = b
		case http.StatusNotFound, http.StatusForbidden: // buckets answer 403 for a missing key without list rights
			result = fmt.Errorf("%s: %w", name, ErrNoDocument)
		default:
			return fmt.Errorf("http %d", a.Status)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch lake object: %w", err)
	}
	return body, result
}

// compactChecked compacts a JSON body that check accepts (a copy only when
// it did not come compact).
func compactChecked(body []byte, check func([]byte) error) ([]byte, error) {
	body = bytes.TrimSpace(body)
	end, err := jsonobject.SkipValue(body, 0)
	if err == nil && end != len(body) {
		err = jsonobject.ErrNotCompact // whitespace inside, or data after the value
	}
	if errors.Is(err, jsonobject.ErrNotCompact) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, body); err != nil {
			return nil, err
		}
		body, err = buf.Bytes(), nil
	}
	if err != nil {
		return nil, err
	}
	if err := check(body); err != nil {
		return nil, err
	}
	return body, nil
}

// Document reads block.json, then the shard files of the block's shards,
// at once (shardIDs says which).
func (f *LakeFetcher) Document(ctx context.Context, height uint64) (*BlockDocument, error) {
	folder := fmt.Sprintf("%012d", height)
	var block struct {
		Header struct {
			Height  *uint64 `json:"height"`
			Hash    string  `json:"hash"`
			EpochID string  `json:"epoch_id"`
		} `json:"header"`
		Chunks []near.ChunkHeaderView `json:"chunks"`
	}
	body, err := f.object(ctx, folder+"/block.json", func(b []byte) error {
		if err := json.Unmarshal(b, &block); err != nil {
			return err
		}
		if block.Header.Height == nil || *block.Header.Height != height {
			return fmt.Errorf("not the block at %d", height)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids, err := f.shardIDs(ctx, folder, height, block.Header.EpochID, block.Header.Hash, block.Chunks)
	if err != nil {
		return nil, err
	}
	doc := &BlockDocument{Block: body, Shards: make([]DocumentShard, len(block.Chunks))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i, id := range ids {
		c := struct{ ShardID uint64 }{id}
		g.Go(func() error {
			name := fmt.Sprintf("%s/shard_%d.json", folder, c.ShardID)
			_, err := f.object(gctx, name, func(b []byte) error {
				sh, hasID, err := decodeShard(b)
				if err != nil {
					return err
				}
				if !hasID || sh.ShardID != c.ShardID {
					return fmt.Errorf("not shard %d", c.ShardID)
				}
				doc.Shards[i] = sh
				return nil
			})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return doc, nil
}

// shardIDs returns the shard ids of the block's layout, by chunk index:
// the files to read. They are the chunk headers' shard_id, except right
// after a resharding, where a child whose chunk is missing repeats its
// parent's header. So when some chunk is not new, the layout is read: from
// the head RPC's EXPERIMENTAL_protocol_config (once per epoch), or, for a
// directory without one, from the folder's shard files (a repeated header
// whose shard has a file keeps its id; the ids left over go to the other
// repeated headers in ascending order, as a split's children take the
// largest id + 1 and + 2 at the parent's place).
func (f *LakeFetcher) shardIDs(ctx context.Context, folder string, height uint64, epoch, hash string, chunks []near.ChunkHeaderView) ([]uint64, error) {
	ids := make([]uint64, len(chunks))
	repeated := false
	for i, c := range chunks {
		ids[i] = c.ShardID
		repeated = repeated || c.HeightIncluded < height
	}
	if !repeated {
		return ids, nil
	}
	if f.epochs != nil {
		layout, err := f.epochs.Layout(ctx, epoch, hash)
		if err != nil {
			return nil, fmt.Errorf("shard layout of block %d: %w", height, err)
		}
		if len(layout) == len(chunks) {
			return slices.Clone(layout), nil
		}
		return ids, nil
	}
	if f.dir == "" {
		return ids, nil
	}
	entries, err := os.ReadDir(filepath.Join(f.dir, folder))
	if err != nil {
		return nil, fmt.Errorf("list lake folder %s: %w", folder, err)
	}
	files := map[uint64]bool{}
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "shard_")
		name, ok2 := strings.CutSuffix(name, ".json")
		if id, err := strconv.ParseUint(name, 10, 64); ok && ok2 && err == nil {
			files[id] = true
		}
	}
	if len(files) != len(chunks) {
		return ids, nil
	}
	var orphans []int
	for i, id := range ids {
		if files[id] && (chunks[i].HeightIncluded == height || !slices.Contains(ids[:i], id)) {
			delete(files, id)
			continue
		}
		orphans = append(orphans, i)
	}
	left := slices.Sorted(maps.Keys(files))
	if len(left) != len(orphans) {
		return ids, nil
	}
	for k, i := range orphans {
		ids[i] = left[k]
	}
	return ids, nil
}

// FinalHead asks the head RPC, or takes a directory's highest folder.
func (f *LakeFetcher) FinalHead(ctx context.Context) (uint64, error) {
	if f.head != nil {
		return upstream.FinalHead(ctx, f.head)
	}
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return 0, fmt.Errorf("list lake directory: %w", err)
	}
	var head uint64
	found := false
	for _, e := range entries {
		if h, err := strconv.ParseUint(e.Name(), 10, 64); err == nil && len(e.Name()) == 12 && e.IsDir() {
			head, found = max(head, h), true
		}
	}
	if !found {
		return 0, fmt.Errorf("lake directory %s: %w", f.dir, ErrNoDocument)
	}
	return head, nil
}
