package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The peers' Markdown block, exactly as it goes at the top of
// BENCHMARKS.md: what was run and where, the table, and which rows meet
// issue 37's bounds.

func peersMarkdown(run *peersRun) string {
	var b strings.Builder
	m := run.Machine
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## llm_meta and its peers, side by side\n\n")
	before := m["loadavg_before"]
	if before == "" {
		before = m["loadavg_at_start"]
	}
	p("Printed by `%s` on %s UTC (it took %s): %s, %s CPUs, %s, Node %s; load average before the run %s, at its end %s.",
		run.Command, run.Started.Format("2006-01-02 15:04"), run.Took, m["cpu"], m["nproc"], m["go"], run.Node,
		firstThree(before), firstThree(m["loadavg_at_end"]))
	if busy(before) {
		p(" **The machine was doing other work** (the load average): the figures are noisier than a quiet machine's, the spreads say by how much.")
	}
	p("\n\n")
	p("Contenders, all on 127.0.0.1, against one local Go upstream that answers at once: the upstream direct; Caddy with `reverse_proxy`; Caddy with `llm_meta` then `reverse_proxy` (the same `cmd/caddy` binary, logs at ERROR); Portkey's gateway (npm `@portkey-ai/gateway` %s on Node %s, `NODE_ENV=production`, `--headless`, the OpenAI provider with a custom host, the Anthropic provider for `/v1/messages`, which the OpenAI one refuses; `@hono/node-server` held at 1.14.1, as `bench/peers/package.json` says why). ", run.Portkey, run.Node)
	p("Before measuring, each contender answered each of the %d workloads with the upstream's text and tool calls", run.Checked)
	if len(run.Changed) == 0 {
		p(", Portkey with the upstream's bytes unchanged. ")
	} else {
		p("; Portkey passed the upstream's bytes unchanged except on %s. ", strings.Join(run.Changed, ", "))
	}
	p("Each row is one workload at one concurrency: after a warm-up, %s in which the contenders take turns making %d requests each, in this order and reversed every other round; streams of %d content events (each written and flushed on its own), JSON replies of about %d bytes.\n\n",
		plural(run.Rounds, "round"), run.Requests, run.Events, run.JSON)
	p("- **added**: a contender's latency (request start to the reply's last byte) minus the upstream direct's in the same round, µs: median of the rounds (min…max);\n")
	p("- **llm_meta's own**: Caddy + llm_meta minus Caddy `reverse_proxy` in the same round, and its median over Portkey's added p50;\n")
	p("- **first event**: the same difference for the time to the first complete event (streams);\n")
	p("- **throughput**: requests per second in a window over Caddy `reverse_proxy`'s in the same round.\n\n")

	p("| workload | c | direct p50 · p99 µs | added p50: `reverse_proxy` | + `llm_meta` | `llm_meta`'s own | Portkey | own ÷ Portkey's | added p99: `reverse_proxy` · + `llm_meta` · Portkey | added first event p50: `reverse_proxy` · + `llm_meta` · Portkey | throughput ÷ `reverse_proxy`: + `llm_meta` · Portkey | met |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
	met := 0
	var missed []string
	for _, r := range run.Rows {
		f := r.Contenders
		first := "–"
		if r.Stream {
			first = fmtSigned(f[ctPlain].AddedTTFE.med()) + " · " + fmtSigned(f[ctModule].AddedTTFE.med()) + " · " + fmtSigned(f[ctPortkey].AddedTTFE.med())
		}
		verdict := "yes"
		if r.Errors > 0 {
			verdict = fmt.Sprintf("%d ERRORS", r.Errors)
		} else if !r.Met {
			verdict = "no: " + strings.Join(r.Missed, "; ")
			missed = append(missed, fmt.Sprintf("%s c=%d", r.Workload, r.Conc))
		} else {
			met++
		}
		p("| %s | %d | %s · %s | %s | %s | %s | %s | %s | %s · %s · %s | %s | %s · %s | %s |\n",
			r.Workload, r.Conc, fmtNum(f[ctDirect].P50Median()), fmtNum(f[ctDirect].P99Median()),
			fmtSpread(f[ctPlain].Added50), fmtSpread(f[ctModule].Added50), fmtSpread(r.Share50), fmtSpread(f[ctPortkey].Added50),
			fmtPercent(float64(r.OwnOfPeer)),
			fmtSigned(f[ctPlain].Added99.med()), fmtSigned(f[ctModule].Added99.med()), fmtSigned(f[ctPortkey].Added99.med()),
			first,
			fmtRatioSpread(f[ctModule].Ratio), fmtRatioSpread(f[ctPortkey].Ratio), verdict)
	}
	p("\nMet (llm_meta's own p50 at most 1 %% of Portkey's added p50, and Caddy + llm_meta adding less than Portkey at p50, p99 and to the first event): %d of %d rows.", met, len(run.Rows))
	if len(missed) > 0 {
		p(" Missed: %s.", strings.Join(missed, ", "))
	}
	var capped []string
	for _, r := range run.Rows {
		for _, f := range r.Contenders {
			if f.Capped > 0 {
				capped = append(capped, fmt.Sprintf("%s c=%d %s (%d of %s)", r.Workload, r.Conc, f.Name, f.Capped, plural(run.Rounds, "window")))
			}
		}
	}
	if len(capped) > 0 {
		p(" Windows cut short by `-peers-cap`, measured on fewer requests: %s.", strings.Join(capped, ", "))
	}
	p("\n")
	return b.String()
}

// P50Median and P99Median are the contender's own figures over the rounds.
func (f *peerFigures) P50Median() float64 { return median(f.P50) }
func (f *peerFigures) P99Median() float64 { return median(f.P99) }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func fmtSpread(s spread) string {
	return fmtSigned(s.med()) + " (" + fmtNum(float64(s.Min)) + "…" + fmtNum(float64(s.Max)) + ")"
}

func fmtRatioSpread(s spread) string {
	return fmtRatio2(s.med()) + " (" + fmtRatio2(float64(s.Min)) + "…" + fmtRatio2(float64(s.Max)) + ")"
}

func fmtRatio2(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fmtPercent(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(100*v, 'f', 1, 64) + " %"
}

// firstThree is the 1, 5 and 15 minute load averages of a /proc/loadavg
// line.
func firstThree(loadavg string) string {
	f := strings.Fields(loadavg)
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// busy says whether the last minute's load average before the run (the
// run itself keeps the cores busy, so the one at its end says little) was
// above 0.5: other work was running.
func busy(loadavg string) bool {
	f := strings.Fields(loadavg)
	if len(f) == 0 {
		return false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return err == nil && v > 0.5
}
