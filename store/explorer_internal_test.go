package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEventPosition: a token event's activity position packs its delay and
// its outcome's, log's and event's places in fields of their own, and
// refuses a place its field cannot hold rather than share a key.
func TestEventPosition(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		delay           int64
		outcome         int32
		logIndex, index int
		want            int64
		wantErr         bool
	}{
		{name: "first", want: 0},
		{name: "each field", delay: 2, outcome: 1, logIndex: 3, index: 4, want: 2<<40 | 1<<24 | 3<<16 | 4},
		{name: "largest", delay: 1<<23 - 1, outcome: 1<<16 - 1, logIndex: 255, index: 1<<16 - 1, want: 1<<63 - 1},
		{name: "delay too large", delay: 1 << 23, wantErr: true},
		{name: "negative delay", delay: -1, wantErr: true},
		{name: "outcome too large", outcome: 1 << 16, wantErr: true},
		{name: "log too large", logIndex: 256, wantErr: true},
		{name: "event too large", index: 1 << 16, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := eventPosition(tc.delay, tc.outcome, tc.logIndex, tc.index)
			if tc.wantErr {
				require.ErrorIs(t, err, errEventPlace)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestMayHoldEvents: an outcome's logs are passed over undecoded only when
// they are an array of strings none of which can be an event; logs that
// hold the prefix (even escaped), are not an array of strings or are not
// JSON are decoded, for their events or their error, as before.
func TestMayHoldEvents(t *testing.T) {
	t.Parallel()
	for logs, want := range map[string]bool{
		`[]`:                          false,
		`["Transfer 5 from a to b"]`:  false,
		`["a \"quoted\" log","b\\n"]`: false,
		`["EVENT_JSON:{}"]`:           true,
		`["x","EVENT_JSON:{\"standard\":\"nep141\"}"]`: true,
		`["\u0045VENT_JSON:{}"]`:                       true,
		`["plain \u00e9"]`:                             true,
		`[1]`:                                          true,
		`["a",null]`:                                   true,
		`null`:                                         true,
		`{"a":"b"}`:                                    true,
		`["a"] `:                                       true,
		`["a"`:                                         true,
		`[`:                                            true,
		`["a",`:                                        true,
		``:                                             true,
	} {
		require.Equal(t, want, mayHoldEvents([]byte(logs)), logs)
	}
}
