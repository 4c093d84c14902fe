package verify

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nearline/nearline/near"
)

// KindCount is how the answers to one kind of request compared.
type KindCount struct {
	Kind      string
	Requests  int
	Identical int
	// Errors are the compared answers where the node answered an error
	// (identical or not): a kind with nothing but errors compared no data.
	Errors    int
	Different int
	// Forwarded are the requests the archive would have forwarded upstream
	// (not compared).
	Forwarded int
}

// Mismatch is one request whose answers differed.
type Mismatch struct {
	Index      int // in the list Run was given
	Request    Request
	Difference Difference
}

// Report is what Run found.
type Report struct {
	Kinds       []KindCount // by kind name
	Total       KindCount
	Differences []Mismatch // the first, in request order
	Elapsed     time.Duration
}

// Different is how many answers differed.
func (r *Report) Different() int { return r.Total.Different }

// Write prints the report: a line per kind with its counts, a total, and
// the first differences (request, and where the answers first differ).
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	width := len("method")
	for _, k := range r.Kinds {
		width = max(width, len(k.Kind))
	}
	row := func(name string, c KindCount) {
		fmt.Fprintf(&b, "%-*s %9d %9d %9d %9d %9d\n", width, name, c.Requests, c.Identical, c.Different, c.Forwarded, c.Errors)
	}
	fmt.Fprintf(&b, "%-*s %9s %9s %9s %9s %9s\n", width, "method", "requests", "identical", "different", "forwarded", "errors")
	for _, k := range r.Kinds {
		row(k.Kind, k)
	}
	row("all", r.Total)
	fmt.Fprintf(&b, "\n%d requests in %s: %d identical, %d different, %d forwarded by the archive (not compared); %d of the compared answers were errors\n",
		r.Total.Requests, r.Elapsed.Round(time.Millisecond), r.Total.Identical, r.Total.Different, r.Total.Forwarded, r.Total.Errors)
	if len(r.Differences) > 0 {
		fmt.Fprintf(&b, "\nfirst %d of %d differences:\n", len(r.Differences), r.Total.Different)
		for _, m := range r.Differences {
			params := ""
			if string(m.Request.Params) != "null" {
				params = " " + near.ClipTo(string(m.Request.Params), 300)
			}
			fmt.Fprintf(&b, "  %s%s\n    %s\n", m.Request.Kind, params, m.Difference.String())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
