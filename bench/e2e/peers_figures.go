package main

import (
	"fmt"
	"math"
	"time"
)

// The peers' figures: each taken per round against the upstream direct
// (or plain reverse_proxy) of the same round, then summed up over the
// rounds as their median and their spread (min…max), which says which
// differences are larger than the run-to-run noise.

// spread is a figure over the rounds.
type spread struct {
	Median num `json:"median"`
	Min    num `json:"min"`
	Max    num `json:"max"`
}

func spreadOf(v []float64) spread {
	w := figuresTaken(v)
	if len(w) == 0 {
		nan := num(math.NaN())
		return spread{nan, nan, nan}
	}
	lo, hi := w[0], w[0]
	for _, x := range w {
		lo, hi = min(lo, x), max(hi, x)
	}
	return spread{num(median(w)), num(lo), num(hi)}
}

func (s spread) med() float64 { return float64(s.Median) }

// peerFigures is one contender's figures on one row.
type peerFigures struct {
	Name string `json:"name"`
	// Per round: latency (request start to the reply's last byte) p50 and
	// p99, time to first event p50 (streams), µs; requests per second.
	P50        floats `json:"latency_p50_us"`
	P99        floats `json:"latency_p99_us"`
	TTFE50     floats `json:"first_event_p50_us,omitempty"`
	Throughput floats `json:"requests_per_s"`
	// Capped counts the windows -peers-cap cut short.
	Capped int `json:"capped_windows,omitempty"`

	// Against the upstream direct in the same round (µs), and the
	// throughput over plain reverse_proxy's.
	Added50   spread `json:"added_p50_us"`
	Added99   spread `json:"added_p99_us"`
	AddedTTFE spread `json:"added_first_event_p50_us"`
	Ratio     spread `json:"throughput_over_reverse_proxy"`
}

// peerRow is one workload at one concurrency.
type peerRow struct {
	Workload   string                    `json:"workload"`
	Stream     bool                      `json:"stream"`
	Conc       int                       `json:"concurrency"`
	Errors     int64                     `json:"errors"`
	Contenders [nContenders]*peerFigures `json:"contenders"`
	// llm_meta's own share: Caddy + llm_meta minus plain Caddy in the same
	// round, µs.
	Share50   spread `json:"llm_meta_own_p50_us"`
	Share99   spread `json:"llm_meta_own_p99_us"`
	ShareTTFE spread `json:"llm_meta_own_first_event_p50_us"`
	// OwnOfPeer is the own share's median over Portkey's added p50 median.
	OwnOfPeer num `json:"llm_meta_own_over_portkey_added_p50"`
	// Met: OwnOfPeer ≤ 1 % and Caddy + llm_meta adds less than Portkey
	// at p50, p99 and (streams) the first event; Missed says what not.
	Met    bool     `json:"met"`
	Missed []string `json:"missed,omitempty"`
}

// ownLimit is the bound on llm_meta's own share at p50, as a part
// of the peer's added latency.
const ownLimit = 0.01

func newPeerRow(wl *workload, conc int) *peerRow {
	r := &peerRow{Workload: workloadLabel(wl), Stream: wl.kind != kindJSON, Conc: conc}
	for i := range r.Contenders {
		r.Contenders[i] = &peerFigures{Name: contenderNames[i]}
	}
	return r
}

// add records one round's windows.
func (r *peerRow) add(wins [nContenders]peerWindow) {
	for i, w := range wins {
		f := r.Contenders[i]
		r.Errors += w.errs
		if w.ok+w.errs < int64(*flagPeersRequests) {
			f.Capped++
		}
		f.P50 = append(f.P50, pct(w.lat, 50))
		f.P99 = append(f.P99, pct(w.lat, 99))
		if r.Stream {
			f.TTFE50 = append(f.TTFE50, pct(w.ttfe, 50))
		}
		f.Throughput = append(f.Throughput, float64(w.ok)/w.elapsed.Seconds())
	}
}

// summarize takes the per-round differences and ratios and their spreads.
func (r *peerRow) summarize() {
	minus := func(a, b floats) []float64 {
		d := make([]float64, min(len(a), len(b)))
		for i := range d {
			d[i] = a[i] - b[i]
		}
		return d
	}
	direct, plain := r.Contenders[ctDirect], r.Contenders[ctPlain]
	for _, f := range r.Contenders {
		f.Added50 = spreadOf(minus(f.P50, direct.P50))
		f.Added99 = spreadOf(minus(f.P99, direct.P99))
		f.AddedTTFE = spreadOf(minus(f.TTFE50, direct.TTFE50))
		ratios := make([]float64, min(len(f.Throughput), len(plain.Throughput)))
		for i := range ratios {
			ratios[i] = f.Throughput[i] / plain.Throughput[i]
		}
		f.Ratio = spreadOf(ratios)
	}
	mod, pk := r.Contenders[ctModule], r.Contenders[ctPortkey]
	r.Share50 = spreadOf(minus(mod.P50, plain.P50))
	r.Share99 = spreadOf(minus(mod.P99, plain.P99))
	r.ShareTTFE = spreadOf(minus(mod.TTFE50, plain.TTFE50))
	r.OwnOfPeer = num(r.Share50.med() / pk.Added50.med())

	miss := func(what string) { r.Missed = append(r.Missed, what) }
	// A negative share is noise around nothing: it meets the bound.
	if !(r.Share50.med() <= ownLimit*pk.Added50.med()) {
		// With the rounds' own spread against the same median, which
		// says whether the miss is more than the run's noise.
		peer := pk.Added50.med()
		miss(fmt.Sprintf("own p50 %s of Portkey's added (rounds %s…%s)", fmtPercent(float64(r.OwnOfPeer)),
			fmtPercent(float64(r.Share50.Min)/peer), fmtPercent(float64(r.Share50.Max)/peer)))
	}
	if !(mod.Added50.med() < pk.Added50.med()) {
		miss("adds more than Portkey at p50")
	}
	if !(mod.Added99.med() < pk.Added99.med()) {
		miss("adds more than Portkey at p99")
	}
	if r.Stream && !(mod.AddedTTFE.med() < pk.AddedTTFE.med()) {
		miss("adds more than Portkey to the first event")
	}
	r.Met = len(r.Missed) == 0
}

// workloadLabel names a workload in the table: "chat stream + tools".
func workloadLabel(wl *workload) string {
	name := map[string]string{"chat": "chat", "responses": "Responses", "anthropic": "Anthropic"}[wl.proto.name]
	kind := "JSON"
	if wl.kind != kindJSON {
		kind = "stream"
	}
	s := name + " " + kind
	if wl.tools {
		s += " + tools"
	}
	return s
}

// peersRun is the whole comparison (-out writes it as JSON).
type peersRun struct {
	Machine  map[string]string `json:"machine"`
	Command  string            `json:"command"`
	Started  time.Time         `json:"started"`
	Took     string            `json:"took"`
	Portkey  string            `json:"portkey_gateway_version"`
	Node     string            `json:"node_version"`
	Rounds   int               `json:"rounds"`
	Requests int               `json:"requests_per_window"`
	Events   int               `json:"stream_content_events"`
	JSON     int               `json:"json_reply_bytes"`
	// Checked is the workloads of the self-check; Changed, those whose
	// upstream bytes the gateway did not pass unchanged.
	Checked int        `json:"workloads"`
	Changed []string   `json:"portkey_changed_bytes"`
	Rows    []*peerRow `json:"rows"`
}
