package translate

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"hash"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// Wire helpers: one OpenAI chunk event per call.

const upHead = `"id":"chatcmpl-up1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini"`

func ev(data string) string { return "data: " + data + "\n\n" }

func contentEv(text string) string {
	return ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"content":` + string(JSONString(text)) + `},"finish_reason":null}]}`)
}

func roleEv() string {
	return ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
}

func toolEv(index int, name string) string {
	return ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(index) + `,"id":"call_` + strconv.Itoa(index) + `","type":"function","function":{"name":` + string(JSONString(name)) + `,"arguments":""}}]},"finish_reason":null}]}`)
}

func toolArgsEv(index int, args string) string {
	return ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(index) + `,"function":{"arguments":` + string(JSONString(args)) + `}}]},"finish_reason":null}]}`)
}

func finishChunkEv(reason string) string {
	return ev(`{` + upHead + `,"choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`)
}

const doneEv = "data: [DONE]\n\n"

// upMetaEvent is the final meta event for the chunks above.
func upMetaEvent(meta string) string {
	return `data: {` + upHead + `,"choices":[],"meta":` + meta + "}\n\n"
}

// recWriter records what a rewriter writes downstream.
type recWriter struct {
	buf    bytes.Buffer
	writes int
	failAt int // the failAt-th Write fails (1-based); 0: never
	// in: the rewriter's current input; counts writes that are slices of it.
	in      []byte
	aliased int
}

var errDownstream = errors.New("client went away")

func (w *recWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.failAt > 0 && w.writes >= w.failAt {
		return 0, errDownstream
	}
	if w.in != nil && within(w.in, p) {
		w.aliased++
	}
	w.buf.Write(p)
	return len(p), nil
}

