package translate

import (
	"strings"
	"testing"
)

// meta.model_served (SPEC 11.2): the reply's model when it is another than
// the request's, a dated snapshot being the same model; a converted stream
// names no model of its own; the request's model is read from its body only
// when the reply names one.
func TestModelServed(t *testing.T) {
	chunk := func(model string) string {
		return ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"`+model+`","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}`) + doneEv
	}
	cases := []struct {
		name, request, reply, served string
		body                         bool // the request's model comes in its body
	}{
		{"same", "gpt-4o", "gpt-4o", "", false},
		{"dated snapshot", "gpt-4o", "gpt-4o-2024-08-06", "", false},
		{"dated snapshot, compact", "claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "", true},
		{"another model", "gpt-4o", "gpt-4o-mini", "gpt-4o-mini", true},
		{"router", "openrouter/auto", "anthropic/claude-sonnet-4.5", "anthropic/claude-sonnet-4.5", false},
		{"the request named none", "", "m1", "m1", false},
		{"a long name", "x", strings.Repeat("m", 100), strings.Repeat("m", 100), false},
	}
	for _, c := range cases {
		var w recWriter
		rep := &Reply{}
		if c.body {
			rep.SetRequest("", []byte(`{"model":"`+c.request+`","stream":true}`))
		} else {
			rep.SetRequest(c.request, nil)
		}
		chain, _ := OpenStream(FormatSSE, &w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}, ConvertOptions{}, nil)
		chain.Write([]byte(chunk(c.reply)))
		chain.Close()
		got := string(rep.Meta.Get(KeyModelServed))
		want := ""
		if c.served != "" {
			want = `"` + c.served + `"`
		}
		if got != want || rep.Model != c.reply {
			t.Errorf("%s: model_served %s, want %s (Model %q)", c.name, got, want, rep.Model)
		}
	}
	// A conversion's chunks carry the request's model, or "unknown": no
	// model of the reply's own.
	var w recWriter
	rep := &Reply{}
	rep.SetRequest("", nil)
	chain, _ := OpenStream(FormatDataStream, &w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}, ConvertOptions{}, nil)
	chain.Write([]byte("0:\"a\"\nd:{\"finishReason\":\"stop\"}\n"))
	chain.Close()
	if rep.Meta.Has(KeyModelServed) {
		t.Errorf("a converted stream says model_served: %s", w.buf.String())
	}
}
