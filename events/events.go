package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/nearline/nearline/internal/fastjson"
	"github.com/nearline/nearline/internal/jsonobject"
	"github.com/nearline/nearline/near"
)

// Prefix starts every NEP-297 event log.
const Prefix = "EVENT_JSON:"

// The standards parsed, as their events name them.
const (
	NEP141 = "nep141" // fungible tokens: ft_events
	NEP171 = "nep171" // non-fungible tokens: nft_events
	NEP245 = "nep245" // multi tokens: mt_events
)

// ErrMalformed is returned (wrapped) for an event of a parsed standard that
// does not follow it.
var ErrMalformed = errors.New("malformed event")

// Row is one affected account of one token movement.
type Row struct {
	Standard string // NEP141, NEP171 or NEP245
	Version  string // the event's version, as logged
	Event    string // ft_transfer, nft_mint, ...
	// Index numbers the log's rows from 0 (see the package doc).
	Index int
	// ItemIndex is the place of the row's item in the event's data, and
	// TokenIndex the place of its token in the item's token_ids (0 for
	// fungible tokens).
	ItemIndex, TokenIndex int
	// AccountID is the affected account; OtherAccountID the other party of
	// a transfer ("" for mints and burns).
	AccountID, OtherAccountID string
	// TokenID is the token (NEP-171, NEP-245; "" for NEP-141).
	TokenID string
	// Delta is the signed change of the account's balance of the token:
	// the amount (NEP-141, NEP-245) or 1 (NEP-171), negative for what it
	// gave.
	Delta *big.Int
	// Memo and AuthorizedID are the item's, when it has them.
	Memo, AuthorizedID *string
}

// envelope is NEP-297's event.
type envelope struct {
	Standard *string         `json:"standard"`
	Version  *string         `json:"version"`
	Event    *string         `json:"event"`
	Data     json.RawMessage `json:"data"`
}

// item is the union of the nine events' data items.
type item struct {
	OwnerID      *string   `json:"owner_id"`
	OldOwnerID   *string   `json:"old_owner_id"`
	NewOwnerID   *string   `json:"new_owner_id"`
	Amount       *string   `json:"amount"`
	TokenIDs     *[]string `json:"token_ids"`
	Amounts      *[]string `json:"amounts"`
	Memo         *string   `json:"memo"`
	AuthorizedID *string   `json:"authorized_id"`
}

// shape says which members an event's items carry.
type shape struct {
	standard string
	transfer bool // old_owner_id and new_owner_id, else owner_id
	give     bool // a burn: the owner gives
}

var shapes = map[string]shape{
	"ft_mint":      {standard: NEP141},
	"ft_transfer":  {standard: NEP141, transfer: true},
	"ft_burn":      {standard: NEP141, give: true},
	"nft_mint":     {standard: NEP171},
	"nft_transfer": {standard: NEP171, transfer: true},
	"nft_burn":     {standard: NEP171, give: true},
	"mt_mint":      {standard: NEP245},
	"mt_transfer":  {standard: NEP245, transfer: true},
	"mt_burn":      {standard: NEP245, give: true},
}

// Parse returns the rows of one log. A log that is not an event of the
// three standards with one of their nine event names gives no rows and no
// error; one that is but does not follow its standard gives an error
// wrapping ErrMalformed.
func Parse(log string) ([]Row, error) { return parse(log, unmarshal) }

// parse is Parse with the given JSON decoder.
func parse(log string, unmarshal func([]byte, any) error) ([]Row, error) {
	body, ok := strings.CutPrefix(log, Prefix)
	if !ok {
		return nil, nil
	}
	var env envelope
	if err := unmarshal([]byte(body), &env); err != nil {
		// Not JSON: whose standard it meant cannot be told. Only one
		// that names a parsed standard is ours to count.
		if mentionsStandard(body) {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return nil, nil
	}
	if env.Standard == nil || env.Event == nil {
		return nil, nil
	}
	sh, known := shapes[*env.Event]
	if !known || sh.standard != *env.Standard {
		return nil, nil
	}
	if env.Version == nil {
		return nil, fmt.Errorf("%w: %s without version", ErrMalformed, *env.Event)
	}
	var items []item
	if err := unmarshal(env.Data, &items); err != nil || len(items) == 0 {
		return nil, fmt.Errorf("%w: %s data is not a non-empty array of objects", ErrMalformed, *env.Event)
	}
	p := parser{standard: *env.Standard, version: *env.Version, event: *env.Event, shape: sh}
	for i, it := range items {
		if err := p.item(i, it); err != nil {
			return nil, fmt.Errorf("%w: %s item %d: %v", ErrMalformed, *env.Event, i, err)
		}
	}
	return p.rows, nil
}

// unmarshal decodes an event, or its data, into v as encoding/json does:
// with goccy/go-json (about twice as fast on these small objects) when
// the text is compact, valid JSON of printable ASCII without escapes,
// where the two agree (FuzzParseAgreesWithEncodingJSON); else with
// encoding/json, which replaces invalid UTF-8 where goccy/go-json keeps
// it, and validates members goccy/go-json passes over.
func unmarshal(text []byte, v any) error {
	for _, c := range text {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return json.Unmarshal(text, v)
		}
	}
	if end, err := jsonobject.SkipValue(text, 0); err != nil || end != len(text) {
		return json.Unmarshal(text, v)
	}
	return fastjson.Unmarshal(text, v)
}

