package translate

import (
	"testing"

	"github.com/llm-meta/llm_meta/internal/linearcheck"
)

// BenchmarkHostile runs every hostile shape at four sizes, each four times
// the last, and reports the time per input byte: flat across the sizes when
// the work is linear (BENCHMARKS.md, "Hostile input").
//
//	go test -run '^$' -bench Hostile -benchtime 20x ./translate
func BenchmarkHostile(b *testing.B) {
	for _, sh := range hostileShapes {
		linearcheck.Bench(b, sh.name, sh.unit, sh.input, sh.run)
	}
}

// TestHostileInputLinear is the check that fails when a shape turns
// quadratic (SPEC 8.1): the work on an input four times larger must cost
// less than eight times as much (linearcheck says how it is measured).
func TestHostileInputLinear(t *testing.T) {
	for _, sh := range hostileShapes {
		t.Run(sh.name, func(t *testing.T) {
			linearcheck.Check(t, sh.input, sh.run, sh.unit*4)
		})
	}
}
