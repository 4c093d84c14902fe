//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/verify/verifytest"
)

// TestVerify indexes a simulated chain, then runs `nearline verify` on the
// archive: against the simulator it was indexed from every answer is
// identical (exit 0, every method listed with its counts); against a node
// that alters one method's answers it exits 1 naming that method and where
// its answers differ; against no node at all it exits 2.
func TestVerify(t *testing.T) {
	t.Parallel()
	const maxHeight = 60
	chain := binary.Chain(t, maxHeight, "--seed", "5", "--shards", "4", "--txs-per-block", "8", "--protocol-version", "77")
	dbURL := binary.IndexChain(t, 3*time.Minute, chain, "--genesis", chain.Genesis)
	verify := func(against string, extra ...string) (string, int) {
		args := append([]string{"verify", "--database-url", dbURL, "--against", against, "--sample", "20", "--seed", "2"}, extra...)
		cmd := exec.Command(string(binary), args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatalf("run nearline verify: %v", err)
		}
		t.Logf("nearline verify --against %s: exit %d\n%s%s", against, code, stdout.String(), e2ekit.Tail(stderr.String(), 10))
		return stdout.String(), code
	}

	out, code := verify(chain.URL)
	if code != 0 {
		t.Fatalf("verify against the simulator the archive was indexed from: exit %d, want 0", code)
	}
	rows := verifyRows(t, out)
	// Every kind a plan gets answered with data, but health and validators:
	// verify leaves the edges off (PlanConfig.Edges).
	answered := slices.DeleteFunc(verifytest.AnsweredKinds(), func(k string) bool { return k == "health" || k == "validators" })
	for _, kind := range answered {
		r, ok := rows[kind]
		switch {
		case !ok:
			t.Errorf("verify listed no %s", kind)
		case r.identical == 0 || r.identical == r.errors:
			t.Errorf("%s: %d identical answers, %d of them errors: no data compared", kind, r.identical, r.errors)
		}
	}
	all := rows["all"]
	if all.requests < 1000 || all.different != 0 || all.identical+all.forwarded != all.requests {
		t.Errorf("all: %+v; want over 1,000 requests, all identical or forwarded", all)
	}

	// A node whose view_account answers carry another balance.
	upstream := chain.URL
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		resp, err := http.Post(upstream, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		var req struct {
			Params struct {
				RequestType string `json:"request_type"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &req) == nil && req.Params.RequestType == "view_account" {
			answer = bytes.Replace(answer, []byte(`"amount":"`), []byte(`"amount":"7`), 1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(proxy.Close)
	out, code = verify(proxy.URL, "--show", "3")
	if code != 1 {
		t.Fatalf("verify against a node that alters view_account: exit %d, want 1", code)
	}
	rows = verifyRows(t, out)
	va := rows["query/view_account"]
	if va.different == 0 || va.different != va.requests-va.forwarded-va.errors {
		t.Errorf("query/view_account: %+v; want every answer that was not an error to differ", va)
	}
	if rows["all"].different != va.different {
		t.Errorf("all: %d differences, view_account %d; only view_account was altered", rows["all"].different, va.different)
	}
	if !regexp.MustCompile(`first 3 of \d+ differences:\n  query/view_account \{.*\}\n    at result\.amount: archive "\d+", node "7\d+"\n`).MatchString(out) {
		t.Errorf("the differences do not name query/view_account and result.amount:\n%s", out)
	}

	// No node: exit 2.
	if _, code := verify("http://127.0.0.1:1", "--timeout", "2s"); code != 2 {
		t.Errorf("verify against nothing: exit %d, want 2", code)
	}
}

// verifyRow is one line of verify's table.
type verifyRow struct{ requests, identical, different, forwarded, errors int }

// verifyRows reads verify's table: a row per method, and "all".
func verifyRows(t *testing.T, out string) map[string]verifyRow {
	t.Helper()
	rows := map[string]verifyRow{}
	re := regexp.MustCompile(`^(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)$`)
	for _, line := range strings.Split(out, "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n := make([]int, 5)
		for i := range n {
			n[i], _ = strconv.Atoi(m[i+2])
		}
		rows[m[1]] = verifyRow{n[0], n[1], n[2], n[3], n[4]}
	}
	if _, ok := rows["all"]; !ok {
		t.Fatalf("no table in verify's output:\n%s", out)
	}
	return rows
}
