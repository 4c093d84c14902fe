package near

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
)

// DecodeChunkView decodes a `chunk` answer into v as fastjson.Unmarshal
// does, at several times its speed on what nearcore serves: one pass over
// the transactions and receipts, each member once, the action and
// receipt variants told by their one tag. raw must be compact (as a
// block document's parts are). The fast pass takes only the shapes
// nearcore serves today, with exact member names, each once, plain
// strings (ASCII without escapes) and plain numbers; a transaction,
// receipt or action of any other shape is decoded by the general
// decoder, and a chunk the fast pass cannot frame (or one the general
// decoder refuses a part of) by the general decoder whole, so that the
// result and any error are the general decoder's.
func DecodeChunkView(raw []byte, v *ChunkView) error {
	d := chunkDecoder{b: raw}
	if d.chunk(v) && d.i == len(d.b) {
		return nil
	}
	*v = ChunkView{}
	return fastjson.Unmarshal(raw, v)
}

// chunkDecoder is the fast pass over a compact chunk answer b, at b[i].
// Each of its methods returns false when what is at b[i] is not of the
// shape it takes, i then being anywhere.
type chunkDecoder struct {
	b []byte
	i int
	// strict, inside a Delegate action, takes only what the general
	// decoder's encoding gives back byte for byte (decodeDelegate's
	// rule): members in the type's order, every one present, strings
	// the encoder leaves as they are, canonical numbers and base64.
	strict bool
}

func (d *chunkDecoder) next(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *chunkDecoder) at(c byte) bool { return d.i < len(d.b) && d.b[d.i] == c }

// plain returns the contents of the string at b[i]: ASCII without escapes
// or control characters (and, when strict, without the characters the
// encoder escapes as HTML).
func (d *chunkDecoder) plain() ([]byte, bool) {
	if !d.next('"') {
		return nil, false
	}
	start := d.i
	if !d.strict {
		for d.i+8 <= len(d.b) && !special8(binary.LittleEndian.Uint64(d.b[d.i:])) {
			d.i += 8
		}
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		case d.strict && (c == '<' || c == '>' || c == '&'):
			return nil, false
		}
		d.i++
	}
	return nil, false
}

func (d *chunkDecoder) str(s *string) bool {
	b, ok := d.plain()
	*s = string(b)
	return ok
}

// key reads a member name and its colon.
func (d *chunkDecoder) key() ([]byte, bool) {
	k, ok := d.plain()
	return k, ok && d.next(':')
}

// u64 reads a number of decimal digits that fits in 64 bits, without a
// leading zero, then expects the end of the value.
func (d *chunkDecoder) u64(v *uint64) bool {
	start := d.i
	var n uint64
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		c := uint64(d.b[d.i] - '0')
		if n > (1<<64-1-c)/10 {
			return false
		}
		n = n*10 + c
		d.i++
	}
	digits := d.i - start
	if digits == 0 || digits > 1 && d.b[start] == '0' || d.i < len(d.b) && !isEnd(d.b[d.i]) {
		return false
	}
	*v = n
	return true
}

// isEnd reports whether c may follow a number in compact JSON.
func isEnd(c byte) bool { return c == ',' || c == '}' || c == ']' }

// u128 reads a U128, a string of 1 to 39 digits (when strict, without a
// leading zero, as U128 encodes).
func (d *chunkDecoder) u128(v *U128) bool {
	s, ok := d.plain()
	if !ok || len(s) == 0 || len(s) > 39 || !allDigits(s) || d.strict && len(s) > 1 && s[0] == '0' {
		return false
	}
	*v, ok = digitsU128(s)
	return ok
}

func (d *chunkDecoder) boolean(v *bool) bool {
	switch {
	case bytes.HasPrefix(d.b[d.i:], []byte("true")):
		*v, d.i = true, d.i+4
	case bytes.HasPrefix(d.b[d.i:], []byte("false")):
		*v, d.i = false, d.i+5
	default:
		return false
	}
	return true
}

