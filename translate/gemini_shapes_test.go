package translate

import (
	"io"
	"strings"
	"testing"
)

// The hostile shapes of SPEC 8.1 in Gemini's API (4.6): many candidates,
// many parts, long functionCall arguments, many events, many array
// elements. They join hostileShapes, so the linearity check and the
// benchmarks run them with every other shape.

func init() { hostileShapes = append(hostileShapes, geminiHostileShapes...) }

// geminiEvent is one Gemini SSE event, framed with CRLF as Google frames it.
func geminiEvent(data string) string { return "data: " + data + "\r\n\r\n" }

func geminiCall(i int) string {
	return `{"functionCall":{"name":"tool_` + num(i) + `","args":{"i":` + num(i) + `}}}`
}

// geminiCandidate is candidate i with parts, finished or not.
func geminiCandidate(i int, parts string, finished bool) string {
	c := `{"content":{"role":"model","parts":[` + parts + `]},"index":` + num(i)
	if finished {
		c += `,"finishReason":"STOP"`
	}
	return c + "}"
}

const geminiUsageCounts = `"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9,"totalTokenCount":14}`

// geminiReply is a GenerateContentResponse with candidates.
func geminiReply(candidates string) string {
	return `{"candidates":[` + candidates + `],` + geminiUsageCounts + `,"modelVersion":"gemini-2.5-flash"}`
}

// feedGeminiForward runs a Gemini stream through its pipeline as a
// forwarded stream does (the usage read at the end).
func feedGeminiForward(in []byte) {
	var rep Reply
	rep.Meta.Limit(1<<30, nil)
	opts := sseOpts
	opts.Reply = &rep
	w, _ := OpenStream(FormatGemini, io.Discard, opts, convOpts(), nil)
	w.Write(in)
	w.Close()
}

var geminiHostileShapes = []hostileShape{
	{"gemini/candidates", 300, func(n int) []byte {
		// One event with n finished candidates, each calling a tool: the
		// terminal test and the tools read every one.
		return []byte(geminiEvent(geminiReply(rep(n, ",", func(i int) string {
			return geminiCandidate(i, geminiCall(i), true)
		}))))
	}, feedProtocol(FormatGemini)},
	{"gemini/unfinished_candidates", 300, func(n int) []byte {
		// n events whose n candidates all but the last are finished, then
		// the terminal one: each event's terminal test stops at the first
		// unfinished candidate or reads them all.
		return []byte(rep(n, "", func(int) string {
			return geminiEvent(geminiReply(rep(4, ",", func(i int) string { return geminiCandidate(i, `{"text":"w"}`, i < 3) })))
		}) + geminiEvent(geminiReply(geminiCandidate(0, `{"text":"."}`, true))))
	}, feedProtocol(FormatGemini)},
	{"gemini/function_call_parts", 300, func(n int) []byte {
		return []byte(geminiEvent(geminiReply(geminiCandidate(0, rep(n, ",", geminiCall), true))))
	}, feedProtocol(FormatGemini)},
	{"gemini/text_parts", 1000, func(n int) []byte {
		return []byte(geminiEvent(geminiReply(geminiCandidate(0, rep(n, ",", func(i int) string { return `{"text":"p` + num(i) + `"}` }), true))))
	}, feedProtocol(FormatGemini)},
	{"gemini/long_args", 2000, func(n int) []byte {
		return []byte(geminiEvent(geminiReply(geminiCandidate(0,
			`{"functionCall":{"name":"tool_0","args":{"x":"`+strings.Repeat("x", n)+`"}}}`, true))))
	}, feedProtocol(FormatGemini)},
	{"gemini/text_events", 300, func(n int) []byte {
		return []byte(rep(n, "", func(int) string {
			return geminiEvent(geminiReply(geminiCandidate(0, `{"text":"w"}`, false)))
		}) + geminiEvent(geminiReply(geminiCandidate(0, `{"text":"."}`, true))))
	}, feedProtocol(FormatGemini)},
	{"gemini/usage_events_forwarded", 300, func(n int) []byte {
		// Every event carries counts, as Gemini's do: a forwarded stream
		// keeps the last one's bytes, and reads one at the end.
		return []byte(rep(n, "", func(int) string {
			return geminiEvent(geminiReply(geminiCandidate(0, `{"text":"w"}`, false)))
		}) + geminiEvent(`{"candidates":[`+geminiCandidate(0, `{"text":"."}`, true)+`],"usageMetadata":{"trafficType":"ON_DEMAND"}}`))
	}, feedGeminiForward},
	{"gemini_json/candidates", 300, func(n int) []byte {
		return []byte(geminiReply(rep(n, ",", func(i int) string { return geminiCandidate(i, geminiCall(i)+`,{"text":"p"}`, true) })))
	}, readJSONText},
	{"gemini_json/function_call_parts", 300, func(n int) []byte {
		return []byte(geminiReply(geminiCandidate(0, rep(n, ",", geminiCall), true)))
	}, readJSONText},
	{"gemini_array/elements", 300, func(n int) []byte {
		// run-once over a streamed JSON array (no alt=sse), pretty-printed.
		return []byte("[" + rep(n, ",\r\n", func(int) string {
			return "{\n  \"candidates\": [" + geminiCandidate(0, `{"text":"w"}`, false) + "]\n}"
		}) + ",\r\n" + geminiReply(geminiCandidate(0, `{"text":"."}`, true)) + "]")
	}, feedProtocol(formatGeminiArray)},
}

// TestGeminiShapesAreRead: the shapes above do the work they are meant to
// measure: every tool name of the tool shapes is read, every word of the
// text shapes, and the usage of the forwarded one.
func TestGeminiShapesAreRead(t *testing.T) {
	const n = 50
	for _, sh := range geminiHostileShapes {
		in := sh.input(n)
		var rep Reply
		rep.WantContent, rep.MaxContent = true, 1<<30
		switch {
		case strings.HasPrefix(sh.name, "gemini_json/"):
			out, _, ok := RewriteJSONReply(in, nil, JSONOptions{Reply: &rep})
			if !ok {
				t.Fatalf("%s: not read as JSON", sh.name)
			}
			content, _, _ := JSONReplyText(out, &rep)
			rep.AddText(content)
		default:
			f := FormatGemini
			if strings.HasPrefix(sh.name, "gemini_array/") {
				f = formatGeminiArray
			}
			rep.WantContent = !strings.HasSuffix(sh.name, "_forwarded")
			opts := sseOpts
			opts.Reply = &rep
			w, _ := OpenStream(f, io.Discard, opts, convOpts(), nil)
			w.Write(in)
			w.Close()
			if !rep.Terminal {
				t.Errorf("%s: no terminal event read", sh.name)
			}
		}
		tools, text := len(rep.Meta.Tools()), rep.Content()
		switch {
		case strings.Contains(sh.name, "candidates") && !strings.Contains(sh.name, "unfinished"),
			strings.Contains(sh.name, "function_call"):
			if tools != n {
				t.Errorf("%s: %d tools read of %d", sh.name, tools, n)
			}
		case strings.Contains(sh.name, "long_args"):
			if tools != 1 {
				t.Errorf("%s: %d tools read", sh.name, tools)
			}
		case strings.HasSuffix(sh.name, "_forwarded"):
			if rep.Usage.Input != 5 || rep.Usage.Output != 9 {
				t.Errorf("%s: usage %+v", sh.name, rep.Usage)
			}
		default:
			if strings.Count(text, "w") < n && strings.Count(text, "p") < n {
				t.Errorf("%s: text %q…", sh.name, text[:min(len(text), 40)])
			}
		}
	}
}