// rewrite runs in through a new rewriter in pieces of n bytes (0: at once),
// each through a buffer overwritten after the Write, and closes it.
func rewrite(t *testing.T, in string, n int, opts StreamOptions, meta *Meta) (string, *Rewriter) {
	t.Helper()
	if opts.MaxEvent == 0 {
		opts.MaxEvent = 1 << 20
	}
	var w recWriter
	r := NewRewriter(&w, opts, meta)
	buf := make([]byte, len(in))
	for rest := in; len(rest) > 0; {
		k := n
		if k <= 0 || k > len(rest) {
			k = len(rest)
		}
		p := buf[:k]
		copy(p, rest[:k])
		if m, err := r.Write(p); err != nil || m != k {
			t.Fatalf("Write = %d, %v", m, err)
		}
		for i := range p {
			p[i] = 0xA5
		}
		rest = rest[k:]
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return w.buf.String(), r
}

var finalMetaOn = StreamOptions{FinalMeta: true}

// Streams the rewriter has nothing to say about.
var passthroughStreams = map[string]string{
	"content and done": roleEv() + contentEv("Hello") + contentEv(" world") + finishChunkEv("stop") +
		ev(`{`+upHead+`,"choices":[],"usage":null}`) + doneEv,
	"framing": ": keep-alive\n\nid: 1\nevent: message\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n" +
		"data:{\"choices\":[{\"delta\":{\"content\":\" there\"}}]}\r\n\r\n" +
		"data: {\"choices\":\ndata: [{\"delta\":{\"content\":\"!\"}}]}\r\r: still here\n\n" + doneEv,
	"gemini crlf no done": "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"The\"}],\"role\": \"model\"}}]}\r\n\r\n" +
		"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \" end\"}]},\"finishReason\": \"STOP\"}]}\r\n\r\n",
	"no done, unterminated":  contentEv("a") + `data: {"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}`,
	"not json":               "data: hello\n\ndata: [1,2,3]\n\ndata: {broken\n\ndata: \"s\"\n\ndata:\n\ndata\n\nevent: ping\n\n",
	"error event":            contentEv("a") + ev(`{"error":{"message":"boom","type":"server_error"}}`),
	"events after done":      contentEv("a") + doneEv + contentEv("late") + ": bye\n\n",
	"blank lines":            "\n\n\r\n" + contentEv("x") + finishChunkEv("stop") + "\n\n",
	"empty":                  "",
	"meta-like keys":         ev(`{"choices":[{"delta":{"content":"the \"meta\" word and \"tool_calls\""}}],"metadata":{"a":1}}`) + doneEv,
	"empty tool name":        ev(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"","arguments":"{}"}}]}}]}`) + doneEv,
	"meta not an object":     ev(`{"meta":"not an object"}`) + ev(`{"meta":null}`) + doneEv,
	"anthropic native no nl": "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}",
}

func TestRewriterPassthrough(t *testing.T) {
	for name, in := range passthroughStreams {
		for _, n := range chunkSizes() {
			var stats Stats
			out, r := rewrite(t, in, n, StreamOptions{FinalMeta: true, Stats: &stats}, nil)
			if out != in {
				t.Fatalf("%s %s: output differs\n got %q\nwant %q", name, chunkName(n), out, in)
			}
			if stats.FinalMeta != 0 || !r.Reply().Meta.Empty() {
				t.Fatalf("%s %s: final meta %d, meta %s", name, chunkName(n), stats.FinalMeta, r.Reply().Meta.JSON())
			}
		}
	}
}

func TestRewriterFinalMetaBeforeDone(t *testing.T) {
	body := roleEv() + toolEv(0, "websearch") + toolArgsEv(0, `{"q":"caddy"}`) + contentEv("Found it.") + finishChunkEv("tool_calls")
	in := body + doneEv
	want := body + upMetaEvent(`{"tools_used":["websearch"]}`) + doneEv
	for _, n := range chunkSizes() {
		var stats Stats
		out, _ := rewrite(t, in, n, StreamOptions{FinalMeta: true, Stats: &stats}, nil)
		if out != want {
			t.Fatalf("%s:\n got %q\nwant %q", chunkName(n), out, want)
		}
		if stats.FinalMeta != 1 {
			t.Fatalf("%s: Stats.FinalMeta = %d", chunkName(n), stats.FinalMeta)
		}
	}
	// Several [DONE]: the meta event still comes once, before the first.
	out, _ := rewrite(t, in+doneEv, 0, finalMetaOn, nil)
	if out != want+doneEv {
		t.Fatalf("two [DONE]:\n got %q", out)
	}
}

func TestRewriterFinalMetaAtClose(t *testing.T) {
	body := roleEv() + toolEv(0, "websearch") + contentEv("Found it.")
	for _, n := range chunkSizes() {
		out, _ := rewrite(t, body, n, finalMetaOn, nil)
		// No [DONE] and no finish_reason: cut short (SPEC 11.1).
		if want := body + upMetaEvent(`{"tools_used":["websearch"],"interrupted":true}`); out != want {
			t.Fatalf("%s:\n got %q\nwant %q", chunkName(n), out, want)
		}
	}
}

// An unterminated last event is the end of the stream's last event: the
// final meta event (and any event of ours) must start on a fresh event,
// not run into it, and must not add blank lines when none are needed. It
// is written in the stream's line ending, that of its first line (SPEC
// 4.3), after the LF of a CR the upstream's bytes ended with.
func TestRewriterUnterminatedLastEvent(t *testing.T) {
	tool := `data: {` + upHead + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"t","arguments":"{}"}}]}}]}`
	// Neither [DONE] nor a finish_reason: cut short (SPEC 11.1).
	meta := upMetaEvent(`{"tools_used":["t"],"interrupted":true}`)
	metaCRLF := strings.ReplaceAll(meta, "\n", "\r\n")
	cases := []struct{ in, want string }{
		{tool, tool + "\n\n" + meta},
		{tool + "\n", tool + "\n\n" + meta},
		{tool + "\r\n", tool + "\r\n\r\n" + metaCRLF},
		// The first line's CR ends the stream: the stream's line ending is
		// that CR (SPEC 4.3), after the LF that completes it.
		{tool + "\r", tool + "\r\n\r" + strings.ReplaceAll(meta, "\n", "\r")},
		{tool + "\n\n", tool + "\n\n" + meta},
		{tool + "\r\n\r\n", tool + "\r\n\r\n" + metaCRLF},
		{tool + "\r\r", tool + "\r\r\n" + strings.ReplaceAll(meta, "\n", "\r")},
		// Unterminated [DONE]: the meta event comes before it, as usual.
		{tool + "\n\ndata: [DONE]", tool + "\n\n" + upMetaEvent(`{"tools_used":["t"]}`) + "data: [DONE]"},
		// An unterminated meta-only event is withheld: nothing to close.
		{tool + "\n\ndata: {\"meta\":{\"x\":1}}", tool + "\n\n" + upMetaEvent(`{"tools_used":["t"],"x":1,"interrupted":true}`)},
		// A comment as the last, unterminated line.
		{tool + "\n\n: bye", tool + "\n\n: bye\n\n" + meta},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			out, _ := rewrite(t, c.in, n, finalMetaOn, nil)
			if out != c.want {
				t.Fatalf("%q %s:\n got %q\nwant %q", c.in, chunkName(n), out, c.want)
			}
			assertEventsParse(t, out)
		}
	}
	// A CRLF whose LF comes in the Write after the blank line's CR: no
	// extra blank line before the meta event.
	var w recWriter
	r := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	r.Write([]byte(tool + "\r\n\r"))
	r.Write([]byte("\n"))
	r.Close()
	if want := tool + "\r\n\r\n" + metaCRLF; w.buf.String() != want {
		t.Fatalf("split CRLF:\n got %q\nwant %q", w.buf.String(), want)
	}
}

