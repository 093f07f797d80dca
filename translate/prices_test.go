package translate

import (
	"io"
	"math"
	"strconv"
	"testing"
)

// meta.cost_usd (SPEC 9.2): the upstream's own figure first, else the
// prices table.

func TestSetCostFirstWins(t *testing.T) {
	cases := []struct {
		name  string
		costs []float64
		want  float64
		has   bool
	}{
		{"one", []float64{0.25}, 0.25, true},
		{"first wins", []float64{0.25, 0.5}, 0.25, true},
		{"zero is a cost", []float64{0, 0.5}, 0, true},
		{"negative rejected, then a real one", []float64{-1, 0.5}, 0.5, true},
		{"NaN and infinities rejected", []float64{math.NaN(), math.Inf(1), math.Inf(-1)}, 0, false},
		{"none", nil, 0, false},
	}
	for _, c := range cases {
		var r Reply
		for _, usd := range c.costs {
			setCost(&r, usd)
		}
		if r.HasCost != c.has || r.Cost != c.want {
			t.Fatalf("%s: cost %v %v, want %v %v", c.name, r.Cost, r.HasCost, c.want, c.has)
		}
		r.Seal()
		if got := string(r.Meta.Get(KeyCost)); (got != "") != c.has {
			t.Fatalf("%s: meta cost_usd %q", c.name, got)
		}
	}
}

// The cost is written as its shortest decimal, rounded to 9 places.
func TestCostRounding(t *testing.T) {
	for usd, want := range map[float64]string{
		0:            "0",
		2:            "2",
		1.5:          "1.5",
		0.0054:       "0.0054",
		0.1234567894: "0.123456789",
		0.1234567896: "0.12345679",
		0.0000000004: "0",
		0.0000000005: "0.000000001",
		1e-9:         "0.000000001",
		12345.678:    "12345.678",
		0.1 + 0.2:    "0.3",
	} {
		var r Reply
		setCost(&r, usd)
		r.Seal()
		if got := string(r.Meta.Get(KeyCost)); got != want {
			t.Fatalf("%v: cost_usd %s, want %s", usd, got, want)
		}
	}
}

// The header's value is a cost when it is a number that is one.
func TestCostHeader(t *testing.T) {
	for v, want := range map[string]float64{"0.000123": 0.000123, "1": 1, "0": 0, " 1": -1, "": -1, "-0.5": -1, "NaN": -1, "Inf": -1, "abc": -1, "1e-3": 0.001} {
		var r Reply
		r.SetCostHeader(v)
		if r.HasCost != (want >= 0) || (r.HasCost && r.Cost != want) {
			t.Fatalf("%q: %v %v, want %v", v, r.Cost, r.HasCost, want)
		}
	}
}

// setCost gives r the cost header's figure usd.
func setCost(r *Reply, usd float64) { r.SetCostHeader(strconv.FormatFloat(usd, 'g', -1, 64)) }

func f64(v float64) *float64 { return &v }

var testPrices = []Price{
	{Model: "gpt-4o-mini", Input: 0.15, Output: 0.60, CachedInput: f64(0.075)},
	{Model: "gpt-4o*", Input: 2.5, Output: 10},
	{Model: "openai/*", Input: 1, Output: 1},
	{Model: "claude-*", Input: 3, Output: 15, CachedInput: f64(0.30)},
	{Model: "*", Input: 100, Output: 100},
}

// The first row whose glob matches the whole name (SPEC 1 globs).
func TestPriceOf(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-4o-mini":       "gpt-4o-mini",
		"gpt-4o":            "gpt-4o*",
		"gpt-4o-mini-2024":  "gpt-4o*",
		"openai/gpt-4o":     "openai/*",
		"claude-sonnet-4-5": "claude-*",
		"xclaude-1":         "*",
		"a/b/c":             "*",
	} {
		p, ok := PriceOf(testPrices, model)
		if !ok || p.Model != want {
			t.Fatalf("%s: row %+v %v, want %s", model, p, ok, want)
		}
	}
	if _, ok := PriceOf(testPrices[:4], "llama-3"); ok {
		t.Fatal("llama-3 matched no row, yet a price was found")
	}
	if _, ok := PriceOf(nil, "gpt-4o"); ok {
		t.Fatal("empty table")
	}
}

// (input − cached) × input + cached × cached_input (default input) +
// output × output, over one million.
func TestPriceCost(t *testing.T) {
	u := Usage{Input: 1000, Output: 500, Cached: 400, hasInput: true, hasOutput: true, hasCached: true}
	cases := []struct {
		p    Price
		want float64
	}{
		{Price{Input: 2, Output: 8, CachedInput: f64(0.5)}, (600*2 + 400*0.5 + 500*8) / 1e6},
		{Price{Input: 2, Output: 8}, (1000*2 + 500*8) / 1e6},
		{Price{Input: 2, Output: 8, CachedInput: f64(0)}, (600*2 + 500*8) / 1e6},
	}
	for _, c := range cases {
		if got := c.p.Cost(&u); math.Abs(got-c.want) > 1e-15 {
			t.Fatalf("%+v: %v, want %v", c.p, got, c.want)
		}
	}
}

