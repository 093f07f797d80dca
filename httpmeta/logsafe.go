package httpmeta

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"go.uber.org/zap"
)

// Logs hold no secrets (SPEC 8.1): the text of an error can quote what
// came over the wire (Go's transport quotes a malformed header line, a
// request line, a URL with its query), so an error the module logs is
// reduced to its kind, a fixed word, and its Go type.

// errorFields are the log fields of err: its kind and the type of the
// innermost error, never its text.
func errorFields(err error) []zap.Field {
	inner := err
	for {
		next := errors.Unwrap(inner)
		if next == nil {
			break
		}
		inner = next
	}
	return []zap.Field{zap.String("error_kind", errorKind(err)), zap.String("error_type", typeName(inner))}
}

// errorKind names what went wrong with a fixed word.
func errorKind(err error) string {
	var (
		dnsErr  *net.DNSError
		opErr   *net.OpError
		netErr  net.Error
		tlsErr  tls.RecordHeaderError
		certErr x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
	)
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection_reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken_pipe"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &tlsErr), errors.As(err, &certErr), errors.As(err, &hostErr), errors.As(err, &invErr):
		return "tls"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "eof"
	case errors.As(err, &opErr):
		return "network"
	}
	// Go's HTTP client reports a reply it cannot read in errors made of
	// text only; the text is looked at here, never logged.
	msg := err.Error()
	switch {
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "invalid header"),
		strings.Contains(msg, "unexpected EOF"), strings.Contains(msg, "bad status"):
		return "malformed_reply"
	case strings.Contains(msg, "no upstreams available"):
		return "no_upstream"
	}
	return "other"
}

// typeName is the Go type of err, such as *net.OpError: it tells an
// operator where an error came from without any of its text.
func typeName(err error) string { return fmt.Sprintf("%T", err) }
