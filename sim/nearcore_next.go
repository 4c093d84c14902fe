package sim

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"

	"github.com/nearline/nearline/internal/jsonobject"
)

// nearcoreNext rewrites one JSON document (an answer the node serves, or its
// genesis.json) as a newer nearcore would serve it: members and variants
// Nearline does not model are added. The rewrite is a pure function of each
// object alone, never of the request, so an object gets the same added
// members wherever it appears (an account in view_account, in an
// account_update change and in a genesis record; an access key in
// view_access_key, in view_access_key_list, in an access_key_update change,
// in an AddKey action and in a genesis record; a transaction in its chunk
// and in its status). Members keep their order; the output is compact.
//
// What is added, object by object:
//   - account (amount, locked, code_hash, storage_usage): next_account_field
//     (a stand-in: global_contract_* are modelled since global contracts
//     are) after storage_paid_at (or, in a genesis
//     record, after version), before block_height/block_hash;
//   - access key (nonce, permission): gas_key_info after permission;
//   - chunk header (chunk_hash, prev_block_hash, height_created, shard_id):
//     proposed_split after congestion_info;
//   - transaction (signer_id, public_key, nonce, receiver_id, actions):
//     nonce_index after nonce;
//   - execution outcome (logs, receipt_ids, gas_burnt, executor_id, status):
//     compute_usage at the end;
//   - action receipt (signer_id, signer_public_key, gas_price, actions):
//     refund_to at the end;
//   - a third of the {"Transfer": {"deposit"}} actions (by deposit) become
//     {"TransferToGasKey": {"public_key", "deposit"}}.
//
// Values derive from the object's own modelled members, so two versions of
// an account or key get different added members, as they would upstream.
func nearcoreNext(doc []byte) ([]byte, error) {
	root, err := jsonobject.Parse(doc)
	if err != nil {
		return nil, fmt.Errorf("rewrite as nearcore next: %w", err)
	}
	rewriteNext(root)
	return root.AppendJSON(make([]byte, 0, len(doc)+len(doc)/8)), nil
}

// gasKeyPublicKey is the public key a TransferToGasKey action names.
const gasKeyPublicKey = `"ed25519:11111111111111111111111111111111"`

// rewriteNext rewrites n's children, then n.
func rewriteNext(n *jsonobject.Node) {
	for _, m := range n.Items() {
		rewriteNext(m)
	}
	if !n.IsObject() {
		return
	}
	switch {
	case n.Has("amount", "locked", "code_hash", "storage_usage"):
		after := "storage_usage"
		if n.Member("storage_paid_at") != nil {
			after = "storage_paid_at"
		} else if n.Member("version") != nil {
			after = "version"
		}
		n.InsertAfter(after, "next_account_field", digestOrNull(n, "code_hash", "storage_usage", "amount"))
	case n.Has("nonce", "permission"):
		info := jsonobject.Scalar("null")
		if d := digest(n, "nonce"); d%3 != 0 {
			info = jsonobject.NewObject()
			info.AppendMember("balance", jsonobject.Scalar(strconv.Quote(strconv.FormatUint(uint64(d%1000), 10))))
			info.AppendMember("num_nonces", jsonobject.Scalar(strconv.FormatUint(uint64(d%5), 10)))
		}
		n.InsertAfter("permission", "gas_key_info", info)
	case n.Has("chunk_hash", "prev_block_hash", "height_created", "shard_id"):
		n.InsertAfter("congestion_info", "proposed_split", digestOrNull(n, "chunk_hash"))
	case n.Has("signer_id", "public_key", "nonce", "receiver_id", "actions"):
		index := jsonobject.Scalar("null")
		if d := digest(n, "nonce"); d%3 != 0 {
			index = jsonobject.Scalar(strconv.FormatUint(uint64(d%16), 10))
		}
		n.InsertAfter("nonce", "nonce_index", index)
	case n.Has("logs", "receipt_ids", "gas_burnt", "executor_id", "status"):
		n.AppendMember("compute_usage", n.Member("gas_burnt"))
	case n.Has("signer_id", "signer_public_key", "gas_price", "actions"):
		refund := jsonobject.Scalar("null")
		if signer := n.Member("signer_id"); signer.Text() != "system" {
			refund = signer
		}
		n.AppendMember("refund_to", refund)
	case len(n.Names()) == 1 && n.Names()[0] == "Transfer":
		body := n.Items()[0]
		if deposit := body.Member("deposit"); deposit != nil && len(body.Names()) == 1 && digest(body, "deposit")%3 == 0 {
			gasKey := jsonobject.NewObject()
			gasKey.AppendMember("public_key", jsonobject.Scalar(gasKeyPublicKey))
			gasKey.AppendMember("deposit", deposit)
			n.ReplaceMember("Transfer", "TransferToGasKey", gasKey)
		}
	}
}

// digest hashes the encoded values of n's members names.
func digest(n *jsonobject.Node, names ...string) uint32 {
	h := fnv.New32a()
	for _, name := range names {
		if m := n.Member(name); m != nil {
			h.Write(m.AppendJSON(nil))
		}
		h.Write([]byte{0})
	}
	return h.Sum32()
}

// digestOrNull is null for half of the objects and a hash-like string for
// the others, by the digest of names.
func digestOrNull(n *jsonobject.Node, names ...string) *jsonobject.Node {
	d := digest(n, names...)
	if d%2 == 0 {
		return jsonobject.Scalar("null")
	}
	return jsonobject.Scalar(strconv.Quote(fmt.Sprintf("next%08x", d)))
}

// nextWriter buffers an answer so that nearcoreNextHandler can rewrite it.
type nextWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *nextWriter) Header() http.Header { return w.header }

func (w *nextWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *nextWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// nearcoreNextHandler serves next's answers rewritten by nearcoreNext. A
// body that is not JSON is passed on as it is.
func nearcoreNextHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := &nextWriter{header: w.Header()}
		next.ServeHTTP(buf, r)
		body := buf.body.Bytes()
		if rewritten, err := nearcoreNext(body); err == nil {
			body = rewritten
		}
		if buf.header.Get("Content-Length") != "" {
			buf.header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(statusOr200(buf.status))
		_, _ = w.Write(body)
	})
}

// statusOr200 is status, or 200 for a handler that wrote nothing.
func statusOr200(status int) int {
	if status == 0 {
		return http.StatusOK
	}
	return status
}
