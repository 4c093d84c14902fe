package upstream

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"syscall"
)

// Kinds of Failure: what an operator does about a call that failed
// depends on which it is.
const (
	FailureDNS     = "DNS"     // the host name does not resolve: a typo, or no DNS
	FailureRefused = "refused" // nothing listens at the host's port
	FailureTLS     = "TLS"     // the TLS handshake or the certificate failed
	FailureHTTP    = "HTTP"    // the server answered with an HTTP error or a body that is not JSON-RPC
	FailureTimeout = "timeout" // no answer within --upstream-timeout
	FailureNetwork = "network" // any other failure to connect (no route, reset)
)

// Failure is what an upstream call that failed ran into, read off its
// error (Diagnose).
type Failure struct {
	// Endpoint is the URL that failed, as the logs show it (no API key).
	Endpoint string
	// Host is its host name.
	Host string
	// Kind is one of the Failure kinds.
	Kind string
}

// Diagnose reads off err, returned by a Client's call or a Getter's
// fetch, the endpoint that failed (the last one tried) and the kind of
// failure; ok is false when err names no endpoint.
func Diagnose(err error) (f Failure, ok bool) {
	ee, ok := errors.AsType[*endpointError](err)
	if !ok {
		return Failure{}, false
	}
	f.Endpoint = ee.endpoint
	if u, perr := url.Parse(ee.endpoint); perr == nil {
		f.Host = u.Hostname()
	}
	f.Kind = failureKind(ee.kind, ee.err)
	return f, true
}

func failureKind(kind string, err error) string {
	var (
		dnsErr  *net.DNSError
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		record  tls.RecordHeaderError
		alert   tls.AlertError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &dnsErr):
		return FailureDNS
	case errors.Is(err, syscall.ECONNREFUSED):
		return FailureRefused
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid),
		errors.As(err, &record), errors.As(err, &alert):
		return FailureTLS
	}
	switch kind {
	case FailHTTP5xx, FailHTTP429, FailHTTPOther, FailMalformed, FailInternal, FailNotSynced:
		return FailureHTTP
	case FailTimeout:
		return FailureTimeout
	}
	if errors.As(err, &netErr) && netErr.Timeout() {
		return FailureTimeout
	}
	return FailureNetwork
}
