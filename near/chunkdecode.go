package near

import (
	"bytes"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonread"
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
	d := chunkDecoder{Reader: jsonread.Reader{B: raw}}
	if d.chunk(v) && d.I == len(d.B) {
		return nil
	}
	*v = ChunkView{}
	return fastjson.Unmarshal(raw, v)
}

// chunkDecoder is the fast pass over a compact chunk answer. In Strict
// (inside a Delegate action) it takes only what the general decoder's
// encoding gives back byte for byte (decodeDelegate's rule).
type chunkDecoder struct {
	jsonread.Reader
}

// u128 reads a U128, a string of 1 to 39 digits (when strict, without a
// leading zero, as U128 encodes).
func u128(d *jsonread.Reader, v *U128) bool {
	s, ok := d.Plain()
	if !ok || len(s) == 0 || len(s) > 39 || !allDigits(s) || d.Strict && len(s) > 1 && s[0] == '0' {
		return false
	}
	*v, ok = digitsU128(s)
	return ok
}

var chunkNames = []string{"author", "header", "transactions", "receipts"}

func (d *chunkDecoder) chunk(v *ChunkView) bool {
	return d.Object(chunkNames, func(i int) bool {
		switch i {
		case 0:
			return d.Str(&v.Author)
		case 1:
			return d.General(d.I, &v.Header)
		case 2:
			return jsonread.List(&d.Reader, &v.Transactions, d.transaction)
		default:
			return jsonread.List(&d.Reader, &v.Receipts, d.receipt)
		}
	})
}

var transactionNames = []string{"signer_id", "public_key", "nonce", "receiver_id", "actions", "priority_fee", "signature", "hash"}

func (d *chunkDecoder) transaction(t *SignedTransactionView) bool {
	start := d.I
	ok := d.Object(transactionNames, func(i int) bool {
		switch i {
		case 0:
			return d.Str(&t.SignerID)
		case 1:
			return d.Str(&t.PublicKey)
		case 2:
			return d.U64(&t.Nonce)
		case 3:
			return d.Str(&t.ReceiverID)
		case 4:
			return jsonread.List(&d.Reader, &t.Actions, d.action)
		case 5:
			return d.U64(&t.PriorityFee)
		case 6:
			return d.Str(&t.Signature)
		default:
			return d.Str(&t.Hash)
		}
	})
	if !ok {
		*t = SignedTransactionView{}
		return d.General(start, t)
	}
	return true
}

var receiptNames = []string{"predecessor_id", "receiver_id", "receipt_id", "receipt", "priority"}

func (d *chunkDecoder) receipt(r *ReceiptView) bool {
	start := d.I
	ok := d.Object(receiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.Str(&r.PredecessorID)
		case 1:
			return d.Str(&r.ReceiverID)
		case 2:
			return d.Str(&r.ReceiptID)
		case 3:
			return d.receiptEnum(&r.Receipt)
		default:
			return d.U64(&r.Priority)
		}
	})
	if !ok {
		*r = ReceiptView{}
		return d.General(start, r)
	}
	return true
}

// receiptEnum reads {"Action": {...}} or {"Data": {...}}.
func (d *chunkDecoder) receiptEnum(r *ReceiptEnumView) bool {
	if !d.Next('{') {
		return false
	}
	k, ok := d.Key()
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
	return ok && d.Next('}')
}

var actionReceiptNames = []string{"signer_id", "signer_public_key", "gas_price", "output_data_receivers", "input_data_ids", "actions", "is_promise_yield"}

func (d *chunkDecoder) actionReceipt(a *ActionReceiptView) bool {
	return d.Object(actionReceiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.Str(&a.SignerID)
		case 1:
			return d.Str(&a.SignerPublicKey)
		case 2:
			return u128(&d.Reader, &a.GasPrice)
		case 3:
			return jsonread.List(&d.Reader, &a.OutputDataReceivers, d.dataReceiver)
		case 4:
			return jsonread.List(&d.Reader, &a.InputDataIDs, d.Str)
		case 5:
			return jsonread.List(&d.Reader, &a.Actions, d.action)
		default:
			return d.Bool(&a.IsPromiseYield)
		}
	})
}

var dataReceiverNames = []string{"data_id", "receiver_id"}

func (d *chunkDecoder) dataReceiver(r *DataReceiverView) bool {
	return d.Object(dataReceiverNames, func(i int) bool {
		if i == 0 {
			return d.Str(&r.DataID)
		}
		return d.Str(&r.ReceiverID)
	})
}

var dataReceiptNames = []string{"data_id", "data", "is_promise_resume"}

func (d *chunkDecoder) dataReceipt(r *DataReceiptView) bool {
	return d.Object(dataReceiptNames, func(i int) bool {
		switch i {
		case 0:
			return d.Str(&r.DataID)
		case 1:
			if bytes.HasPrefix(d.B[d.I:], []byte("null")) {
				r.Data, d.I = nil, d.I+4
				return true
			}
			r.Data = new([]byte)
			return d.Base64(r.Data)
		default:
			return d.Bool(&r.IsPromiseResume)
		}
	})
}

// action reads an action of the kinds most blocks are made of
// (CreateAccount, FunctionCall, Transfer, a Delegate of those); any other,
// or one of another shape, goes to ActionView's own decoding. In strict
// (a Delegate's actions) only those kinds are taken.
func (d *chunkDecoder) action(a *ActionView) bool {
	start := d.I
	if d.fastAction(a) {
		return true
	}
	if d.Strict {
		return false
	}
	*a = ActionView{}
	return d.General(start, a)
}

