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
// really quadratic fails all three tries, at two pairs of sizes (Check
// says why the second; linearcheck_test.go proves the verdicts).
//
// The cost is the CPU time of the thread the work runs on, where the
// system tells it (Linux: cputime_linux.go), not wall time: on a loaded
// machine wall time counts the time the thread waited for a core, which
// is noise no number of rounds removes when the load lasts.
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
// when it grows faster than the input. When n → 4n is over the limit, it
// takes 4n → 16n too, and fails only when that pair is over as well: work
// that grows faster than its input does so at every size, and the more at
// the larger sizes, where a step in the cost per byte at one size (a
// cache the work leaves; under -race, the race detector's shadow memory
// for a deep input's state, which costs request/deep_nesting ×1.9 per
// byte between 64 and 128 KB) raises one pair only.
func Check(t testing.TB, input func(int) []byte, run func([]byte), n int) {
	t.Helper()
	ratio, limit, bytesRatio := overLimit(t, input(n), input(4*n), run)
	if ratio < limit {
		return
	}
	if ratio, limit, bytesRatio = overLimit(t, input(4*n), input(16*n), run); ratio < limit {
		t.Logf("over the limit from n to 4n but not from 4n to 16n: a step in the cost per byte, not growth")
		return
	}
	t.Errorf("work grows faster than the input: ×%.1f input costs ×%.1f (limit ×%.1f), from n to 4n and from 4n to 16n", bytesRatio, ratio, limit)
}

// overLimit returns the ratio of the costs of run on large and on small,
// the first under the limit in three tries or the last, with the limit
// for their sizes.
func overLimit(t testing.TB, small, large []byte, run func([]byte)) (ratio, limit, bytesRatio float64) {
	t.Helper()
	bytesRatio = float64(len(large)) / float64(len(small))
	limit = Limit * bytesRatio / 4
	for attempt := 0; attempt < 3; attempt++ {
		ts, tl := compareCost(func() { run(small) }, func() { run(large) })
		ratio = tl / ts
		t.Logf("%d → %d bytes (×%.1f): %.0f → %.0f ns (%s), ×%.2f", len(small), len(large), bytesRatio, ts, tl, clockName, ratio)
		if ratio < limit {
			break
		}
	}
	return ratio, limit, bytesRatio
}

// compareCost returns the best cost per call of a and of b, measured in
// alternating rounds.
func compareCost(a, b func()) (ta, tb float64) {
	now, stop := startClock()
	defer stop()
	ta, tb = math.Inf(1), math.Inf(1)
	a()
	b()
	for round := 0; round < 5; round++ {
		ta = min(ta, costPerCall(now, a))
		tb = min(tb, costPerCall(now, b))
	}
	return ta, tb
}

// roundCost is how long, on the check's clock, a round runs its function:
// long enough that the cost of reading the clock is lost in it.
const roundCost = 5 * time.Millisecond

// costPerCall runs f for at least roundCost (once at least) and returns
// its mean cost per call in ns. The clock is read between batches that
// double, not after every call: a read is a system call, whose cost would
// otherwise be added to both sides and pull the ratio towards 1.
func costPerCall(now func() int64, f func()) float64 {
	runtime.GC()
	start := now()
	calls := 0
	for batch := 1; ; batch *= 2 {
		for i := 0; i < batch; i++ {
			f()
		}
		calls += batch
		if spent := now() - start; spent >= int64(roundCost) {
			return float64(spent) / float64(calls)
		}
	}
}

// Sizes are the multiples of a shape's unit its benchmarks run at: four
// sizes, each four times the last.
var Sizes = []int{1, 4, 16, 64}

// Bench runs run on input(unit×m) for each m of Sizes, as sub-benchmarks
// of b named name/n=…, reporting the time per input byte (ns/byte), which
// stays flat across the sizes when the work is linear. An input is built
// only for a sub-benchmark that runs, so that -bench can pick one shape
// (callgrind would otherwise spend its time building every other).
func Bench(b *testing.B, name string, unit int, input func(int) []byte, run func([]byte)) {
	for _, m := range Sizes {
		n := unit * m
		var in []byte
		b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
			if in == nil {
				in = input(n)
				b.ResetTimer()
			}
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				run(in)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/byte")
		})
	}
}
