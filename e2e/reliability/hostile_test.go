//go:build e2e

package reliability

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nearline/nearline/internal/e2ekit"
	"github.com/nearline/nearline/internal/procstat"
)

// maxHostileErrorBytes bounds an error answer to hostile input: however
// large the input, an error repeats a few hundred bytes of it at most.
const maxHostileErrorBytes = 4 << 10

// TestReliabilityHostileInput sends malformed and hostile requests to the
// real `nearline serve`: each gets NEAR's error e2ekit.Envelope with the right
// name and cause (or, for valid requests with nasty values, exactly the
// simulator's answer), never a 5xx, a Go or database error string, or a
// hang.
func TestReliabilityHostileInput(t *testing.T) {
	t.Parallel()
	archive := serveChain(t, 66, 80)
	chain, addr := archive.chain, archive.addr
	at := chain.head / 2

	rpc := func(method string, params any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		return string(b)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	viewState := func(prefix string) string {
		return rpc("query", map[string]any{"request_type": "view_state", "account_id": "ft.near", "prefix_base64": prefix, "block_id": at})
	}
	const parse, rve = "PARSE_ERROR", "REQUEST_VALIDATION_ERROR"
	batchOf := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"health"},`, n), ",") + "]"
	}

	for _, tc := range []struct {
		name        string
		body        string
		status      int    // default 200
		errName     string // "" with sameAsSim: a result or error equal to the simulator's
		causeName   string
		sameAsSim   bool
		wantResults bool // sameAsSim and the answer must be a result
	}{
		{name: "invalid JSON", body: `{"jsonrpc":"2.0","id":1,"method":"block",`, errName: rve, causeName: parse},
		{name: "not UTF-8 (serde_json refuses it too)", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bl\xff\xfeck\",\"params\":{}}", errName: rve, causeName: parse},
		{name: "an id that is not UTF-8", body: "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"status\"}", errName: rve, causeName: parse},
		{name: "a case-folded method beside an unknown one", body: `{"jsonrpc":"2.0","id":1,"method":"nosuch","METHOD":"gas_price","params":[null]}`, errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "a repeated method", body: `{"jsonrpc":"2.0","id":1,"method":"gas_price","method":"block","params":[null]}`, errName: rve, causeName: parse},
		{name: "a 5 MB account id", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": strings.Repeat("a", 5<<20), "block_id": at}), errName: rve, causeName: parse},
		{name: "a JSON string", body: `"block"`, errName: rve, causeName: parse},
		{name: "wrong jsonrpc version", body: `{"jsonrpc":"1.0","id":1,"method":"block","params":{"finality":"final"}}`, errName: rve, causeName: parse},
		{name: "jsonrpc of the wrong type", body: `{"jsonrpc":2,"id":1,"method":"block","params":{"finality":"final"}}`, errName: rve, causeName: parse},
		{name: "method of the wrong type", body: `{"jsonrpc":"2.0","id":1,"method":["block"],"params":{}}`, errName: rve, causeName: parse},
		{name: "params a string", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":"final"}`, errName: rve, causeName: parse},
		{name: "params an array for block", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":[1,2]}`, errName: rve, causeName: parse},
		{name: "field of the wrong type", body: rpc("block", map[string]any{"finality": 7}), errName: rve, causeName: parse},
		{name: "finality and block_id", body: rpc("block", map[string]any{"finality": "final", "block_id": 3}), errName: rve, causeName: parse},
		{name: "finality and block_id in query", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice.near", "finality": "final", "block_id": 3}), errName: rve, causeName: parse},
		{name: "negative height", body: rpc("block", map[string]any{"block_id": -1}), errName: rve, causeName: parse},
		{name: "height above uint64", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":1000000000000000000000000000000}}`, errName: rve, causeName: parse},
		{name: "fractional height", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":1.5}}`, errName: rve, causeName: parse},
		{name: "largest uint64 height", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":18446744073709551615}}`, sameAsSim: true},
		{name: "hash that is not base58", body: rpc("block", map[string]any{"block_id": "0OIl+/"}), errName: rve, causeName: parse},
		{name: "negative shard", body: rpc("chunk", map[string]any{"block_id": at, "shard_id": -1}), errName: rve, causeName: parse},
		{name: "invalid account id", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "Alice..near", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id with quotes", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice.near'; DROP TABLE blocks; --", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id with NUL", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": "alice\x00.near", "block_id": at}), errName: rve, causeName: parse},
		{name: "account id of 10k characters", body: rpc("query", map[string]any{"request_type": "view_account", "account_id": strings.Repeat("a", 10_000), "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid account id in changes", body: rpc("changes", map[string]any{"changes_type": "account_changes", "account_ids": []string{"ok.near", "' OR 1=1 --"}, "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid base64 prefix", body: viewState("***"), errName: rve, causeName: parse},
		{name: "invalid base64 args", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "ft_total_supply", "args_base64": "!!", "block_id": at}), errName: rve, causeName: parse},
		{name: "invalid public key", body: rpc("query", map[string]any{"request_type": "view_access_key", "account_id": "alice.near", "public_key": "ed25519:'; --", "block_id": at}), errName: rve, causeName: parse},
		{name: "unknown query request_type", body: rpc("query", map[string]any{"request_type": "drop_table", "account_id": "alice.near", "block_id": at}), errName: rve, causeName: parse},
		{name: "prefix with quotes and semicolons", body: viewState(b64("'; DROP TABLE blocks; --")), sameAsSim: true, wantResults: true},
		{name: "prefix %: a LIKE wildcard", body: viewState(b64("%")), sameAsSim: true, wantResults: true},
		{name: "prefix _: a LIKE wildcard", body: viewState(b64("_")), sameAsSim: true, wantResults: true},
		{name: "prefix backslash", body: viewState(b64(`\`)), sameAsSim: true, wantResults: true},
		{name: "prefix of every byte 0xff", body: viewState(b64("\xff\xff\xff")), sameAsSim: true, wantResults: true},
		{name: "empty prefix", body: viewState(""), sameAsSim: true, wantResults: true},
		{name: "data key with SQL metacharacters", body: rpc("changes", map[string]any{"changes_type": "data_changes", "account_ids": []string{"ft.near"}, "key_prefix_base64": b64("%' OR '1'='1"), "block_id": at}), sameAsSim: true, wantResults: true},
		{name: "contract call with SQL in args", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "ft_balance_of", "args_base64": b64(`{"account_id":"x'; DROP TABLE blocks; --"}`), "block_id": at}), sameAsSim: true},
		{name: "oversized body", body: rpc("query", map[string]any{"request_type": "call_function", "account_id": "ft.near", "method_name": "x", "args_base64": strings.Repeat("QUFB", 3<<20), "block_id": at}), status: http.StatusRequestEntityTooLarge, errName: rve, causeName: parse},
		{name: "empty batch", body: `[]`, errName: rve, causeName: parse},
		{name: "oversized batch", body: batchOf(101), errName: rve, causeName: parse},
		{name: "unknown method", body: rpc("drop_everything", map[string]any{}), errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "method name of 100k characters", body: rpc(strings.Repeat("m", 100_000), map[string]any{}), errName: rve, causeName: "METHOD_NOT_FOUND"},
		{name: "100k nested arrays", body: `{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}}`, errName: rve, causeName: parse},
		{name: "100k nested objects", body: strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000), errName: rve, causeName: parse},
		{name: "100k nested arrays as the body", body: strings.Repeat("[", 100_000), errName: rve, causeName: parse},
		{name: "empty body", body: ``, errName: rve, causeName: parse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := postRaw(t, addr, tc.body)
			want := tc.status
			if want == 0 {
				want = http.StatusOK
			}
			if status != want {
				t.Errorf("HTTP %d, want %d: %.300s", status, want, raw)
			}
			if status >= 500 {
				t.Errorf("a 5xx for hostile input: %.300s", raw)
			}
			var env struct {
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(raw, &env); err != nil {
				t.Fatalf("not a JSON-RPC e2ekit.Envelope: %v: %.300s", err, raw)
			}
			if m := leaksGoError(string(env.Error)); m != "" {
				t.Errorf("the error leaks %q: %.500s", m, env.Error)
			}
			if !utf8.Valid(raw) {
				t.Errorf("the answer is not UTF-8: %q", raw)
			}
			if env.Error != nil && len(raw) > maxHostileErrorBytes {
				t.Errorf("a %d-byte error answer: %.300s", len(raw), raw)
			}
			if tc.sameAsSim {
				_, simRaw := postRaw(t, chain.addr, tc.body)
				var simEnv e2ekit.Envelope
				if err := json.Unmarshal(simRaw, &simEnv); err != nil {
					t.Fatalf("decode the simulator's answer: %v", err)
				}
				if e2ekit.Canonical(env.Result) != e2ekit.Canonical(simEnv.Result) || e2ekit.Canonical(env.Error) != e2ekit.Canonical(simEnv.Error) {
					t.Errorf("serve and sim differ:\n serve: %.400s\n sim:   %.400s", raw, simRaw)
				}
				if tc.wantResults && env.Result == nil {
					t.Errorf("want a result, got %.300s", env.Error)
				}
				return
			}
			var e struct {
				Name  string `json:"name"`
				Cause struct {
					Name string `json:"name"`
				} `json:"cause"`
				Code int `json:"code"`
			}
			if err := json.Unmarshal(env.Error, &e); err != nil || env.Error == nil {
				t.Fatalf("no error object (%v): %.300s", err, raw)
			}
			if e.Name != tc.errName || e.Cause.Name != tc.causeName {
				t.Errorf("error %s/%s, want %s/%s: %.300s", e.Name, e.Cause.Name, tc.errName, tc.causeName, env.Error)
			}
		})
	}
	// The database came through unharmed.
	c := e2ekit.NewClient(addr)
	if env, err := c.Call("block", map[string]any{"block_id": at}); err != nil || env.Result == nil {
		t.Fatalf("block %d after the hostile requests: %v %s", at, err, env.Error)
	}
}

// postRaw posts body to addr and returns the status and body; a client
// timeout (a hang) fails the test.
func postRaw(t *testing.T, addr, body string) (int, []byte) {
	t.Helper()
	hc := &http.Client{Timeout: 15 * time.Second}
	resp, err := hc.Post("http://"+addr, "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("request hung: %v", err)
		}
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return resp.StatusCode, raw
}

// hostileServe starts `nearline serve` with extra flags over a migrated,
// empty archive: what it answers here is refused before any read.
func hostileServe(t *testing.T, extra ...string) (*e2ekit.Process, string) {
	t.Helper()
	dbURL := e2ekit.FreshDatabase(t)
	if out, err := binary.Run(t, time.Minute, "migrate", "--database-url", dbURL); err != nil {
		t.Fatalf("migrate: %v\n%s", err, e2ekit.Tail(out, 30))
	}
	p := binary.Start(t, append([]string{"serve", "--database-url", dbURL, "--listen", e2ekit.AnyPort}, extra...)...)
	return p, p.ListenAddr(t, "serving JSON-RPC")
}

// cpuTime is the user and system CPU time a process has used.
func cpuTime(t *testing.T, pid int) time.Duration {
	t.Helper()
	d, err := procstat.ReadCPU(pid, false)
	if err != nil {
		t.Fatalf("read serve's CPU time: %v", err)
	}
	return d
}

// hugeBase58Body is a block request whose block_id is n characters of
// base58, as the hostile client of issue 25 sent.
func hugeBase58Body(n int) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"block","params":{"block_id":"` + strings.Repeat("z", n) + `"}}`)
}

// TestReliabilityHugeBase58IsAnsweredAtOnce: a megabyte of base58 as a
// block_id (about 23 CPU-seconds of decoding, which went on after the
// client left) is answered within a second with NEAR's PARSE_ERROR, and
// serve burns no CPU afterwards.
func TestReliabilityHugeBase58IsAnsweredAtOnce(t *testing.T) {
	p, addr := hostileServe(t)
	e2ekit.NewClient(addr).WaitReady(t, 30*time.Second)
	body := string(hugeBase58Body(1_000_000))
	before := cpuTime(t, p.Pid())
	began := time.Now()
	status, raw := postRaw(t, addr, body)
	took := time.Since(began)
	if took > time.Second {
		t.Errorf("answered in %s, want at most 1s", took)
	}
	if status != http.StatusOK || !strings.Contains(string(raw), `"PARSE_ERROR"`) || len(raw) > maxHostileErrorBytes {
		t.Fatalf("HTTP %d, %d bytes: %.300s", status, len(raw), raw)
	}
	answered := cpuTime(t, p.Pid())
	time.Sleep(time.Second)
	after := cpuTime(t, p.Pid())
	t.Logf("answered in %s; serve's CPU: %s for the request, %s in the second after", took, answered-before, after-answered)
	if after-answered > 200*time.Millisecond {
		t.Errorf("serve burnt %s of CPU in the second after answering", after-answered)
	}
}

// TestReliabilityBodyFloodStaysSmall: 60 connections each send a 10 MB
// body at once to serve with --max-concurrent 4. Bodies are read only
// within --max-body-memory, so serve's peak resident memory (VmHWM) stays
// within 400 MB (it reached 1.93 GB with 150 such connections when bodies
// were read before anything bounded them), and every client gets an
// answer: NEAR's envelope, 200 or 503.
func TestReliabilityBodyFloodStaysSmall(t *testing.T) {
	const (
		conns     = 60
		bodyBytes = 10_000_000
		peakBound = 400 << 20
	)
	p, addr := hostileServe(t, "--max-concurrent", "4")
	e2ekit.NewClient(addr).WaitReady(t, 30*time.Second)
	body := hugeBase58Body(bodyBytes - 80)
	head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, len(body))

	statuses := make(chan string, conns)
	var answered sync.WaitGroup // every connection stays open until all are answered
	answered.Add(conns)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, conn := floodOne(addr, head, body)
			statuses <- status
			answered.Done()
			<-release
			if conn != nil {
				conn.Close()
			}
		}()
	}
	answered.Wait()
	hwm, rss := processMemory(t, p.Pid())
	close(release)
	wg.Wait()
	close(statuses)
	counts := map[string]int{}
	for s := range statuses {
		counts[s]++
	}
	t.Logf("%d connections × %d bytes, --max-concurrent 4: answers %v; serve peak RSS (VmHWM) %.1f MiB, RSS %.1f MiB",
		conns, len(body), counts, float64(hwm)/(1<<20), float64(rss)/(1<<20))
	if hwm > peakBound {
		t.Errorf("serve's peak RSS %.1f MiB exceeds %d MiB", float64(hwm)/(1<<20), peakBound>>20)
	}
	if counts["200 PARSE_ERROR"] == 0 || counts["200 PARSE_ERROR"]+counts["503 INTERNAL_ERROR"] != conns {
		t.Errorf("want every connection answered 200 (PARSE_ERROR) or 503 (busy), got %v", counts)
	}
	if _, exited := p.Exited(); exited {
		t.Fatalf("serve exited under the flood:\n%s", e2ekit.Tail(p.Output(), 30))
	}
}

// floodOne sends one request of body on a connection of its own and
// returns "<status> <cause>" of the answer (or what went wrong), and the
// connection, left open.
func floodOne(addr, head string, body []byte) (string, net.Conn) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return "dial: " + err.Error(), nil
	}
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	if _, err := io.WriteString(conn, head); err != nil {
		return "write: " + err.Error(), conn
	}
	if _, err := conn.Write(body); err != nil {
		return "write body: " + err.Error(), conn
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return "read: " + err.Error(), conn
	}
	defer resp.Body.Close()
	var env struct {
		Error struct {
			Cause struct {
				Name string `json:"name"`
			} `json:"cause"`
		} `json:"error"`
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || json.Unmarshal(raw, &env) != nil {
		return fmt.Sprintf("%d not an envelope: %.100s", resp.StatusCode, raw), conn
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, env.Error.Cause.Name), conn
}
