package rpcserve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/nearline/nearline/internal/wait"
	"github.com/nearline/nearline/near"
)

// maxErrorAnswer bounds an error answer to hostile input: the envelope,
// Nearline's words and at most near.MaxEcho bytes of each echoed value,
// which appears twice (cause info and data).
const maxErrorAnswer = 2 * 1024

// TestHugeIDsAreRefusedBeforeDecoding sends a megabyte of base58 in every
// place a hash or key goes: each is refused at once, as the text cannot be
// of the right length, with a PARSE_ERROR that repeats a few hundred bytes
// of it at most. (Decoding it took about 23 CPU-seconds.)
func TestHugeIDsAreRefusedBeforeDecoding(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	z := strings.Repeat("z", 1<<20)
	for name, body := range map[string]string{
		"block_id":              `{"id":1,"method":"block","params":{"block_id":"` + z + `"}}`,
		"block [block_id]":      `{"id":1,"method":"block","params":["` + z + `"]}`,
		"chunk_id":              `{"id":1,"method":"chunk","params":{"chunk_id":"` + z + `"}}`,
		"tx_hash":               `{"id":1,"method":"tx","params":{"tx_hash":"` + z + `","sender_account_id":"a.near"}}`,
		"tx [hash, sender]":     `{"id":1,"method":"tx","params":["` + z + `","a.near"]}`,
		"receipt_id":            `{"id":1,"method":"EXPERIMENTAL_receipt","params":{"receipt_id":"` + z + `"}}`,
		"code_hash":             `{"id":1,"method":"query","params":{"request_type":"view_global_contract_code","code_hash":"` + z + `","finality":"final"}}`,
		"ed25519 key":           `{"id":1,"method":"query","params":{"request_type":"view_access_key","account_id":"a.near","public_key":"ed25519:` + z + `","finality":"final"}}`,
		"secp256k1 key":         `{"id":1,"method":"query","params":{"request_type":"view_access_key","account_id":"a.near","public_key":"secp256k1:` + z + `","finality":"final"}}`,
		"gas_price [hash]":      `{"id":1,"method":"gas_price","params":["` + z + `"]}`,
		"changes keys":          `{"id":1,"method":"changes","params":{"changes_type":"single_access_key_changes","keys":[{"account_id":"a.near","public_key":"ed25519:` + z + `"}],"block_id":1}}`,
		"legacy access_key":     `{"id":1,"method":"query","params":["access_key/a.near/ed25519:` + z + `",""]}`,
		"legacy query data":     `{"id":1,"method":"query","params":["call/a.near/m","` + z + `"]}`,
		"5 MB account id":       `{"id":1,"method":"query","params":{"request_type":"view_account","account_id":"` + strings.Repeat("a", 5<<20) + `","finality":"final"}}`,
		"1 MB method name":      `{"id":1,"method":"` + z + `"}`,
		"1 MB request type":     `{"id":1,"method":"query","params":{"request_type":"` + z + `","account_id":"a.near","finality":"final"}}`,
		"a number of 1M digits": `{"id":1,"method":"block","params":{"block_id":1` + strings.Repeat("0", 1<<20) + `}}`,
	} {
		// The bound is relative to decoding the same body as JSON once, here
		// and now, so a loaded machine slows both alike; refusing a huge id
		// by its length costs about that, decoding it as base58 thousands
		// of times more.
		began := time.Now()
		var whole map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(body), &whole), name)
		baseline := time.Since(began)
		began = time.Now()
		rec := post(t, h, "/", body)
		took := time.Since(began)
		require.Less(t, took, max(time.Second, 20*baseline), "%s (decoding the body once took %s)", name, baseline)
		require.Equal(t, http.StatusOK, rec.Code, name)
		require.LessOrEqual(t, rec.Body.Len(), maxErrorAnswer, "%s: a %d-byte answer", name, rec.Body.Len())
		cause := errorCause(t, rec.Body.Bytes())
		require.Contains(t, []string{"PARSE_ERROR", "METHOD_NOT_FOUND"}, cause, name)
	}
}

// TestAURLPathIsEchoedClipped: a megabyte of path is answered with a small
// METHOD_NOT_FOUND, not twice its size.
func TestAURLPathIsEchoedClipped(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	for _, path := range []string{"/" + strings.Repeat("m", 1<<20), "/a/" + strings.Repeat("m", 1<<20)} {
		rec := post(t, h, path, `{}`)
		require.LessOrEqual(t, rec.Body.Len(), maxErrorAnswer)
		require.Equal(t, "METHOD_NOT_FOUND", errorCause(t, rec.Body.Bytes()))
	}
}

// TestEveryAnswerIsUTF8: a body that is not UTF-8 is not JSON (serde_json
// refuses it too), so an id of invalid UTF-8 is never echoed raw.
func TestEveryAnswerIsUTF8(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	for name, c := range map[string]struct{ path, body string }{
		"id":                 {"/", "{\"id\":\"\xff\xfe\",\"method\":\"status\"}"},
		"id in a batch":      {"/", "[{\"id\":1,\"method\":\"status\"},{\"id\":\"\xc3\x28\",\"method\":\"status\"}]"},
		"method":             {"/", "{\"id\":1,\"method\":\"bl\xff\xfeck\",\"params\":{}}"},
		"params":             {"/", "{\"id\":1,\"method\":\"query\",\"params\":{\"request_type\":\"view_account\",\"account_id\":\"\xed\xa0\x80\",\"finality\":\"final\"}}"},
		"path method":        {"/%FF%FE", `{"id":1}`},
		"escaped surrogates": {"/", `{"id":"\ud800","method":"nosuch"}`},
	} {
		rec := post(t, h, c.path, c.body)
		require.True(t, utf8.Valid(rec.Body.Bytes()), "%s: %q", name, rec.Body.String())
		require.True(t, json.Valid(rec.Body.Bytes()), name)
	}
	rec := post(t, h, "/", "{\"id\":\"\xff\xfe\",\"method\":\"status\"}")
	require.Equal(t, "PARSE_ERROR", errorCause(t, rec.Body.Bytes()))
	require.Contains(t, rec.Body.String(), "not valid UTF-8")
	require.Contains(t, rec.Body.String(), `"id":null`)
	rec = post(t, h, "/", `{"id":"\ud800","method":"nosuch"}`)
	require.Contains(t, rec.Body.String(), `"id":"\ud800"`, "an escape is valid JSON text and is echoed as sent")
}