// mentionsStandard reports whether an event that is not JSON names one of
// the parsed standards.
func mentionsStandard(body string) bool {
	for _, s := range []string{NEP141, NEP171, NEP245} {
		if strings.Contains(body, `"`+s+`"`) {
			return true
		}
	}
	return false
}

type parser struct {
	standard, version, event string
	shape                    shape
	rows                     []Row
}

func (p *parser) item(index int, it item) error {
	giver, getter, err := p.parties(it)
	if err != nil {
		return err
	}
	if it.AuthorizedID != nil && !near.ValidAccountID(*it.AuthorizedID) {
		return fmt.Errorf("authorized_id %q is not an account id", *it.AuthorizedID)
	}
	type token struct {
		id     string
		amount *big.Int
	}
	var tokens []token
	switch p.standard {
	case NEP141:
		if it.Amount == nil {
			return errors.New("no amount")
		}
		a, err := amount(*it.Amount)
		if err != nil {
			return err
		}
		tokens = []token{{amount: a}}
	case NEP171:
		if it.TokenIDs == nil || len(*it.TokenIDs) == 0 {
			return errors.New("no token_ids")
		}
		for _, id := range *it.TokenIDs {
			tokens = append(tokens, token{id: id, amount: big.NewInt(1)})
		}
	case NEP245:
		if it.TokenIDs == nil || len(*it.TokenIDs) == 0 {
			return errors.New("no token_ids")
		}
		if it.Amounts == nil || len(*it.Amounts) != len(*it.TokenIDs) {
			return errors.New("amounts and token_ids differ in length")
		}
		for i, id := range *it.TokenIDs {
			a, err := amount((*it.Amounts)[i])
			if err != nil {
				return err
			}
			tokens = append(tokens, token{id: id, amount: a})
		}
	}
	for ti, tk := range tokens {
		row := func(account, other string, delta *big.Int) {
			p.rows = append(p.rows, Row{Standard: p.standard, Version: p.version, Event: p.event, Index: len(p.rows),
				ItemIndex: index, TokenIndex: ti, AccountID: account, OtherAccountID: other, TokenID: tk.id,
				Delta: delta, Memo: it.Memo, AuthorizedID: it.AuthorizedID})
		}
		if giver != "" {
			row(giver, getter, new(big.Int).Neg(tk.amount))
		}
		if getter != "" {
			row(getter, giver, new(big.Int).Set(tk.amount))
		}
	}
	return nil
}

// parties returns the account that gave and the one that got ("" for the
// side a mint or burn does not have).
func (p *parser) parties(it item) (giver, getter string, err error) {
	account := func(name string, v *string) (string, error) {
		if v == nil {
			return "", fmt.Errorf("no %s", name)
		}
		if !near.ValidAccountID(*v) {
			return "", fmt.Errorf("%s %q is not an account id", name, *v)
		}
		return *v, nil
	}
	switch {
	case p.shape.transfer:
		if giver, err = account("old_owner_id", it.OldOwnerID); err != nil {
			return "", "", err
		}
		getter, err = account("new_owner_id", it.NewOwnerID)
		return giver, getter, err
	case p.shape.give:
		giver, err = account("owner_id", it.OwnerID)
		return giver, "", err
	default:
		getter, err = account("owner_id", it.OwnerID)
		return "", getter, err
	}
}

// amount parses a u128 written as a decimal string.
func amount(s string) (*big.Int, error) {
	v, err := near.ParseU128(s)
	if err != nil {
		return nil, err
	}
	return v.Big(), nil
}