// assertEventsParse checks that every event of a rewritten stream that
// carries JSON (not [DONE]) is one valid JSON value.
func assertEventsParse(t *testing.T, out string) {
	t.Helper()
	for _, e := range wholeEvents([]byte(out)) {
		d, ok, _ := EventData(e, nil)
		if !ok || string(d) == "[DONE]" {
			continue
		}
		if !json.Valid(d) {
			t.Fatalf("event data is not JSON: %q in\n%q", d, out)
		}
	}
}

// Each event goes downstream during the Write that completed it.
func TestRewriterWritesDuringCompletingWrite(t *testing.T) {
	events := []string{": hi\n\n", roleEv(), toolEv(0, "calc"), contentEv("a"), contentEv("b"), finishChunkEv("stop"), doneEv, ": after\n\n"}
	in := strings.Join(events, "")
	metaEv := upMetaEvent(`{"tools_used":["calc"]}`)
	// ends[i]: offset in `in` just past event i.
	var ends []int
	off := 0
	for _, e := range events {
		off += len(e)
		ends = append(ends, off)
	}
	doneAt := ends[5] // [DONE] starts here
	expectAfter := func(k int) string {
		done := 0
		for _, e := range ends {
			if e <= k {
				done = e
			}
		}
		if done > doneAt {
			return in[:doneAt] + metaEv + in[doneAt:done]
		}
		return in[:done]
	}
	for _, n := range []int{1, 2, 3, 5, 7, 64} {
		var w recWriter
		r := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
		for k := 0; k < len(in); {
			m := min(n, len(in)-k)
			r.Write([]byte(in[k : k+m]))
			k += m
			if got, want := w.buf.String(), expectAfter(k); got != want {
				t.Fatalf("%d-byte writes, after %d bytes:\n got %q\nwant %q", n, k, got, want)
			}
		}
		before := w.writes
		r.Close()
		if w.writes != before {
			t.Fatalf("Close wrote %d times on a finished stream", w.writes-before)
		}
	}
}

// Untouched events that lie together in one Write go out in one downstream
// Write, as a slice of the input (no copy).
func TestRewriterCoalescesUntouchedEvents(t *testing.T) {
	var in string
	for i := 0; i < 20; i++ {
		in += contentEv("token " + strconv.Itoa(i))
	}
	var w recWriter
	r := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	p := []byte(in)
	w.in = p
	r.Write(p)
	if w.writes != 1 || w.aliased != 1 || w.buf.String() != in {
		t.Fatalf("writes=%d aliased=%d", w.writes, w.aliased)
	}
	// A withheld event splits the run in two.
	w = recWriter{}
	r = NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	p = []byte(contentEv("a") + ev(`{"meta":{"x":1}}`) + contentEv("b"))
	w.in = p
	r.Write(p)
	if w.writes != 2 || w.aliased != 2 || w.buf.String() != contentEv("a")+contentEv("b") {
		t.Fatalf("writes=%d aliased=%d out=%q", w.writes, w.aliased, w.buf.String())
	}
}

func TestRewriterMetaOnlyEventsWithheld(t *testing.T) {
	body := roleEv() + toolEv(0, "calculator") + toolEv(1, "launcher") + contentEv("I ran ") + contentEv("the calculator.") + finishChunkEv("stop")
	upMeta := ev(`{"meta":{"tools_used":["calculator"],"structured_result":{"type":"table","headers":["A","B"],"rows":[["1","2"]]}}}`)
	in := body + upMeta + doneEv
	want := body + upMetaEvent(`{"tools_used":["calculator","launcher"],"structured_result":{"type":"table","headers":["A","B"],"rows":[["1","2"]]}}`) + doneEv
	for _, n := range chunkSizes() {
		out, _ := rewrite(t, in, n, finalMetaOn, nil)
		if out != want {
			t.Fatalf("%s:\n got %q\nwant %q", chunkName(n), out, want)
		}
	}

	// Several meta-only events merge by SPEC 4.1; white space and CRLF do
	// not hide them; nothing else to say still gives one meta event.
	in = ev(`{"meta":{"prompt_trimmed_to":900,"tools_used":["a"],"k":1}}`) +
		contentEv("x") +
		"data: { \"meta\" : {\"prompt_trimmed_to\":800,\"tools_used\":[\"b\",\"a\"],\"k\":2} }\r\n\r\n" +
		"data: {\"meta\":\ndata: {\"prompt_trimmed_to\":1000}}\n\n" +
		doneEv
	want = contentEv("x") + upMetaEvent(`{"prompt_trimmed_to":800,"tools_used":["a","b"],"k":2}`) + doneEv
	for _, n := range chunkSizes() {
		out, _ := rewrite(t, in, n, finalMetaOn, nil)
		if out != want {
			t.Fatalf("merge %s:\n got %q\nwant %q", chunkName(n), out, want)
		}
	}

	// An empty meta-only event is withheld and adds nothing.
	in = contentEv("x") + ev(`{"meta":{}}`) + doneEv
	if out, _ := rewrite(t, in, 0, finalMetaOn, nil); out != contentEv("x")+doneEv {
		t.Fatalf("empty meta: %q", out)
	}
}