var (
	functionCallNames = []string{"method_name", "args", "gas", "deposit"}
	transferNames     = []string{"deposit"}
)

func (d *chunkDecoder) fastAction(a *ActionView) bool {
	if d.At('"') {
		var name []byte
		name, ok := d.Plain()
		a.CreateAccount = ok && string(name) == "CreateAccount"
		return a.CreateAccount
	}
	if !d.Next('{') {
		return false
	}
	k, ok := d.Key()
	if !ok {
		return false
	}
	switch string(k) {
	case "FunctionCall":
		f := new(FunctionCallAction)
		a.FunctionCall = f
		ok = d.Object(functionCallNames, func(i int) bool {
			switch i {
			case 0:
				return d.Str(&f.MethodName)
			case 1:
				return d.Base64(&f.Args)
			case 2:
				return d.U64(&f.Gas)
			default:
				return u128(&d.Reader, &f.Deposit)
			}
		})
	case "Transfer":
		t := new(TransferAction)
		a.Transfer = t
		ok = d.Object(transferNames, func(int) bool { return u128(&d.Reader, &t.Deposit) })
	case ActionDelegate:
		if d.Strict {
			return false
		}
		a.Delegate = new(SignedDelegateAction)
		d.Strict = true
		ok = d.signedDelegate(a.Delegate)
		d.Strict = false
	default:
		return false
	}
	return ok && d.Next('}')
}

var (
	signedDelegateNames = []string{"delegate_action", "signature"}
	delegateNames       = []string{"sender_id", "receiver_id", "actions", "nonce", "max_block_height", "public_key"}
)

func (d *chunkDecoder) signedDelegate(s *SignedDelegateAction) bool {
	return d.Object(signedDelegateNames, func(i int) bool {
		if i == 1 {
			return d.Str(&s.Signature)
		}
		a := &s.DelegateAction
		return d.Object(delegateNames, func(i int) bool {
			switch i {
			case 0:
				return d.Str(&a.SenderID)
			case 1:
				return d.Str(&a.ReceiverID)
			case 2:
				return jsonread.List(&d.Reader, &a.Actions, d.action)
			case 3:
				return d.U64(&a.Nonce)
			case 4:
				return d.U64(&a.MaxBlockHeight)
			default:
				return d.Str(&a.PublicKey)
			}
		})
	})
}

// DecodeStateChange decodes a state change (StateChangeWithCauseView) as
// fastjson.Unmarshal does; raw must be compact. The fast pass takes the
// changes most blocks are made of (a cause of a type and a hash; an
// account's data, its account or its access keys); any other shape goes
// to the general decoder, as in DecodeChunkView.
func DecodeStateChange(raw []byte, v *StateChangeWithCauseView) error {
	d := chunkDecoder{Reader: jsonread.Reader{B: raw}}
	if d.stateChange(v) && d.I == len(d.B) {
		return nil
	}
	*v = StateChangeWithCauseView{}
	return fastjson.Unmarshal(raw, v)
}

var (
	stateChangeNames = []string{"cause", "type", "change"}
	causeNames       = []string{"type", "tx_hash", "receipt_hash"}
	changeNames      = []string{"account_id", "key_base64", "value_base64", "public_key", "access_key",
		"amount", "locked", "code_hash", "storage_usage", "storage_paid_at"}
)

func (d *chunkDecoder) stateChange(v *StateChangeWithCauseView) bool {
	return d.Object(stateChangeNames, func(i int) bool {
		switch i {
		case 0:
			c := &v.Cause
			return d.Object(causeNames, func(i int) bool {
				switch i {
				case 0:
					return d.Str(&c.Type)
				case 1:
					return d.Str(&c.TxHash)
				default:
					return d.Str(&c.ReceiptHash)
				}
			})
		case 1:
			return d.Str(&v.Type)
		default:
			c := &v.Change
			return d.Object(changeNames, func(i int) bool {
				if i >= 5 && c.Account == nil {
					c.Account = new(Account)
				}
				switch i {
				case 0:
					return d.Str(&c.AccountID)
				case 1:
					c.KeyBase64 = new([]byte)
					return d.Base64(c.KeyBase64)
				case 2:
					c.ValueBase64 = new([]byte)
					return d.Base64(c.ValueBase64)
				case 3:
					c.PublicKey = new(string)
					return d.Str(c.PublicKey)
				case 4:
					c.AccessKey = new(AccessKeyView)
					return d.accessKey(c.AccessKey)
				case 5:
					return u128(&d.Reader, &c.Account.Amount)
				case 6:
					return u128(&d.Reader, &c.Account.Locked)
				case 7:
					return d.Str(&c.Account.CodeHash)
				case 8:
					return d.U64(&c.Account.StorageUsage)
				default:
					return d.U64(&c.Account.StoragePaidAt)
				}
			})
		}
	})
}

var accessKeyNames = []string{"nonce", "permission"}

// accessKey reads an access key of the members AccessKeyView models (no
// Extra), its permission FullAccess or decoded by AccessKeyPermission's
// own method.
func (d *chunkDecoder) accessKey(k *AccessKeyView) bool {
	return d.Object(accessKeyNames, func(i int) bool {
		if i == 0 {
			return d.U64(&k.Nonce)
		}
		if d.At('"') {
			name, ok := d.Plain()
			return ok && string(name) == "FullAccess"
		}
		return d.General(d.I, &k.Permission)
	})
}
