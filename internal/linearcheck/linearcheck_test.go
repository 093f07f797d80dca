package linearcheck

import (
	"fmt"
	"testing"
)

// verdictTB is a testing.TB that records the check's verdict instead of
// failing the test that runs it: the check's own failures are what these
// tests assert.
type verdictTB struct {
	testing.TB // the calling test: the methods not overridden
	errors     []string
}

func (v *verdictTB) Helper() {}

func (v *verdictTB) Errorf(format string, args ...any) {
	v.errors = append(v.errors, fmt.Sprintf(format, args...))
}

// sink keeps the compiler from dropping the work measured.
var sink int

// bytesOf is an input of n bytes, cycling through a few values.
func bytesOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 7)
	}
	return b
}

// linearWork reads every byte a few times.
func linearWork(in []byte) {
	s := 0
	for range 4 {
		for _, c := range in {
			s += int(c)
		}
	}
	sink = s
}

// quadraticWork compares every byte with every one before it, as a look-up
// of each new key among all the keys seen would.
func quadraticWork(in []byte) {
	s := 0
	for i, c := range in {
		for _, d := range in[:i] {
			if c == d {
				s++
			}
		}
	}
	sink = s
}

func verdict(t *testing.T, run func([]byte), n int) []string {
	v := &verdictTB{TB: t}
	Check(v, bytesOf, run, n)
	return v.errors
}

func TestCheckPassesLinearWork(t *testing.T) {
	if errs := verdict(t, linearWork, 20000); len(errs) != 0 {
		t.Fatalf("linear work failed the check: %q", errs)
	}
}

func TestCheckFailsQuadraticWork(t *testing.T) {
	errs := verdict(t, quadraticWork, 300)
	if len(errs) != 1 {
		t.Fatalf("quadratic work: %d failures, want 1: %q", len(errs), errs)
	}
	t.Logf("the check said: %s", errs[0])
}

// steppedWork reads every byte four times below 40 000 bytes and ten
// times above: linear, with a step in the cost per byte at one size, as
// when the work's state leaves a cache.
func steppedWork(in []byte) {
	passes := 4
	if len(in) > 40000 {
		passes = 10
	}
	s := 0
	for range passes {
		for _, c := range in {
			s += int(c)
		}
	}
	sink = s
}

func TestCheckPassesLinearWorkWithAStep(t *testing.T) {
	if errs := verdict(t, steppedWork, 20000); len(errs) != 0 {
		t.Fatalf("linear work with a step failed the check: %q", errs)
	}
}
