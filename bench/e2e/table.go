package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The printed table: one row per workload and concurrency, each held
// against the targets of the performance issue.

// Targets.
const (
	streamTarget  = 0.97 // events/s, llm_meta/plain
	jsonTarget    = 0.95 // requests/s
	convertTarget = 0.95 // events/s, against plain passing the stream unconverted
	ttfeTarget    = 100  // µs added to the time to first event p99 (streams, first)
	idleTargetMiB = 64   // RSS above plain with -idle streams open
)

// row is one line of the table (and of -out's "rows").
type row struct {
	Kind   string `json:"kind"`
	Proto  string `json:"protocol"`
	Tools  bool   `json:"tools"`
	Conc   int    `json:"concurrency"`
	Errors int64  `json:"errors"`
	// Throughput: events/s (streams) or requests/s (JSON).
	Figure string  `json:"figure"`
	Plain  num     `json:"plain"`
	Module num     `json:"llm_meta"`
	Ratio  num     `json:"ratio"`
	Target float64 `json:"target_ratio,omitempty"` // 0: none (first)
	Pass   *bool   `json:"pass,omitempty"`
	// p99 of the time to first event (streams) or of the latency (JSON),
	// µs; P99Target is 0 where there is none.
	P99Figure string  `json:"p99_figure"`
	P99Plain  num     `json:"p99_plain_us"`
	P99Module num     `json:"p99_llm_meta_us"`
	P99Added  num     `json:"p99_added_us"`
	P99Target float64 `json:"p99_target_added_us,omitempty"`
	P99Pass   *bool   `json:"p99_pass,omitempty"`
	// Caddy CPU per event or request, µs.
	CPUPlain num `json:"cpu_plain_us"`
	CPUAdded num `json:"cpu_added_us"`
}

func makeRow(r *result) row {
	w := row{Kind: r.Kind, Proto: r.Proto, Tools: r.Tools, Conc: r.Conc, Errors: r.Errors}
	figure, p99, cpu := figEvents, figTTFE99, figCPUEvent
	switch r.Kind {
	case kindStream:
		w.Target, w.P99Target = streamTarget, ttfeTarget
	case kindConvert:
		w.Target = convertTarget
	case kindJSON:
		w.Target = jsonTarget
		figure, p99, cpu = figRequests, figLat99, figCPUReq
	case kindFirst:
		// Its rate is what the holds make it; only the first event counts.
		w.P99Target = ttfeTarget
	}
	w.Figure, w.P99Figure = figure, p99
	for _, m := range r.Metrics {
		p, mod, ratio, diff := m.medians()
		switch m.Name {
		case figure:
			w.Plain, w.Module, w.Ratio = num(p), num(mod), num(ratio)
			if w.Target > 0 {
				pass := ratio >= w.Target
				w.Pass = &pass
			}
		case p99:
			w.P99Plain, w.P99Module, w.P99Added = num(p), num(mod), num(diff)
			if w.P99Target > 0 {
				pass := diff <= w.P99Target
				w.P99Pass = &pass
			}
		case cpu:
			w.CPUPlain, w.CPUAdded = num(p), num(diff)
		}
	}
	return w
}

const rowFormat = "%-7s %-10s %-5s %4s | %9s %9s %6s %-11s | %8s %8s %8s %-10s | %6s %6s %s\n"

func printTableHead() {
	fmt.Printf("\n%-29s | %-38s | %-37s | %s\n", "", "events/s (streams), requests/s (JSON)", "p99 µs: first event / JSON reply", "Caddy CPU µs")
	fmt.Printf(rowFormat, "kind", "protocol", "tools", "conc", "plain", "llm_meta", "ratio", "target", "plain", "llm_meta", "added", "target", "plain", "added", "")
}

func printRow(w row) {
	target := ""
	if w.Pass != nil {
		target = fmt.Sprintf(">=%.2f %s", w.Target, verdict(*w.Pass))
	}
	p99Target := ""
	if w.P99Pass != nil {
		p99Target = fmt.Sprintf("<=%.0f %s", w.P99Target, verdict(*w.P99Pass))
	}
	errs := ""
	if w.Errors > 0 {
		errs = fmt.Sprintf("ERRORS: %d", w.Errors)
	}
	fmt.Printf(rowFormat, w.Kind, w.Proto, yesNo(w.Tools), strconv.Itoa(w.Conc),
		fmtNum(float64(w.Plain)), fmtNum(float64(w.Module)), fmtRatio(float64(w.Ratio)), target,
		fmtNum(float64(w.P99Plain)), fmtNum(float64(w.P99Module)), fmtSigned(float64(w.P99Added)), p99Target,
		fmtNum(float64(w.CPUPlain)), fmtSigned(float64(w.CPUAdded)), errs)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// printDetails is every figure of one result (-v): the medians, and how
// the rounds spread around them (the middle half of the rounds' ratios, or
// of their differences for what the module adds), which tells a miss from
// noise.
func printDetails(r *result, rounds int) {
	fmt.Printf("    %s %s tools=%s, concurrency %d (medians of %d rounds, then the middle half of the rounds; errors: %d)\n", r.Kind, r.Proto, yesNo(r.Tools), r.Conc, rounds, r.Errors)
	for _, m := range r.Metrics {
		p, mod, ratio, diff := m.medians()
		ratios, diffs := m.perRound()
		added, spread := "", ""
		if m.Higher {
			q1, q3 := quartiles(ratios)
			spread = fmtRatio(q1) + "…" + fmtRatio(q3)
		} else {
			added = fmtSigned(diff) + " " + m.Unit
			q1, q3 := quartiles(diffs)
			spread = fmtSigned(q1) + "…" + fmtSigned(q3)
		}
		fmt.Printf("      %-36s %12s %12s %8s %12s   %s\n", m.Name+" ("+m.Unit+")", fmtNum(p), fmtNum(mod), fmtRatio(ratio), added, spread)
	}
}

// summary counts the rows that meet their targets and names the others.
func summary(rows []row, idle *idleResult) {
	met, all := 0, 0
	var missed []string
	check := func(ok bool, what string) {
		all++
		if ok {
			met++
		} else {
			missed = append(missed, what)
		}
	}
	for _, w := range rows {
		name := fmt.Sprintf("%s %s tools=%s c=%d", w.Kind, w.Proto, yesNo(w.Tools), w.Conc)
		if w.Pass != nil {
			check(*w.Pass, fmt.Sprintf("%s: %s ratio %s (target >= %.2f)", name, w.Figure, fmtRatio(float64(w.Ratio)), w.Target))
		}
		if w.P99Pass != nil {
			check(*w.P99Pass, fmt.Sprintf("%s: time to first event p99 added %s µs (target <= %.0f)", name, fmtSigned(float64(w.P99Added)), w.P99Target))
		}
	}
	if idle != nil {
		check(idle.AddedMiB <= idleTargetMiB, fmt.Sprintf("idle %d streams: RSS growth %.1f MiB above plain (target <= %d)", idle.Streams, idle.AddedMiB, idleTargetMiB))
	}
	fmt.Printf("\ntargets met: %d of %d\n", met, all)
	for _, m := range missed {
		fmt.Printf("  MISS %s\n", m)
	}
}

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fmtSigned(v float64) string {
	s := fmtNum(v)
	if v >= 0 && !strings.HasPrefix(s, "-") {
		return "+" + s
	}
	return s
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
