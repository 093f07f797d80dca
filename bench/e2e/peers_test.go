package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Every workload the peers run, as the upstream sends it, passes the
// answer check; the same reply with its text or a tool's name changed
// does not. (The check is all that tells a gateway that answers wrongly
// from one that answers slowly.)
func TestCheckAnswer(t *testing.T) {
	loads := buildWorkloads(map[string]bool{kindStream: true, kindJSON: true},
		map[string]bool{"chat": true, "responses": true, "anthropic": true},
		map[string]bool{"no": true, "yes": true}, 8, 2048)
	if len(loads) != 12 {
		t.Fatalf("%d workloads, want 12", len(loads))
	}
	for _, wl := range loads {
		reply := bytes.Join(wl.parts, nil)
		if err := checkAnswer(wl, reply); err != nil {
			t.Errorf("%s: the upstream's own reply: %v", wl.name(), err)
		}
		text := []byte(strings.TrimSpace(words[0]))
		if changed := bytes.Replace(reply, text, []byte("markeTs"), 1); checkAnswer(wl, changed) == nil {
			t.Errorf("%s: a reply with its text changed passes", wl.name())
		}
		if wl.tools {
			if changed := bytes.Replace(reply, []byte("get_markets"), []byte("get_marketz"), 1); checkAnswer(wl, changed) == nil {
				t.Errorf("%s: a reply with a tool's name changed passes", wl.name())
			}
		}
	}
}

// The verdict of a row: llm_meta's own share within 1 % of the peer's
// added p50, and Caddy + llm_meta adding less than the peer at p50, p99
// and (streams) to the first event; a figure that could not be taken
// (NaN) is not met.
func TestPeerRowVerdict(t *testing.T) {
	row := func(stream bool, direct, plain, mod, peer float64) *peerRow {
		r := &peerRow{Stream: stream}
		for i, v := range []float64{direct, plain, mod, peer} {
			f := &peerFigures{P50: floats{v}, P99: floats{2 * v}, Throughput: floats{1e6 / v}}
			if stream {
				f.TTFE50 = floats{v / 2}
			}
			r.Contenders[i] = f
		}
		r.summarize()
		return r
	}
	for _, c := range []struct {
		name                     string
		stream                   bool
		direct, plain, mod, peer float64
		missed                   int
	}{
		{"own 0.5 % of the peer's", false, 100, 400, 410, 2100, 0},
		{"own 1 % exactly", true, 100, 400, 420, 2100, 0},
		{"own 2 % of the peer's", false, 100, 400, 440, 2100, 1},
		{"llm_meta below plain: noise around nothing", false, 100, 400, 390, 2100, 0},
		{"adds more than the peer everywhere", true, 100, 400, 500, 450, 4},
		{"no figure", false, 100, 400, math.NaN(), 2100, 3},
	} {
		r := row(c.stream, c.direct, c.plain, c.mod, c.peer)
		if len(r.Missed) != c.missed || r.Met != (c.missed == 0) {
			t.Errorf("%s: met %v, missed %q; want %d missed", c.name, r.Met, r.Missed, c.missed)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	s := spreadOf([]float64{3, math.NaN(), 1, 2})
	if s.Median != 2 || s.Min != 1 || s.Max != 3 {
		t.Errorf("spreadOf = %+v, want median 2, min 1, max 3", s)
	}
	if s := spreadOf([]float64{math.NaN()}); !math.IsNaN(float64(s.Median)) {
		t.Errorf("spreadOf of no figure = %+v, want NaN", s)
	}
}
