// Package casefile holds what the conformance runners of the project's
// tests share: the list of pending cases (testdata/conformance/PENDING).
//
// A pending case is one that is known to fail until an issue lands. The
// runners still run it, and invert its outcome: a listed case must fail,
// and one that passes fails the run, so the list can only shrink. Nothing
// else is ever skipped.
package casefile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Pending maps a case's file name (such as "sse-usage-asked-for-client.txtar")
// to the reason it is listed (the issue that will make it pass).
type Pending map[string]string

// LoadPending reads a PENDING file: one case file name a line, then its
// reason; blank lines and lines starting with # are ignored. A missing file
// is an empty list.
func LoadPending(path string) (Pending, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return Pending{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pending cases: %w", err)
	}
	p := Pending{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if !strings.HasSuffix(name, ".txtar") {
			return nil, fmt.Errorf("%s:%d: %q is not a case file name (*.txtar)", path, n, name)
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason (the issue that will make it pass)", path, n, name)
		}
		if _, dup := p[name]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n, name)
		}
		p[name] = reason
	}
	return p, sc.Err()
}

// Recorder stands in for a *testing.T while a pending case runs: it keeps
// the failures instead of reporting them, so the runner can require that
// there was at least one. Everything else (Cleanup, TempDir, Name…) goes to
// the embedded test.
type Recorder struct {
	testing.TB
	Failures []string
}

// fatal is the panic value Fatalf unwinds a pending case with.
type fatal struct{}

func (r *Recorder) Helper() {}

// Error records a failure.
func (r *Recorder) Error(args ...any) { r.Errorf("%s", fmt.Sprint(args...)) }

// Fail records a failure.
func (r *Recorder) Fail() { r.Errorf("failed") }

// FailNow records a failure and stops the case.
func (r *Recorder) FailNow() { r.Fatalf("failed") }

// Failed reports whether a failure was recorded.
func (r *Recorder) Failed() bool { return len(r.Failures) > 0 }

// Skip, SkipNow and Skipf count as failures: a pending case is never skipped.
func (r *Recorder) Skip(args ...any) { r.Fatalf("skipped: %s", fmt.Sprint(args...)) }

// SkipNow counts as a failure.
func (r *Recorder) SkipNow() { r.Fatalf("skipped") }

// Skipf counts as a failure.
func (r *Recorder) Skipf(format string, args ...any) { r.Fatalf("skipped: "+format, args...) }

// Log is ignored, like Logf.
func (r *Recorder) Log(...any) {}

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Fatalf records a failure and stops the case (Run recovers it).
func (r *Recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

// Fatal records a failure and stops the case.
func (r *Recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// Logf is ignored: a pending case's logs are not the runner's.
func (r *Recorder) Logf(string, ...any) {}

// Run calls f with the recorder, stopping it at a Fatalf.
func (r *Recorder) Run(f func()) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(fatal); !ok {
				panic(v)
			}
		}
	}()
	f()
}