// A chunk that carries meta besides other keys passes as it is; its meta
// joins the final one.
func TestRewriterMetaInChunk(t *testing.T) {
	chunk := ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"content":"x"}}],"meta":{"tools_used":["up"],"backendUsed":"b"}}`)
	in := chunk + toolEv(0, "mine") + doneEv
	want := chunk + toolEv(0, "mine") + upMetaEvent(`{"tools_used":["up","mine"],"backendUsed":"b"}`) + doneEv
	if out, _ := rewrite(t, in, 3, finalMetaOn, nil); out != want {
		t.Fatalf("\n got %q\nwant %q", out, want)
	}
}

func TestRewriterRequestMetaFirst(t *testing.T) {
	req := new(Meta)
	req.SetTrimmed(500)
	in := contentEv("x") + ev(`{"meta":{"prompt_trimmed_to":700}}`) + toolEv(0, "t") + doneEv
	want := contentEv("x") + toolEv(0, "t") + upMetaEvent(`{"prompt_trimmed_to":500,"tools_used":["t"]}`) + doneEv
	out, _ := rewrite(t, in, 0, finalMetaOn, req)
	if out != want {
		t.Fatalf("\n got %q\nwant %q", out, want)
	}
	// The request's meta alone is enough for a final meta event.
	out, _ = rewrite(t, contentEv("x")+doneEv, 0, finalMetaOn, req)
	if out != contentEv("x")+upMetaEvent(`{"prompt_trimmed_to":500}`)+doneEv {
		t.Fatalf("request meta only: %q", out)
	}
	if n, _ := trimmedOf(req); n != 500 {
		t.Fatal("request meta modified")
	}
}

func TestRewriterMetaChunkHead(t *testing.T) {
	// The last chunk's id, created and model, as the upstream wrote them;
	// error events and meta-only events are not chunks.
	first := ev(`{"id":"first","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"t"}}]}}]}`)
	last := ev(`{"id":"l\u00e4st","object":"chat.completion.chunk","created":0,"model":"caf\u00e9","choices":[],"usage":{"total_tokens":3}}`)
	errEv := ev(`{"id":"err","created":9,"model":"e","error":{"message":"x"}}`)
	in := first + last + errEv + ev(`{"meta":{"a":1}}`) + doneEv
	out, _ := rewrite(t, in, 0, finalMetaOn, nil)
	want := first + last + errEv +
		`data: {"id":"l\u00e4st","object":"chat.completion.chunk","created":0,"model":"caf\u00e9","choices":[],"meta":{"tools_used":["t"],"a":1}}` + "\n\n" + doneEv
	if out != want {
		t.Fatalf("\n got %q\nwant %q", out, want)
	}

	// No chunk at all: a fresh id, now, the model of the options.
	before := time.Now().Unix()
	out, _ = rewrite(t, ev(`{"meta":{"a":1}}`)+doneEv, 0, StreamOptions{FinalMeta: true, Chat: ChatOptions{Model: "gpt-x"}}, nil)
	after := time.Now().Unix()
	evs := wholeEvents([]byte(out))
	if len(evs) != 2 || string(evs[1]) != doneEv {
		t.Fatalf("events %q", evs)
	}
	d, _, _ := EventData(evs[0], nil)
	v := gjson.ParseBytes(d)
	if !regexp.MustCompile(`^chatcmpl-[0-9a-f]{24}$`).MatchString(v.Get("id").Str) ||
		v.Get("object").Str != "chat.completion.chunk" ||
		v.Get("created").Int() < before || v.Get("created").Int() > after ||
		v.Get("model").Str != "gpt-x" || v.Get("choices").Raw != "[]" || v.Get("meta").Raw != `{"a":1}` {
		t.Fatalf("fresh head: %s", d)
	}
	// Chunks without id/model (Gemini native): fallbacks for the missing ones.
	out, _ = rewrite(t, ev(`{"created":5,"candidates":[]}`)+ev(`{"meta":{"a":1}}`), 0, StreamOptions{FinalMeta: true}, nil)
	d, _, _ = EventData(wholeEvents([]byte(out))[1], nil)
	if v := gjson.ParseBytes(d); v.Get("created").Raw != "5" || v.Get("model").Str != "unknown" || !strings.HasPrefix(v.Get("id").Str, "chatcmpl-") {
		t.Fatalf("partial head: %s", d)
	}
}

func TestRewriterBareMeta(t *testing.T) {
	in := toolEv(0, "t") + doneEv
	out, _ := rewrite(t, in, 0, StreamOptions{FinalMeta: true, Chat: ChatOptions{BareMeta: true}}, nil)
	if want := toolEv(0, "t") + "data: {\"meta\":{\"tools_used\":[\"t\"]}}\n\n" + doneEv; out != want {
		t.Fatalf("\n got %q\nwant %q", out, want)
	}
}

