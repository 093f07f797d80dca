package main

import (
	"math"
	"testing"
)

func TestQuartiles(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		in     []float64
		q1, q3 float64
	}{
		{[]float64{4, 1, 3, 2}, 1.5, 3.5},
		{[]float64{5, 1, 4, 2, 3}, 1.5, 4.5}, // the median itself in neither half
		{[]float64{0.9, nan, 1.1}, 0.9, 1.1}, // a round without the figure left out
		{[]float64{2, 2}, 2, 2},
	} {
		q1, q3 := quartiles(c.in)
		if q1 != c.q1 || q3 != c.q3 {
			t.Errorf("quartiles(%v) = %v, %v; want %v, %v", c.in, q1, q3, c.q1, c.q3)
		}
	}
	if q1, q3 := quartiles([]float64{1}); !math.IsNaN(q1) || !math.IsNaN(q3) {
		t.Errorf("quartiles of one round = %v, %v; want NaN (no spread to tell)", q1, q3)
	}
}
