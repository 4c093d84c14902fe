package docsource

import (
	"encoding/json"

	"github.com/nearline/nearline/bundle"
	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonread"
)

var (
	outcomeNames     = []string{"proof", "block_hash", "id", "outcome"}
	outcomeBodyNames = []string{"logs", "receipt_ids", "gas_burnt", "tokens_burnt", "executor_id", "status", "metadata"}
)

// decodeOutcomeFields decodes an ExecutionOutcomeWithIdView (compact) into
// f as fastjson.Unmarshal does: in one pass when it has the members
// nearcore serves, named exactly, each once (proof and metadata passed
// over), else with the general decoder.
func decodeOutcomeFields(raw []byte, f *bundle.OutcomeFields) error {
	d := jsonread.Reader{B: raw}
	var skip json.RawMessage
	o := &f.Outcome
	ok := d.Object(outcomeNames, func(i int) bool {
		switch i {
		case 0:
			return d.Raw(&skip)
		case 1:
			return d.Str(&f.BlockHash)
		case 2:
			return d.Str(&f.ID)
		default:
			return d.Object(outcomeBodyNames, func(i int) bool {
				switch i {
				case 0:
					return d.Raw(&o.Logs)
				case 1:
					return jsonread.List(&d, &o.ReceiptIDs, d.Str)
				case 2:
					return d.U64(&o.GasBurnt)
				case 3:
					var v json.RawMessage
					return d.Raw(&v) && v[0] == '"' && o.TokensBurnt.UnmarshalJSON(v) == nil
				case 4:
					return d.Str(&o.ExecutorID)
				case 5:
					return d.Raw(&o.Status)
				default:
					return d.Raw(&skip)
				}
			})
		}
	})
	if ok && d.I == len(raw) {
		return nil
	}
	*f = bundle.OutcomeFields{}
	return fastjson.Unmarshal(raw, f)
}
