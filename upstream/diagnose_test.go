package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDiagnoseNamesTheHostAndTheKindOfFailure calls endpoints that fail
// each way an operator tells apart (a name that does not resolve, a port
// nothing listens on, a certificate the client does not trust, an HTTP
// error) and reads the endpoint, its host and the kind off the error.
func TestDiagnoseNamesTheHostAndTheKindOfFailure(t *testing.T) {
	t.Parallel()
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String()
	}()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer tlsSrv.Close()
	badGateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer badGateway.Close()
	noSuchHost := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, _ := net.SplitHostPort(addr)
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
		},
	}}
	for _, tc := range []struct {
		name, endpoint, host, kind string
		client                     *http.Client
	}{
		{"dns", "https://rpc.example.invalid", "rpc.example.invalid", FailureDNS, noSuchHost},
		{"refused", closed, "127.0.0.1", FailureRefused, nil},
		{"tls", tlsSrv.URL, "127.0.0.1", FailureTLS, nil},
		{"http", badGateway.URL, "127.0.0.1", FailureHTTP, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewClient(Config{Endpoints: []string{tc.endpoint}, MaxAttempts: 2, BaseBackoff: time.Millisecond,
				MaxBackoff: time.Millisecond, Timeout: 5 * time.Second, HTTPClient: tc.client}, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Call(context.Background(), "status", nil, nil)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			f, ok := Diagnose(err)
			if !ok {
				t.Fatalf("Diagnose(%v) found no endpoint", err)
			}
			if f.Endpoint != tc.endpoint || f.Host != tc.host || f.Kind != tc.kind {
				t.Fatalf("Diagnose(%v) = %+v, want endpoint %s, host %s, kind %s", err, f, tc.endpoint, tc.host, tc.kind)
			}
		})
	}
}
