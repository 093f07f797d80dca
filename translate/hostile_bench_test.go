package translate

import (
	"math"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// BenchmarkHostile runs every hostile shape at four sizes, each four times
// the last, and reports the time per input byte: flat across the sizes when
// the work is linear (BENCHMARKS.md, "Hostile input").
//
//	go test -run '^$' -bench Hostile -benchtime 20x ./translate
func BenchmarkHostile(b *testing.B) {
	for _, sh := range hostileShapes {
		for _, mult := range []int{1, 4, 16, 64} {
			n := sh.unit * mult
			in := sh.input(n)
			b.Run(sh.name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for i := 0; i < b.N; i++ {
					sh.run(in)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in)), "ns/byte")
			})
		}
	}
}

// TestHostileInputLinear is the check that fails when a shape turns
// quadratic (SPEC 8.1): for each shape it measures the work on two inputs,
// the second four times the first, in the same run, in alternation, the
// best of several rounds each, and fails when the larger costs eight times
// the smaller or more (in each of three tries). Linear work gives about 4, quadratic about 16: the
// margin either way is wider than what a busy machine does to a ratio of
// two measurements taken side by side.
func TestHostileInputLinear(t *testing.T) {
	for _, sh := range hostileShapes {
		t.Run(sh.name, func(t *testing.T) {
			checkLinear(t, sh.input, sh.run, sh.unit*4)
		})
	}
}

// linearLimit is the ratio of costs for four times the input above which
// the work is taken to grow faster than the input.
const linearLimit = 8

// checkLinear compares the cost of run on input(n) and input(4n). A
// measurement over the limit is taken again, up to three times in all: a
// shape that grows faster than its input fails every time, while a burst
// of load from elsewhere on the machine rarely lasts through three.
func checkLinear(t *testing.T, input func(int) []byte, run func([]byte), n int) {
	t.Helper()
	small, large := input(n), input(4*n)
	bytesRatio := float64(len(large)) / float64(len(small))
	limit := linearLimit * bytesRatio / 4
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

// timePerCall runs f for at least 5 ms (once at least) and returns its mean
// time per call in ns.
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