// base64 reads a []byte, a string of standard base64 (when strict, the
// one encoding gives back).
func (d *chunkDecoder) base64(v *[]byte) bool {
	s, ok := d.plain()
	if !ok {
		return false
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(out, s)
	if err != nil {
		return false
	}
	*v = out[:n]
	if d.strict && base64.StdEncoding.EncodedLen(n) != len(s) {
		return false
	}
	if d.strict && n > 0 {
		// Non-zero padding bits decode too, and encode otherwise.
		var last [4]byte
		base64.StdEncoding.Encode(last[:], (*v)[n-(n-1)%3-1:])
		if !bytes.Equal(last[:], s[len(s)-4:]) {
			return false
		}
	}
	return true
}

// list reads an array, item by item; [] is an empty list, not nil, as the
// general decoder makes it.
func list[T any](d *chunkDecoder, v *[]T, item func(*T) bool) bool {
	if !d.next('[') {
		return false
	}
	out := []T{}
	if d.next(']') {
		*v = out
		return true
	}
	for {
		out = append(out, *new(T))
		if !item(&out[len(out)-1]) {
			return false
		}
		if d.next(']') {
			*v = out
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// object reads an object whose members member takes by name, in any
// order (in strict, in order), each at most once (strict: exactly once);
// names holds them in the type's order.
func (d *chunkDecoder) object(names []string, member func(i int) bool) bool {
	if !d.next('{') {
		return false
	}
	var seen uint64
	if d.next('}') {
		return !d.strict || len(names) == 0
	}
	for n := 0; ; n++ {
		k, ok := d.key()
		if !ok {
			return false
		}
		i := indexOf(names, k)
		if i < 0 || seen&(1<<i) != 0 || d.strict && i != n {
			return false
		}
		seen |= 1 << i
		if !member(i) {
			return false
		}
		if d.next('}') {
			return !d.strict || n+1 == len(names)
		}
		if !d.next(',') {
			return false
		}
	}
}

func indexOf(names []string, k []byte) int {
	for i, n := range names {
		if n == string(k) {
			return i
		}
	}
	return -1
}

// general decodes the value at b[i] with the general decoder into v: the
// part of another shape; false when it refuses it (the chunk then goes
// to the general decoder whole, for its error).
func (d *chunkDecoder) general(start int, v any) bool {
	end, err := jsonobject.SkipValue(d.b, start)
	if err != nil {
		return false
	}
	d.i = end
	return fastjson.Unmarshal(d.b[start:end], v) == nil
}

var chunkNames = []string{"author", "header", "transactions", "receipts"}

func (d *chunkDecoder) chunk(v *ChunkView) bool {
	return d.object(chunkNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&v.Author)
		case 1:
			return d.general(d.i, &v.Header)
		case 2:
			return list(d, &v.Transactions, d.transaction)
		default:
			return list(d, &v.Receipts, d.receipt)
		}
	})
}

var transactionNames = []string{"signer_id", "public_key", "nonce", "receiver_id", "actions", "priority_fee", "signature", "hash"}

func (d *chunkDecoder) transaction(t *SignedTransactionView) bool {
	start := d.i
	ok := d.object(transactionNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&t.SignerID)
		case 1:
			return d.str(&t.PublicKey)
		case 2:
			return d.u64(&t.Nonce)
		case 3:
			return d.str(&t.ReceiverID)
		case 4:
			return list(d, &t.Actions, d.action)
		case 5:
			return d.u64(&t.PriorityFee)
		case 6:
			return d.str(&t.Signature)
		default:
			return d.str(&t.Hash)
		}
	})
	if !ok {
		*t = SignedTransactionView{}
		return d.general(start, t)
	}
	return true
}

var receiptNames = []string{"predecessor_id", "receiver_id", "receipt_id", "receipt", "priority"}

func (d *chunkDecoder) receipt(r *ReceiptView) bool {
	start := d.i
	ok := d.object(receiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&r.PredecessorID)
		case 1:
			return d.str(&r.ReceiverID)
		case 2:
			return d.str(&r.ReceiptID)
		case 3:
			return d.receiptEnum(&r.Receipt)
		default:
			return d.u64(&r.Priority)
		}
	})
	if !ok {
		*r = ReceiptView{}
		return d.general(start, r)
	}
	return true
}

// receiptEnum reads {"Action": {...}} or {"Data": {...}}.
func (d *chunkDecoder) receiptEnum(r *ReceiptEnumView) bool {
	if !d.next('{') {
		return false
	}
	k, ok := d.key()
	if !ok {
		return false
	}
	switch string(k) {
	case "Action":
		r.Action = new(ActionReceiptView)
		ok = d.actionReceipt(r.Action)
	case "Data":
		r.Data = new(DataReceiptView)
		ok = d.dataReceipt(r.Data)
	default:
		return false
	}
	return ok && d.next('}')
}

var actionReceiptNames = []string{"signer_id", "signer_public_key", "gas_price", "output_data_receivers", "input_data_ids", "actions", "is_promise_yield"}