// Seal prices the reply by its own model, else the request's; the
// upstream's own figure wins; no usage, no cost.
func TestSealCostFromPrices(t *testing.T) {
	usage := func() Usage {
		return Usage{Input: 1000, Output: 100, Cached: 200, hasInput: true, hasOutput: true, hasCached: true}
	}
	cases := []struct {
		name        string
		rep         Reply
		upstream    float64 // < 0: none
		want        string  // "" no cost
		withoutUses bool
	}{
		// claude-*: 800×3 + 200×0.3 + 100×15 = 3960 per million.
		{"reply's model", Reply{Asked: Asked{RequestModel: "gpt-4o"}, Told: Told{Model: "claude-sonnet-4-5"}}, -1, "0.00396", false},
		// gpt-4o*: 1000×2.5 + 100×10 = 3500.
		{"request's model", Reply{Asked: Asked{RequestModel: "gpt-4o"}}, -1, "0.0035", false},
		{"upstream's figure wins", Reply{Told: Told{Model: "claude-x"}}, 0.5, "0.5", false},
		{"no model", Reply{}, -1, "", false},
		{"no usage", Reply{Told: Told{Model: "claude-x"}}, -1, "", true},
		{"no row", Reply{Told: Told{Model: "llama"}}, -1, "", false},
	}
	for _, c := range cases {
		r := c.rep
		r.Prices = testPrices[:4]
		if !c.withoutUses {
			r.Usage = usage()
		}
		if c.upstream >= 0 {
			setCost(&r, c.upstream)
		}
		r.Seal()
		if got := string(r.Meta.Get(KeyCost)); got != c.want {
			t.Fatalf("%s: cost_usd %q, want %q", c.name, got, c.want)
		}
	}
}

// The upstream's own cost, in any protocol: usage.cost (OpenRouter),
// Hustle's costUsd.
func TestUpstreamCostInReplies(t *testing.T) {
	cost := func(t *testing.T, name string, m *Meta, want string) {
		t.Helper()
		if got := string(m.Get(KeyCost)); got != want {
			t.Fatalf("%s: cost_usd %q, want %q", name, got, want)
		}
	}
	for name, body := range map[string]string{
		"chat":      `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.0123}}`,
		"responses": `{"object":"response","output":[],"usage":{"input_tokens":1,"output_tokens":1,"cost":0.0123}}`,
		"anthropic": `{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1,"cost":0.0123}}`,
	} {
		_, m, _ := RewriteJSONReply([]byte(body), nil, JSONOptions{Reply: &Reply{Asked: Asked{Prices: testPrices, RequestModel: "gpt-4o"}}})
		cost(t, name, m, "0.0123")
	}
	stream := contentEv("x") + ev(`{`+upHead+`,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.0123}}`) + doneEv
	_, r := rewrite(t, stream, 0, finalMetaOn, nil)
	cost(t, "chat stream", &r.Reply().Meta, "0.0123")
	resp := rEv("response.completed", `,"response":{"id":"r","output":[],"usage":{"input_tokens":1,"output_tokens":1,"cost":0.0123}}`)
	_, r = rewrite(t, resp, 0, responsesOpts(), nil)
	cost(t, "responses stream", &r.Reply().Meta, "0.0123")

	hustle := "0:\"x\"\n2:[{\"type\":\"token_usage\",\"tokensIn\":1,\"tokensOut\":2,\"costUsd\":0.0042}]\n"
	_, rep := convertThroughRewriter(t, hustle, 0, func(out io.Writer, o ConvertOptions) io.WriteCloser {
		return NewDataStreamConverter(out, o)
	})
	cost(t, "hustle", &rep.Meta, "0.0042")
	// usage.cost came first: it wins over Hustle's.
	both := "2:[{\"type\":\"token_usage\",\"tokensIn\":1,\"tokensOut\":2,\"costUsd\":0.0042}]\nd:{\"finishReason\":\"stop\",\"usage\":{\"inputTokens\":1,\"outputTokens\":2,\"cost\":0.001}}\n"
	_, rep = convertThroughRewriter(t, both, 0, func(out io.Writer, o ConvertOptions) io.WriteCloser {
		return NewDataStreamConverter(out, o)
	})
	cost(t, "d: usage.cost and hustle", &rep.Meta, "0.001")
}

// The cost header is read before the body, yet usage.cost wins over it,
// and it wins over Hustle's costUsd (SPEC 9.2 order).
func TestUpstreamCostOrder(t *testing.T) {
	header := func() *Reply {
		r := &Reply{}
		r.SetCostHeader("0.9")
		return r
	}
	_, m, _ := RewriteJSONReply([]byte(`{"choices":[],"usage":{"prompt_tokens":1,"cost":0.0123}}`), nil, JSONOptions{Reply: header()})
	if got := string(m.Get(KeyCost)); got != "0.0123" {
		t.Fatalf("header then usage.cost (JSON): %s", got)
	}
	_, m, _ = RewriteJSONReply([]byte(`{"choices":[],"usage":{"prompt_tokens":1}}`), nil, JSONOptions{Reply: header()})
	if got := string(m.Get(KeyCost)); got != "0.9" {
		t.Fatalf("header alone: %s", got)
	}
	stream := contentEv("x") + ev(`{`+upHead+`,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.0123}}`) + doneEv
	opts := finalMetaOn
	opts.Reply = header()
	if _, r := rewrite(t, stream, 0, opts, nil); string(r.Reply().Meta.Get(KeyCost)) != "0.0123" {
		t.Fatalf("header then usage.cost (stream): %s", r.Reply().Meta.Get(KeyCost))
	}
	rep := header()
	var w recWriter
	rw := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}, nil)
	c := NewDataStreamConverter(rw, ConvertOptions{Reply: rep, MaxLine: 1 << 20})
	c.Write([]byte("2:[{\"type\":\"token_usage\",\"tokensIn\":1,\"tokensOut\":2,\"costUsd\":0.0042}]\n"))
	c.Close()
	if got := string(rep.Meta.Get(KeyCost)); got != "0.9" {
		t.Fatalf("header then hustle: %s", got)
	}
}
