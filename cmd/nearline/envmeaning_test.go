package main

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// readsOnPurpose are the variables a command reads for another command's
// flag, with the same meaning though its help says it its own way: health
// asks the server where serve and run listen, behind their API keys.
var readsOnPurpose = map[string][]string{
	"NEARLINE_LISTEN":   {"health"},
	"NEARLINE_API_KEYS": {"health"},
}

// TestOneVariableOneMeaning: the environment is shared by every command a
// shell or compose file runs, so a variable read by several commands must
// mean one thing to all of them: every flag that reads it has the same
// help (run's flags are index's and serve's, and some of serve's go by
// another name in run, which the help may not change). Before it,
// NEARLINE_LISTEN was the simulator's address and the server's,
// NEARLINE_REQUEST_TIMEOUT the upstream's request limit and the server's,
// NEARLINE_UPSTREAM the block source and the forwarding target.
func TestOneVariableOneMeaning(t *testing.T) {
	t.Parallel()
	type reader struct{ command, flag, usage string }
	byVar := map[string][]reader{}
	for _, c := range commands() {
		for _, f := range helpOf(t, c.name).flags {
			if slices.Contains(readsOnPurpose[f.env], c.name) {
				continue
			}
			byVar[f.env] = append(byVar[f.env], reader{c.name, f.name, f.usage})
		}
	}
	shared := 0
	for _, v := range slices.Sorted(maps.Keys(byVar)) {
		readers := byVar[v]
		if len(readers) > 1 {
			shared++
		}
		for _, r := range readers[1:] {
			require.Equal(t, readers[0].usage, r.usage, "%s means %q to nearline %s --%s and %q to nearline %s --%s",
				v, readers[0].usage, readers[0].command, readers[0].flag, r.usage, r.command, r.flag)
		}
	}
	require.Greater(t, shared, 5, fmt.Sprintf("variables read by several commands: %d; the help's format may have changed", shared))
}
