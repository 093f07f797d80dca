package translate

import (
	"strconv"
	"strings"
	"testing"
)

// The events without data before the first with data, n comments shown
// held with the first event that just came: the time per comment stays
// the same as n grows (one pass).
func BenchmarkLeadingEventsWithoutData(b *testing.B) {
	for _, n := range []int{1000, 16000} {
		in := []byte(strings.Repeat(": ping\n\n", n) + "data: x\n\n")
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				d := Detector{f: FormatSniffEvents, max: len(in)}
				if d.Body(in, len("data: x\n\n"), false).Lead != len(in)-len("data: x\n\n") {
					b.Fatal("wrong length")
				}
			}
		})
	}
}
