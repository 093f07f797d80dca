package openclaw

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// lookupError is a failed look-up: what went wrong, and for errors.Is the
// cause, whose own text (a URL, a header line) is never shown.
type lookupError struct {
	kind  string
	cause error
}

func lookupErr(kind string, cause error) error { return &lookupError{kind, cause} }

func (e *lookupError) Error() string {
	if isAnswerErr(e.cause) {
		// The answer's errors name the fault only.
		return "openclaw sessions_history: " + e.kind + ": " + e.cause.Error()
	}
	return "openclaw sessions_history: " + e.kind
}

func (e *lookupError) Unwrap() error { return e.cause }

func isAnswerErr(err error) bool {
	for _, t := range []error{errMalformed, errNotOK, errStatusError, errNoMessages} {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// transportErr reduces a transport error to its kind: the deadline, a
// cancelled request, a refused or failed connection.
func transportErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return lookupErr("timed out", context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		return lookupErr("cancelled", context.Canceled)
	case errors.Is(err, syscall.ECONNREFUSED):
		return lookupErr("connection refused", syscall.ECONNREFUSED)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return lookupErr("connection failed ("+opErr.Op+")", nil)
	}
	return lookupErr("request failed", nil)
}
