package events

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func str(s string) *string { return &s }

// short is a Row without the envelope's members, for table tests.
type short struct {
	Index, Item, Token int
	Account, Other     string
	TokenID            string
	Delta              string
	Memo               *string
}

func shorten(rows []Row) []short {
	var out []short
	for _, r := range rows {
		out = append(out, short{r.Index, r.ItemIndex, r.TokenIndex, r.AccountID, r.OtherAccountID, r.TokenID, r.Delta.String(), r.Memo})
	}
	return out
}

func TestParseGivesOneRowPerAffectedAccount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, log       string
		standard, event string
		want            []short
	}{
		{"ft_mint", `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"ft.near","amount":"1000","memo":"new"}]}`,
			NEP141, "ft_mint", []short{{0, 0, 0, "ft.near", "", "", "1000", str("new")}}},
		{"ft_transfer two items", `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"a.near","new_owner_id":"b.near","amount":"5"},{"old_owner_id":"b.near","new_owner_id":"b.near","amount":"340282366920938463463374607431768211455"}]}`,
			NEP141, "ft_transfer", []short{
				{0, 0, 0, "a.near", "b.near", "", "-5", nil}, {1, 0, 0, "b.near", "a.near", "", "5", nil},
				{2, 1, 0, "b.near", "b.near", "", "-340282366920938463463374607431768211455", nil},
				{3, 1, 0, "b.near", "b.near", "", "340282366920938463463374607431768211455", nil}}},
		{"ft_burn", `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_burn","data":[{"owner_id":"alice.near","amount":"7","memo":"storage_unregister"}]}`,
			NEP141, "ft_burn", []short{{0, 0, 0, "alice.near", "", "", "-7", str("storage_unregister")}}},
		{"nft_mint two tokens", `EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["1","2"]}]}`,
			NEP171, "nft_mint", []short{{0, 0, 0, "bob.near", "", "1", "1", nil}, {1, 0, 1, "bob.near", "", "2", "1", nil}}},
		{"nft_transfer", `EVENT_JSON:{"standard":"nep171","version":"1.2.0","event":"nft_transfer","data":[{"authorized_id":"market.near","old_owner_id":"bob.near","new_owner_id":"carol.near","token_ids":["x"],"memo":null}]}`,
			NEP171, "nft_transfer", []short{{0, 0, 0, "bob.near", "carol.near", "x", "-1", nil}, {1, 0, 0, "carol.near", "bob.near", "x", "1", nil}}},
		{"nft_burn", `EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_burn","data":[{"owner_id":"carol.near","token_ids":["x"]}]}`,
			NEP171, "nft_burn", []short{{0, 0, 0, "carol.near", "", "x", "-1", nil}}},
		{"mt_mint", `EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_mint","data":[{"owner_id":"dan.near","token_ids":["a","b"],"amounts":["1","20"]}]}`,
			NEP245, "mt_mint", []short{{0, 0, 0, "dan.near", "", "a", "1", nil}, {1, 0, 1, "dan.near", "", "b", "20", nil}}},
		{"mt_transfer", `EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_transfer","data":[{"old_owner_id":"dan.near","new_owner_id":"eve.near","token_ids":["a"],"amounts":["3"],"memo":"m"}]}`,
			NEP245, "mt_transfer", []short{{0, 0, 0, "dan.near", "eve.near", "a", "-3", str("m")}, {1, 0, 0, "eve.near", "dan.near", "a", "3", str("m")}}},
		{"mt_burn", `EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_burn","data":[{"owner_id":"eve.near","token_ids":["a"],"amounts":["3"]}]}`,
			NEP245, "mt_burn", []short{{0, 0, 0, "eve.near", "", "a", "-3", nil}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows, err := Parse(c.log)
			require.NoError(t, err)
			require.Equal(t, c.want, shorten(rows))
			for _, r := range rows {
				require.Equal(t, c.standard, r.Standard)
				require.Equal(t, c.event, r.Event)
				require.NotEmpty(t, r.Version)
			}
		})
	}
}

func TestParseIgnoresWhatIsNotATokenEvent(t *testing.T) {
	t.Parallel()
	for _, log := range []string{
		"Transfer 5 from a.near to b.near",
		"event_json:{}",
		` EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}]}`,
		`EVENT_JSON:{"standard":"dip4","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_metadata_update","data":[{"token_ids":["1"]}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"a.near","token_ids":["1"]}]}`,
		`EVENT_JSON:{"version":"1.0.0","event":"ft_mint","data":[]}`,
		`EVENT_JSON:not json at all`,
	} {
		rows, err := Parse(log)
		require.NoError(t, err, log)
		require.Empty(t, rows, log)
	}
}

func TestParseRefusesMalformedEventsWhole(t *testing.T) {
	t.Parallel()
	for _, log := range []string{
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}`,
		`EVENT_JSON:{"standard":"nep141","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":{"owner_id":"a.near","amount":"1"}}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":null}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[null]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"-1"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"340282366920938463463374607431768211456"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":5}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"a.near","new_owner_id":"b.near","amount":"1"},{"old_owner_id":"a.near","amount":"1"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"Not An Account","amount":"1"}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"a.near","token_ids":[]}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"a.near","token_ids":[1]}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_transfer","data":[{"old_owner_id":"a.near","new_owner_id":"b.near","token_ids":["1"],"authorized_id":"!"}]}`,
		`EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_mint","data":[{"owner_id":"a.near","token_ids":["1","2"],"amounts":["1"]}]}`,
		`EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_burn","data":[{"owner_id":"a.near","token_ids":["1"],"amounts":["1"],"memo":7}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint"`,
	} {
		rows, err := Parse(log)
		require.ErrorIs(t, err, ErrMalformed, log)
		require.Empty(t, rows, log)
	}
}