func TestRewriterFinalMetaOff(t *testing.T) {
	in := roleEv() + toolEv(0, "t") + contentEv("x") + doneEv
	for _, n := range chunkSizes() {
		var stats Stats
		out, r := rewrite(t, in, n, StreamOptions{Stats: &stats}, nil)
		if out != in || stats.FinalMeta != 0 {
			t.Fatalf("%s: %q", chunkName(n), out)
		}
		if got := r.Reply().Meta.Tools(); !equalStrings(got, []string{"t"}) {
			t.Fatalf("meta still collected: %q", got)
		}
	}
}

func TestRewriterToolNames(t *testing.T) {
	tc := func(calls string) string {
		return ev(`{"choices":[{"index":0,"delta":{"tool_calls":` + calls + `}}]}`)
	}
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"parallel, index 0 then 1",
			tc(`[{"index":0,"id":"a","type":"function","function":{"name":"GetWeatherArgs","arguments":""}}]`) +
				tc(`[{"index":0,"function":{"arguments":"{\"ci"}}]`) +
				tc(`[{"index":1,"id":"b","type":"function","function":{"name":"get_stock_price","arguments":""}}]`) +
				tc(`[{"index":1,"function":{"arguments":"{}"}}]`),
			[]string{"GetWeatherArgs", "get_stock_price"}},
		{"first call at index 1 (Anthropic compat)",
			ev(`{"choices":[{"index":0,"delta":{"content":"Reading"}}]}`) +
				tc(`[{"index":1,"id":"toolu","type":"function","function":{"name":"read_file","arguments":""}}]`) +
				tc(`[{"index":1,"function":{"arguments":""}}]`),
			[]string{"read_file"}},
		{"no index (Gemini compat)",
			tc(`[{"id":"","type":"function","function":{"name":"lookup","arguments":"{}"}},{"function":{"name":"search","arguments":"{}"}}]`),
			[]string{"lookup", "search"}},
		{"index null",
			tc(`[{"index":null,"function":{"name":"n","arguments":"{}"}}]`),
			[]string{"n"}},
		{"empty name in continuation (Mistral GLM)",
			tc(`[{"id":"x","type":"function","function":{"name":"webSearchTool","arguments":""},"index":0}]`) +
				tc(`[{"type":"function","function":{"name":"","arguments":"{}"},"index":0}]`),
			[]string{"webSearchTool"}},
		{"non-string names ignored",
			tc(`[{"function":{"name":1}},{"function":{"name":null}},{"function":{"name":["x"]}},{"function":{"name":"ok"}}]`),
			[]string{"ok"}},
		{"several choices",
			ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"name":"c0"}}]}},{"index":1,"delta":{"tool_calls":[{"function":{"name":"c1"}}]}}]}`),
			[]string{"c0", "c1"}},
		{"repeated name once",
			tc(`[{"index":0,"function":{"name":"a"}}]`) + tc(`[{"index":1,"function":{"name":"a"}}]`),
			[]string{"a"}},
		{"escaped name",
			tc(`[{"function":{"name":"caf\u00e9_\"q\""}}]`),
			[]string{`café_"q"`}},
		{"legacy function_call",
			ev(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":""}}}]}`) +
				ev(`{"choices":[{"index":0,"delta":{"function_call":{"arguments":"{}"}}}]}`),
			[]string{"get_weather"}},
		{"multi-line data",
			"data: {\"choices\":[{\"delta\":\ndata: {\"tool_calls\":[{\"function\":{\"name\":\"ml\"}}]}}]}\n\n",
			[]string{"ml"}},
		{"tool_calls outside delta ignored",
			ev(`{"tool_calls":[{"function":{"name":"top"}}],"choices":[{"message":{"tool_calls":[{"function":{"name":"msg"}}]}}]}`),
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range chunkSizes() {
				out, r := rewrite(t, c.in+doneEv, n, finalMetaOn, nil)
				if got := r.Reply().Meta.Tools(); !equalStrings(got, c.want) {
					t.Fatalf("%s: tools %q, want %q", chunkName(n), got, c.want)
				}
				if len(c.want) == 0 {
					if out != c.in+doneEv {
						t.Fatalf("%s: output changed: %q", chunkName(n), out)
					}
					continue
				}
				metaEv, rest := cutMetaEvents(t, out)
				if len(metaEv) != 1 || rest != c.in+doneEv {
					t.Fatalf("%s: %d meta events; rest %q", chunkName(n), len(metaEv), rest)
				}
				if !strings.HasSuffix(out, metaEv[0]+doneEv) {
					t.Fatalf("%s: meta event not right before [DONE]", chunkName(n))
				}
				var got []string
				gjson.Get(metaEventData(t, metaEv[0]), "meta.tools_used").ForEach(func(_, v gjson.Result) bool {
					got = append(got, v.Str)
					return true
				})
				if !equalStrings(got, c.want) {
					t.Fatalf("%s: meta event tools %q", chunkName(n), got)
				}
			}
		})
	}
}