// TestCaseFoldedKeysNeverRunAMethod: encoding/json matched member names
// in any case; serde does not.
func TestCaseFoldedKeysNeverRunAMethod(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &fakeBackend{}, Config{}, nil)
	for _, body := range []string{
		`{"method":"nosuch","METHOD":"gas_price","params":[3]}`,
		`{"METHOD":"gas_price","method":"nosuch","params":[3]}`,
		`{"Method":"gas_price","params":[3]}`,
		"{\"method\":\"nosuch\",\"\u1e9eETHOD\":\"gas_price\",\"params\":[3]}",
		`{"method":"gas_price","PARAMS":[3],"params":[4]}`,
	} {
		rec := post(t, h, "/", body)
		require.NotContains(t, rec.Body.String(), "100000003", body)
	}
	rec := post(t, h, "/", `{"method":"nosuch","METHOD":"gas_price","params":[3]}`)
	require.Equal(t, "METHOD_NOT_FOUND", errorCause(t, rec.Body.Bytes()))
	require.Contains(t, rec.Body.String(), `"method_name":"nosuch"`)
}

// TestExpectContinueTooLargeIsRefusedAtOnce: a client that declares a body
// over the limit and waits for 100 Continue gets the 413 instead, before
// sending a byte of it.
func TestExpectContinueTooLargeIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newTestHandler(t, &fakeBackend{}, Config{}, nil))
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", 20<<20)
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "the first answer is the 413, not 100 Continue")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "PARSE_ERROR", errorCause(t, body))
}

// TestBodiesWaitForBodyMemory holds MaxBodyMemory with one body being sent
// slowly, three quarters of it sent: another large body is not read and
// gets a 503 once the queue wait is over, while a small body is answered
// as usual.
func TestBodiesWaitForBodyMemory(t *testing.T) {
	t.Parallel()
	const limit = 200 << 10
	// The slow request takes its room while large ones come and go: it
	// waits for the room one of them holds at most QueueWait, so that
	// must be long beside the time a loaded machine takes to answer
	// one, or it is refused and never holds its room.
	srv := httptest.NewServer(newTestHandler(t, &fakeBackend{}, Config{MaxBodyBytes: limit, MaxBodyMemory: limit, QueueWait: 2 * time.Second}, nil))
	t.Cleanup(srv.Close)
	slow, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer slow.Close()
	// Its bytes are reserved as they arrive: past 128 KiB, the whole
	// declared length.
	_, err = fmt.Fprintf(slow, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{%s", limit, strings.Repeat(" ", 150<<10))
	require.NoError(t, err)

	big := `{"id":1,"method":"gas_price","params":[3],"pad":"` + strings.Repeat("a", 100<<10) + `"}`
	var status int
	wait.Until(30*time.Second, func() bool { // until the slow request holds its room
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(big))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if status = resp.StatusCode; status == http.StatusServiceUnavailable {
			require.Equal(t, "INTERNAL_ERROR", errorCause(t, body))
			require.Equal(t, "1", resp.Header.Get("Retry-After"))
			return true
		}
		return false
	})
	require.Equal(t, http.StatusServiceUnavailable, status, "a large body waits for room, then 503")
	resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(`{"id":1,"method":"gas_price","params":[3]}`))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "a small body needs no room: %s", body)

	require.NoError(t, slow.Close()) // its room is released
	wait.Until(30*time.Second, func() bool {
		resp, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(big))
		require.NoError(t, err)
		resp.Body.Close()
		status = resp.StatusCode
		return status == http.StatusOK
	})
	require.Equal(t, http.StatusOK, status, "room again once the slow request ended")
}

// TestBatchAnswersTakeBodyMemory: once a batch's answers find no room in
// MaxBodyMemory, the rest of the batch is not run and each item gets a
// "server busy" error with its id.
func TestBatchAnswersTakeBodyMemory(t *testing.T) {
	t.Parallel()
	h := newTestHandler(t, &fakeBackend{}, Config{MaxBodyBytes: 2000, MaxBodyMemory: 2000}, nil)
	items := make([]string, 40)
	for i := range items {
		items[i] = fmt.Sprintf(`{"id":%d,"method":"gas_price","params":[3]}`, i)
	}
	rec := post(t, h, "/", "["+strings.Join(items, ",")+"]")
	require.Equal(t, http.StatusOK, rec.Code)
	var answers []near.Response
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answers))
	require.Len(t, answers, 40)
	served := 0
	for served < len(answers) && answers[served].Error == nil {
		served++
	}
	require.Greater(t, served, 5)
	require.Less(t, served, 40)
	for i, a := range answers[served:] {
		require.NotNil(t, a.Error, "item %d after the first refused", served+i)
		require.Contains(t, string(a.Error.Data), "busy")
		require.Equal(t, fmt.Sprint(served+i), string(a.ID))
	}
	// The room is given back: the next batch is answered the same way.
	again := post(t, h, "/", "["+strings.Join(items[:served], ",")+"]")
	require.NotContains(t, again.Body.String(), "busy")
}
