// Package linearcheck is the check that fails when the module's work on a
// hostile input shape grows faster than the input (SPEC 8.1), for the
// tests of translate and caddymodule.
//
// It compares, in one run, the cost of the work on two inputs, the second
// four times the first: measured in alternation, the best of five rounds
// each, and taken again up to three times in all when over the limit. Work
// that grows with the input gives a ratio of about 4, work that grows with
// its square about 16; the limit, 8, is farther from both than what a busy
// machine does to two measurements taken side by side, and a shape that is
// really quadratic fails all three tries.
package linearcheck

import (
	"math"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Limit is the ratio of costs for four times the input at which the work
// is taken to grow faster than the input.
const Limit = 8

// Check compares the cost of run on input(n) and input(4n) and fails t
// when it grows faster than the input.
func Check(t testing.TB, input func(int) []byte, run func([]byte), n int) {
	t.Helper()
	small, large := input(n), input(4*n)
	bytesRatio := float64(len(large)) / float64(len(small))
	limit := Limit * bytesRatio / 4
	var ratio float64
	for attempt := 0; attempt < 3; attempt++ {
		ts, tl := compareCost(func() { run(small) }, func() { run(large) })
		ratio = tl / ts
		t.Logf("%d → %d bytes (×%.1f): %.0f → %.0f ns, ×%.2f", len(small), len(large), bytesRatio, ts, tl, ratio)
		if ratio < limit {
			return
		}
	}
	t.Errorf("work grows faster than the input: ×%.1f input costs ×%.1f (limit ×%.1f)", bytesRatio, ratio, limit)
}

// compareCost returns the best time per call of a and of b, measured in
// alternating rounds.
func compareCost(a, b func()) (ta, tb float64) {
	ta, tb = math.Inf(1), math.Inf(1)
	a()
	b()
	for round := 0; round < 5; round++ {
		ta = min(ta, timePerCall(a))
		tb = min(tb, timePerCall(b))
	}
	return ta, tb
}

// timePerCall runs f for at least 5 ms (once at least) and returns its
// mean time per call in ns.
func timePerCall(f func()) float64 {
	runtime.GC()
	start := time.Now()
	calls := 0
	for calls == 0 || time.Since(start) < 5*time.Millisecond {
		f()
		calls++
	}
	return float64(time.Since(start).Nanoseconds()) / float64(calls)
}

// Sizes are the multiples of a shape's unit its benchmarks run at: four
// sizes, each four times the last.
var Sizes = []int{1, 4, 16, 64}

// Bench runs run on input(unit×m) for each m of Sizes, as sub-benchmarks
// of b named name/n=…, reporting the time per input byte (ns/byte), which
// stays flat across the sizes when the work is linear.
func Bench(b *testing.B, name string, unit int, input func(int) []byte, run func([]byte)) {
	for _, m := range Sizes {
		n := unit * m
		in := input(n)
		b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				run(in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/byte")
		})
	}
}