// cutMetaEvents takes the final meta events (chunks with "choices":[] and a
// meta, or bare {"meta":…}) out of a rewritten stream and returns them and
// the rest of the bytes.
func cutMetaEvents(t *testing.T, out string) (metas []string, rest string) {
	t.Helper()
	var b strings.Builder
	for _, e := range wholeEvents([]byte(out)) {
		d, ok, _ := EventData(e, nil)
		if ok && gjson.ValidBytes(d) {
			v := gjson.ParseBytes(d)
			if v.Get("meta").IsObject() && (v.Get("choices").Raw == "[]" || len(v.Map()) == 1) {
				metas = append(metas, string(e))
				continue
			}
		}
		b.Write(e)
	}
	return metas, b.String()
}

// metaEventData checks the shape of a final meta event (one line and a
// blank line, a valid chunk) and returns its data.
func metaEventData(t *testing.T, e string) string {
	t.Helper()
	return metaEventDataEOL(t, e, "\n")
}

// metaEventDataEOL is metaEventData for a stream whose line ending is eol
// (SPEC 4.3: the module's events use the stream's).
func metaEventDataEOL(t *testing.T, e, eol string) string {
	t.Helper()
	d, ok := strings.CutPrefix(e, "data: ")
	if d, ok = strings.CutSuffix(d, eol+eol); !ok || strings.ContainsAny(d, "\r\n") {
		t.Fatalf("meta event is not one data line and a blank line in %q: %q", eol, e)
	}
	if !json.Valid([]byte(d)) {
		t.Fatalf("meta event data not JSON: %s", d)
	}
	v := gjson.Parse(d)
	if v.Get("object").Str != "chat.completion.chunk" || v.Get("choices").Raw != "[]" || v.Get("id").Type != gjson.String ||
		v.Get("created").Type != gjson.Number || v.Get("model").Type != gjson.String || v.Get("error").Exists() {
		t.Fatalf("meta event is not a valid chunk: %s", d)
	}
	return d
}

func TestRewriterEventsAfterDone(t *testing.T) {
	after := toolEv(0, "late") + ev(`{"meta":{"late":true}}`) + ": c\n\n" + "data: [DONE]\n\n"
	in := toolEv(0, "t") + doneEv + after
	want := toolEv(0, "t") + upMetaEvent(`{"tools_used":["t"]}`) + doneEv + after
	for _, n := range chunkSizes() {
		if out, _ := rewrite(t, in, n, finalMetaOn, nil); out != want {
			t.Fatalf("%s:\n got %q\nwant %q", chunkName(n), out, want)
		}
	}
}

func TestRewriterErrorsAsContent(t *testing.T) {
	errContent := func(msg string) string {
		return `data: {` + upHead + `,"choices":[{"index":0,"delta":{"content":` + string(JSONString("Error: "+msg)) + `},"finish_reason":null}]}` + "\n\n"
	}
	cases := []struct{ name, errEv, msg string }{
		{"message", ev(`{"error":{"message":"Rate limit \"hit\"","type":"rate_limit","code":429}}`), `Rate limit "hit"`},
		{"string error", ev(`{"error":"upstream died"}`), "upstream died"},
		{"no message", ev(`{"error":{"code":499,"status":"CANCELLED"}}`), `{"code":499,"status":"CANCELLED"}`},
		// OpenRouter: choices beside the error (SPEC 4.3).
		{"with choices", ev(`{` + upHead + `,"error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`), "Provider disconnected"},
		// vLLM.
		{"object error", ev(`{"object":"error","message":"out of memory","type":"InternalServerError","code":500}`), "out of memory"},
	}
	for _, c := range cases {
		in := roleEv() + contentEv("partial") + c.errEv
		want := in + errContent(c.msg)
		for _, n := range chunkSizes() {
			out, _ := rewrite(t, in, n, StreamOptions{FinalMeta: true, Chat: ChatOptions{ErrorsAsContent: true}}, nil)
			if out != want {
				t.Fatalf("%s %s:\n got %q\nwant %q", c.name, chunkName(n), out, want)
			}
		}
		// Off: the error event passes alone.
		if out, _ := rewrite(t, in, 0, finalMetaOn, nil); out != in {
			t.Fatalf("%s without ErrorsAsContent: %q", c.name, out)
		}
	}
	// An unterminated error event at the end of the stream.
	in := roleEv() + `data: {"error":{"message":"cut"}}`
	want := in + "\n\n" + errContent("cut")
	for _, n := range chunkSizes() {
		if out, _ := rewrite(t, in, n, StreamOptions{FinalMeta: true, Chat: ChatOptions{ErrorsAsContent: true}}, nil); out != want {
			t.Fatalf("unterminated %s:\n got %q\nwant %q", chunkName(n), out, want)
		}
	}
}

