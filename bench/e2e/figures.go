package main

import (
	"math"
	"sort"
	"strconv"
	"time"
)

// The figures of each window, per round, and their medians.

func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	i = max(0, min(i, len(d)-1))
	return float64(d[i]) / float64(time.Microsecond)
}

func median(v []float64) float64 {
	w := figuresTaken(v)
	if len(w) == 0 {
		return math.NaN()
	}
	sort.Float64s(w)
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

// metric is one figure of one workload and concurrency, per round.
type metric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Higher bool   `json:"higher_is_better"`
	Plain  floats `json:"plain"`
	Module floats `json:"llm_meta"`
}

// floats and num marshal NaN (a figure that could not be taken) as null.
type (
	floats []float64
	num    float64
)

func (f floats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, v)
	}
	return append(b, ']'), nil
}

func (n num) MarshalJSON() ([]byte, error) { return appendNum(nil, float64(n)), nil }

func appendNum(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func (m *metric) medians() (plain, mod, ratio, diff float64) {
	ratios, diffs := m.perRound()
	return median(m.Plain), median(m.Module), median(ratios), median(diffs)
}

// perRound is each round's ratio (llm_meta over plain) and difference
// (llm_meta minus plain).
func (m *metric) perRound() (ratios, diffs []float64) {
	for i := 0; i < len(m.Plain) && i < len(m.Module); i++ {
		ratios = append(ratios, m.Module[i]/m.Plain[i])
		diffs = append(diffs, m.Module[i]-m.Plain[i])
	}
	return ratios, diffs
}

// quartiles is the first and third quartile of v (NaN left out; the
// middle of the lower and the upper half): how far the rounds' figures
// spread around their median, which a single median hides.
func quartiles(v []float64) (q1, q3 float64) {
	w := figuresTaken(v)
	if len(w) < 2 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(w)
	half := len(w) / 2
	return median(w[:half]), median(w[len(w)-half:])
}

// figuresTaken is a copy of v without the rounds whose figure could not
// be taken (NaN).
func figuresTaken(v []float64) []float64 {
	w := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			w = append(w, x)
		}
	}
	return w
}

// result is every figure of one workload at one concurrency.
type result struct {
	Kind    string    `json:"kind"`
	Proto   string    `json:"protocol"`
	Tools   bool      `json:"tools"`
	Conc    int       `json:"concurrency"`
	Metrics []*metric `json:"metrics"`
	Errors  int64     `json:"errors"`
}

func (r *result) metric(name, unit string, higher bool) *metric {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m
		}
	}
	m := &metric{Name: name, Unit: unit, Higher: higher}
	r.Metrics = append(r.Metrics, m)
	return m
}

func (r *result) add(name, unit string, higher bool, module bool, v float64) {
	m := r.metric(name, unit, higher)
	if module {
		m.Module = append(m.Module, v)
	} else {
		m.Plain = append(m.Plain, v)
	}
}

// Names of the figures the table and the targets read.
const (
	figEvents   = "events/s"
	figRequests = "requests/s"
	figTTFE99   = "time to first event p99"
	figLat99    = "latency p99"
	figCPUEvent = "Caddy CPU per event"
	figCPUReq   = "Caddy CPU per request"
)

// record adds one window's figures. Streams count upstream events (the
// same on both sides, whatever the module adds or converts); JSON counts
// replies.
func record(r *result, w window, module bool) {
	r.Errors += w.errs
	secs := w.elapsed.Seconds()
	unit, perUnit := "stream", w.ok
	if r.Kind == kindJSON {
		unit = "request"
		r.add(figRequests, "1/s", true, module, float64(w.ok)/secs)
		r.add("latency p50", "µs", false, module, pct(w.lat, 50))
		r.add(figLat99, "µs", false, module, pct(w.lat, 99))
		r.add(figCPUReq, "µs", false, module, float64(w.cpu)/float64(time.Microsecond)/float64(max(w.ok, 1)))
	} else {
		r.add(figEvents, "1/s", true, module, float64(w.events)/secs)
		r.add("time to first event p50", "µs", false, module, pct(w.ttfe, 50))
		r.add(figTTFE99, "µs", false, module, pct(w.ttfe, 99))
		r.add("gap between events p50", "µs", false, module, pct(w.gaps, 50))
		r.add("gap between events p99", "µs", false, module, pct(w.gaps, 99))
		r.add(figCPUEvent, "µs", false, module, float64(w.cpu)/float64(time.Microsecond)/float64(max(w.events, 1)))
	}
	alloc, gcs := math.NaN(), math.NaN()
	if w.alloc > 0 {
		alloc, gcs = float64(w.alloc)/1024/float64(max(perUnit, 1)), float64(w.gcs)/secs
	}
	r.add("Caddy heap alloc per "+unit, "KiB", false, module, alloc)
	r.add("Caddy GCs per second", "1/s", false, module, gcs)
}