func (d *chunkDecoder) actionReceipt(a *ActionReceiptView) bool {
	return d.object(actionReceiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&a.SignerID)
		case 1:
			return d.str(&a.SignerPublicKey)
		case 2:
			return d.u128(&a.GasPrice)
		case 3:
			return list(d, &a.OutputDataReceivers, d.dataReceiver)
		case 4:
			return list(d, &a.InputDataIDs, d.str)
		case 5:
			return list(d, &a.Actions, d.action)
		default:
			return d.boolean(&a.IsPromiseYield)
		}
	})
}

var dataReceiverNames = []string{"data_id", "receiver_id"}

func (d *chunkDecoder) dataReceiver(r *DataReceiverView) bool {
	return d.object(dataReceiverNames, func(i int) bool {
		if i == 0 {
			return d.str(&r.DataID)
		}
		return d.str(&r.ReceiverID)
	})
}

var dataReceiptNames = []string{"data_id", "data", "is_promise_resume"}

func (d *chunkDecoder) dataReceipt(r *DataReceiptView) bool {
	return d.object(dataReceiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.str(&r.DataID)
		case 1:
			if bytes.HasPrefix(d.b[d.i:], []byte("null")) {
				r.Data, d.i = nil, d.i+4
				return true
			}
			r.Data = new([]byte)
			return d.base64(r.Data)
		default:
			return d.boolean(&r.IsPromiseResume)
		}
	})
}

// action reads an action of the kinds most blocks are made of
// (CreateAccount, FunctionCall, Transfer, a Delegate of those); any other,
// or one of another shape, goes to ActionView's own decoding. In strict
// (a Delegate's actions) only those kinds are taken.
func (d *chunkDecoder) action(a *ActionView) bool {
	start := d.i
	if d.fastAction(a) {
		return true
	}
	if d.strict {
		return false
	}
	*a = ActionView{}
	return d.general(start, a)
}

var (
	functionCallNames = []string{"method_name", "args", "gas", "deposit"}
	transferNames     = []string{"deposit"}
)

func (d *chunkDecoder) fastAction(a *ActionView) bool {
	if d.at('"') {
		var name []byte
		name, ok := d.plain()
		a.CreateAccount = ok && string(name) == "CreateAccount"
		return a.CreateAccount
	}
	if !d.next('{') {
		return false
	}
	k, ok := d.key()
	if !ok {
		return false
	}
	switch string(k) {
	case "FunctionCall":
		f := new(FunctionCallAction)
		a.FunctionCall = f
		ok = d.object(functionCallNames, func(i int) bool {
			switch i {
			case 0:
				return d.str(&f.MethodName)
			case 1:
				return d.base64(&f.Args)
			case 2:
				return d.u64(&f.Gas)
			default:
				return d.u128(&f.Deposit)
			}
		})
	case "Transfer":
		t := new(TransferAction)
		a.Transfer = t
		ok = d.object(transferNames, func(int) bool { return d.u128(&t.Deposit) })
	case ActionDelegate:
		if d.strict {
			return false
		}
		a.Delegate = new(SignedDelegateAction)
		d.strict = true
		ok = d.signedDelegate(a.Delegate)
		d.strict = false
	default:
		return false
	}
	return ok && d.next('}')
}

var (
	signedDelegateNames = []string{"delegate_action", "signature"}
	delegateNames       = []string{"sender_id", "receiver_id", "actions", "nonce", "max_block_height", "public_key"}
)

func (d *chunkDecoder) signedDelegate(s *SignedDelegateAction) bool {
	return d.object(signedDelegateNames, func(i int) bool {
		if i == 1 {
			return d.str(&s.Signature)
		}
		a := &s.DelegateAction
		return d.object(delegateNames, func(i int) bool {
			switch i {
			case 0:
				return d.str(&a.SenderID)
			case 1:
				return d.str(&a.ReceiverID)
			case 2:
				return list(d, &a.Actions, d.action)
			case 3:
				return d.u64(&a.Nonce)
			case 4:
				return d.u64(&a.MaxBlockHeight)
			default:
				return d.str(&a.PublicKey)
			}
		})
	})
}

// special8 reports whether any of the 8 bytes of x is not plain in a
// string: '"', '\\', a control character or a byte of 0x80 or more ("has
// a zero byte" and "has a byte less than n" bit tricks).
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	control := (x - ones*0x20) &^ x
	return (x|control|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}