func TestRewriterDownstreamErrorSticky(t *testing.T) {
	w := &recWriter{failAt: 2}
	r := NewRewriter(w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	if n, err := r.Write([]byte(toolEv(0, "t"))); n != len(toolEv(0, "t")) || err != nil {
		t.Fatalf("first Write: %d, %v", n, err)
	}
	if n, err := r.Write([]byte(contentEv("x"))); n != 0 || !errors.Is(err, errDownstream) {
		t.Fatalf("second Write: %d, %v", n, err)
	}
	writes := w.writes
	if n, err := r.Write([]byte(contentEv("y"))); n != 0 || !errors.Is(err, errDownstream) {
		t.Fatalf("third Write: %d, %v", n, err)
	}
	if err := r.Close(); !errors.Is(err, errDownstream) {
		t.Fatalf("Close: %v", err)
	}
	if w.writes != writes {
		t.Fatalf("wrote downstream after the error (%d more)", w.writes-writes)
	}
	// Within one Write, nothing more goes downstream after the first
	// failure (here: the pending event fails, then the meta event and
	// [DONE] must not be attempted).
	w = &recWriter{failAt: 1}
	r = NewRewriter(w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	if _, err := r.Write([]byte(toolEv(0, "t") + contentEv("x") + doneEv)); !errors.Is(err, errDownstream) {
		t.Fatalf("Write: %v", err)
	}
	if w.writes != 1 {
		t.Fatalf("%d downstream writes attempted after the first failed", w.writes-1)
	}
	// An error while writing the final meta event is reported by Close.
	w = &recWriter{failAt: 2}
	r = NewRewriter(w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
	r.Write([]byte(toolEv(0, "t")))
	if err := r.Close(); !errors.Is(err, errDownstream) {
		t.Fatalf("Close with failing meta write: %v", err)
	}
}

func TestRewriterStats(t *testing.T) {
	var stats Stats
	var warns []string
	big := ev(`{"choices":[{"delta":{"content":"` + strings.Repeat("x", 1000) + `"}}]}`)
	in := ": c\n\n" + toolEv(0, "t") + big + contentEv("x") + big + doneEv
	out, _ := rewrite(t, in, 5, StreamOptions{MaxEvent: 512, FinalMeta: true, Stats: &stats, Warn: func(r string) { warns = append(warns, r) }}, nil)
	if stats.Events != 6 || stats.Oversize != 2 || stats.FinalMeta != 1 {
		t.Fatalf("stats %+v", stats)
	}
	if len(warns) != 2 || warns[0] != ReasonEventTooLarge {
		t.Fatalf("warnings %q", warns)
	}
	if _, rest := cutMetaEvents(t, out); rest != in {
		t.Fatalf("output minus meta differs")
	}
}

// An event larger than MaxEvent passes intact, uninspected, as it arrives;
// the rewriter's memory stays bounded by MaxEvent.
func TestRewriterLargeEvent(t *testing.T) {
	const maxEvent = 1 << 20
	const size = 10 << 20
	const piece = 64 << 10
	prefix := `data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"hidden"}}],"content":"`
	suffix := `"}}],"meta":{"x":1}}` + "\n\n"
	gen := func(off int, p []byte) { // byte off.. of the stream into p
		for i := range p {
			switch j := off + i; {
			case j < len(prefix):
				p[i] = prefix[j]
			case j >= size-len(suffix):
				p[i] = suffix[j-(size-len(suffix))]
			default:
				p[i] = 'a' + byte(j%26)
			}
		}
	}
	tail := toolEv(0, "after") + doneEv

	out := &hashWriter{h: sha256.New()}
	var stats Stats
	warns := 0
	r := NewRewriter(out, StreamOptions{MaxEvent: maxEvent, FinalMeta: true, Stats: &stats, Warn: func(string) { warns++ }}, nil)

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	buf := make([]byte, piece)
	maxCap := 0
	for off := 0; off < size; off += piece {
		p := buf[:min(piece, size-off)]
		gen(off, p)
		if _, err := r.Write(p); err != nil {
			t.Fatal(err)
		}
		// Once the event is known to be too large, its bytes go out as
		// they arrive: at most MaxEvent bytes are ever held back.
		if held := off + len(p) - out.n; held > maxEvent {
			t.Fatalf("after %d bytes: %d held back", off+len(p), held)
		}
		maxCap = max2(maxCap, cap(r.fr.(*sseFraming).split.buf))
	}
	r.Write([]byte(tail))
	r.Close()
	runtime.GC()
	runtime.ReadMemStats(&m1)

	// Output: the big event intact, then the tail with the meta event
	// (from the small event only) before [DONE].
	meta := upMetaEvent(`{"tools_used":["after"]}`)
	wantHash := sha256.New()
	for off := 0; off < size; off += piece {
		p := buf[:min(piece, size-off)]
		gen(off, p)
		wantHash.Write(p)
	}
	wantHash.Write([]byte(toolEv(0, "after") + meta + doneEv))
	if out.n != size+len(tail)+len(meta) || !bytes.Equal(out.h.Sum(nil), wantHash.Sum(nil)) {
		t.Fatalf("output %d bytes, want %d; hash equal: %v", out.n, size+len(tail)+len(meta), bytes.Equal(out.h.Sum(nil), wantHash.Sum(nil)))
	}
	if got := r.Reply().Meta.Tools(); !equalStrings(got, []string{"after"}) || r.Reply().Meta.Has("x") {
		t.Fatalf("the oversize event was inspected: %s", r.Reply().Meta.JSON())
	}
	if stats.Oversize != 1 || warns != 1 {
		t.Fatalf("oversize %d, warnings %d", stats.Oversize, warns)
	}
	if maxCap > 2*maxEvent {
		t.Fatalf("splitter buffer cap %d > 2*MaxEvent", maxCap)
	}
	if c := cap(r.wbuf) + cap(r.keys.Held()) + cap(r.fr.(*sseFraming).scratch); c > 64<<10 {
		t.Fatalf("rewriter buffers hold %d bytes", c)
	}
	// What the rewriter keeps after the stream: at most about MaxEvent
	// (the splitter's buffer), far from the 10 MiB that went through.
	if grown := int64(m1.HeapInuse) - int64(m0.HeapInuse); grown > 3*maxEvent {
		t.Fatalf("heap in use grew by %d bytes", grown)
	}
	runtime.KeepAlive(r)
}

type hashWriter struct {
	h hash.Hash
	n int
}

func (w *hashWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return w.h.Write(p)
}

func TestChunkBuilders(t *testing.T) {
	h := NewChunkHead("chatcmpl-1", 1733000000, "gpt-4o-mini")
	check := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s:\n got %q\nwant %q", name, got, want)
		}
		assertEventsParse(t, got)
	}
	check("delta", string(h.AppendDelta(nil, "content", "hi \"x\"\n", false)),
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"hi \"x\"\n"},"finish_reason":null}]}`+"\n\n")
	check("delta role", string(h.AppendDelta([]byte("x"), "reasoning_content", "r", true))[1:],
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"r"},"finish_reason":null}]}`+"\n\n")
	check("finish", string(h.AppendFinish(nil, "tool_calls", false, []byte(`{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`))),
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`+"\n\n")
	check("finish role", string(h.AppendFinish(nil, "stop", true, nil)),
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":"stop"}]}`+"\n\n")
	check("meta", string(h.AppendMeta(nil, []byte(`{"tools_used":["a"]}`))),
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini","choices":[],"meta":{"tools_used":["a"]}}`+"\n\n")
	check("bare", string(AppendBareMeta(nil, []byte(`{"a":1}`))), "data: {\"meta\":{\"a\":1}}\n\n")
	check("error", string(AppendErrorEvent(nil, `bad "thing"`)), `data: {"error":{"message":"bad \"thing\"","type":"upstream_error"}}`+"\n\n")
	if string(DoneEvent) != "data: [DONE]\n\n" {
		t.Fatal("DoneEvent")
	}

	before := time.Now().Unix()
	d := NewChunkHead("", 0, "")
	v := gjson.ParseBytes(bytes.TrimSuffix(bytes.TrimPrefix(d.AppendMeta(nil, []byte(`{}`)), []byte("data: ")), []byte("\n\n")))
	if !regexp.MustCompile(`^chatcmpl-[0-9a-f]{24}$`).MatchString(v.Get("id").Str) || v.Get("created").Int() < before || v.Get("model").Str != "unknown" {
		t.Fatalf("defaults: %s", v.Raw)
	}
	if NewChatID() == NewChatID() {
		t.Fatal("NewChatID repeats")
	}
	// chunkHeadFrom keeps the upstream's raw values and falls back per field.
	called := 0
	hf := chunkHeadFrom([]byte(`{"id":"x\u00e9","created":1.5e9,"model":7}`), func() ChunkHead { called++; return NewChunkHead("fb", 2, "fm") })
	if string(hf.id) != `"x\u00e9"` || string(hf.created) != "1.5e9" || string(hf.model) != `"fm"` || called != 1 {
		t.Fatalf("chunkHeadFrom: %s %s %s", hf.id, hf.created, hf.model)
	}
	hf = chunkHeadFrom([]byte(`{"id":"a","created":1,"model":"b"}`), func() ChunkHead { called++; return ChunkHead{} })
	if called != 1 || string(hf.id) != `"a"` {
		t.Fatal("fallback called with every field present")
	}
}