// FuzzParse checks that Parse never panics, that a malformed event gives no
// rows, and that every row it gives holds what the standard promises.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"a.near","new_owner_id":"b.near","amount":"5","memo":"x"}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["1","2"]}]}`,
		`EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_burn","data":[{"owner_id":"eve.near","token_ids":["a"],"amounts":["3"],"authorized_id":"m.near"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}`,
		"plain log",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log string) {
		rows, err := Parse(log)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if rows != nil {
				t.Fatalf("malformed log gave %d rows", len(rows))
			}
			return
		}
		if len(rows) > 0 && !strings.HasPrefix(log, Prefix) {
			t.Fatalf("rows from a log without %s", Prefix)
		}
		limit := new(big.Int).Lsh(big.NewInt(1), 128)
		for i, r := range rows {
			if r.Index != i {
				t.Fatalf("row %d has index %d", i, r.Index)
			}
			if shapes[r.Event].standard != r.Standard {
				t.Fatalf("event %s under standard %s", r.Event, r.Standard)
			}
			if r.AccountID == "" || r.Delta == nil || r.Delta.Sign() == 0 && r.Standard == NEP171 || r.Delta.CmpAbs(limit) >= 0 {
				t.Fatalf("row %d: %+v", i, r)
			}
			if r.Standard == NEP171 && r.Delta.CmpAbs(big.NewInt(1)) != 0 {
				t.Fatalf("nft row %d moves %s", i, r.Delta)
			}
			if r.Memo != nil {
				if _, err := json.Marshal(*r.Memo); err != nil {
					t.Fatalf("memo: %v", err)
				}
			}
		}
	})
}

// FuzzParseAgreesWithEncodingJSON holds Parse, which decodes plain ASCII
// with goccy/go-json, to the same parse through encoding/json alone: the
// same rows, and an error (ErrMalformed) for the same logs. go test runs
// the seeds; run it further by hand with a bounded count: go test
// ./events -run '^$' -fuzz FuzzParseAgreesWithEncodingJSON -fuzztime
// 200000x
func FuzzParseAgreesWithEncodingJSON(f *testing.F) {
	for _, seed := range []string{
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"a.near","new_owner_id":"b.near","amount":"5","memo":"x"}]}`,
		`EVENT_JSON:{"standard":"nep171","version":"1.0.0","event":"nft_mint","data":[{"owner_id":"bob.near","token_ids":["1","2"]}]}`,
		`EVENT_JSON:{"standard":"nep245","version":"1.0.0","event":"mt_burn","data":[{"owner_id":"eve.near","token_ids":["a"],"amounts":["3"],"authorized_id":"m.near"}]}`,
		`EVENT_JSON:{"Standard":"nep141","VERSION":"1","event":"ft_mint","event":"ft_burn","data":[{"owner_id":"a.near","amount":"1","Amount":"2"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":1}]}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":null,"amount":"1"}]}`,
		`EVENT_JSON:{"standard":"nep141","version":null,"event":"ft_mint","data":{}}`,
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1","memo":"\u00e9\ud800"}]} `,
		"EVENT_JSON:{\"standard\":\"nep141\",\"version\":\"1\",\"event\":\"ft_mint\",\"data\":[{\"owner_id\":\"a.near\",\"amount\":\"1\",\"memo\":\"\xff\"}]}",
		`EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_mint","data":[{"owner_id":"a.near","amount":"1"}]}x`,
		`EVENT_JSON: {"standard" : "nep141","version":"1.0.0","event":"ft_mint","data":[ {"owner_id":"a.near","amount":"1e3"} ] }`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log string) {
		got, gotErr := Parse(log)
		want, wantErr := parse(log, json.Unmarshal)
		if (gotErr == nil) != (wantErr == nil) || errors.Is(gotErr, ErrMalformed) != errors.Is(wantErr, ErrMalformed) {
			t.Fatalf("%q: error %v, encoding/json's %v", log, gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d rows, encoding/json's %d", log, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Delta.Cmp(w.Delta) != 0 {
				t.Fatalf("%q: row %d moves %s, encoding/json's %s", log, i, g.Delta, w.Delta)
			}
			g.Delta, w.Delta = nil, nil
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("%q: row %d %+v, encoding/json's %+v", log, i, g, w)
			}
		}
	})
}

// BenchmarkParse parses an ft_transfer log as contracts write them, with
// Parse and with encoding/json alone.
func BenchmarkParse(b *testing.B) {
	log := `EVENT_JSON:{"standard":"nep141","version":"1.0.0","event":"ft_transfer","data":[{"old_owner_id":"relay.tg","new_owner_id":"7dd2a4b2d1f7e0c3a9e6b5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4","amount":"1000000000000000000","memo":"claim"}]}`
	for name, unmarshal := range map[string]func([]byte, any) error{"Parse": unmarshal, "encoding-json": json.Unmarshal} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(log, unmarshal); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
