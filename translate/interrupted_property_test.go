package translate

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRecordedStreamsCutShort cuts every recorded upstream stream
// (testdata/fixtures) at each event boundary and inside each event (just
// after its start, in its middle, one byte short of each line's end, after
// its data line but before its blank line), and checks the module against SPEC 11.1's table read
// independently here: interrupted is set exactly when the table says, never
// on a whole stream; with mark_interrupted, a stream passed on is its
// upstream bytes, every one, then the protocol's error event exactly when
// it was cut short; a converted one ends with the error event instead of
// [DONE] exactly then.
func TestRecordedStreamsCutShort(t *testing.T) {
	dir := upstreamFixturesDir(t)
	for _, name := range fixtureNames(t, dir) {
		t.Run(name, func(t *testing.T) {
			in := string(loadUpstreamFixture(t, dir, name))
			f, oracle := fixtureProtocol(name)
			if _, rep := throughStream(t, f, in, 0, markOn); rep.Interrupted {
				t.Fatalf("the whole recorded stream is interrupted")
			}
			if oracle(in) {
				t.Fatalf("the oracle says the whole recorded stream is cut short")
			}
			for i, k := range cutPoints(in, f == FormatDataStream) {
				cut := in[:k]
				want := oracle(cut)
				out, rep := throughStream(t, f, cut, 1+i%7, StreamOptions{MarkInterrupted: true})
				if rep.Interrupted != want {
					t.Fatalf("cut at %d of %d: interrupted = %v, SPEC 11.1 says %v\n%q", k, len(in), rep.Interrupted, want, cut)
				}
				if protocolOf(f).convert != nil {
					if strings.HasSuffix(out, DoneEventString) == want || strings.HasSuffix(out, chatInterruptedEvent) != want {
						t.Fatalf("cut at %d: converted stream's ending, interrupted %v:\n%q", k, want, out)
					}
					continue
				}
				rest, ok := strings.CutPrefix(out, cut)
				if !ok {
					t.Fatalf("cut at %d: upstream bytes lost or changed:\n got %q\nwant prefix %q", k, out, cut)
				}
				if (rest != "") != want || want && (strings.Count(rest, "data:") != 1 || !strings.Contains(rest, InterruptedMessage)) {
					t.Fatalf("cut at %d: after the upstream's bytes %q (interrupted %v)", k, rest, want)
				}
			}
		})
	}
}

// cutPoints are the lengths a stream is cut to: each event's end (each
// line's, for a data stream), and inside each event.
func cutPoints(in string, lines bool) []int {
	var pts []int
	start := 0
	for i := 0; i < len(in); i++ {
		if in[i] != '\n' && in[i] != '\r' {
			continue
		}
		end := i + 1
		if in[i] == '\r' && end < len(in) && in[end] == '\n' {
			end++
		}
		blank := lines || end < len(in) && (in[end] == '\n' || in[end] == '\r')
		// The line without its last byte (a JSON object without its
		// closing brace).
		pts = append(pts, i-1)
		if !blank {
			pts = append(pts, end) // a line of the event: its data is whole, its blank line missing
			continue
		}
		if !lines {
			end++
			if in[end-1] == '\r' && end < len(in) && in[end] == '\n' {
				end++
			}
		}
		pts = append(pts, start+1, (start+end)/2, end)
		start, i = end, end-1
	}
	return append(pts, len(in))
}

// fixtureProtocol is the protocol a recorded stream is in, by its name, and
// SPEC 11.1's table for it: whether a body that ends after in is cut short.
func fixtureProtocol(name string) (Format, func(in string) bool) {
	switch {
	case strings.HasPrefix(name, "anthropic-messages"):
		return FormatAnthropic, terminalOracle(func(e map[string]any) bool { return e["type"] == "message_stop" })
	case strings.HasPrefix(name, "openai-responses"):
		return FormatResponses, terminalOracle(func(e map[string]any) bool {
			t := e["type"]
			return t == "response.completed" || t == "response.incomplete" || t == "response.failed"
		})
	case strings.HasPrefix(name, "vercel-data-stream"):
		return FormatDataStream, dataStreamOracle
	case strings.HasPrefix(name, "vercel-ui-message"):
		return FormatUIStream, uiStreamOracle
	case strings.HasPrefix(name, "gemini"):
		for _, p := range protocols {
			if p.name == "gemini" {
				return *p.format, terminalOracle(geminiTerminalOracle)
			}
		}
	}
	return FormatSSE, chatOracle
}

// eventObjects reads an event stream by the WHATWG rules, independently of
// the module's splitter: the data of each event (the end of the body ends
// an unterminated last one) that is a JSON object.
func eventObjects(in string) []map[string]any {
	var out []map[string]any
	var data []string
	dispatch := func() {
		var obj map[string]any
		if data != nil && json.Unmarshal([]byte(strings.Join(data, "\n")), &obj) == nil && obj != nil {
			out = append(out, obj)
		}
		data = nil
	}
	in = strings.ReplaceAll(strings.ReplaceAll(in, "\r\n", "\n"), "\r", "\n")
	for line := range strings.SplitSeq(in, "\n") {
		switch {
		case line == "":
			dispatch()
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	dispatch()
	return out
}

// isErrorEvent is SPEC 4.3's error event.
func isErrorEvent(e map[string]any) bool {
	switch v := e["error"].(type) {
	case map[string]any, string:
		_ = v
		return true
	}
	return e["type"] == "error" || e["object"] == "error"
}

// terminalOracle: a protocol whose end is its terminal event; an error
// event ends it too.
func terminalOracle(terminal func(map[string]any) bool) func(string) bool {
	return func(in string) bool {
		evs := eventObjects(in)
		for _, e := range evs {
			if terminal(e) || isErrorEvent(e) {
				return false
			}
		}
		return len(evs) > 0
	}
}

func geminiTerminalOracle(e map[string]any) bool {
	if pf, ok := e["promptFeedback"].(map[string]any); ok && pf["blockReason"] != nil {
		return true
	}
	cands, _ := e["candidates"].([]any)
	for _, c := range cands {
		if m, _ := c.(map[string]any); m == nil || m["finishReason"] == nil {
			return false
		}
	}
	return len(cands) > 0
}

// chatOracle: a stream that carried a chat chunk ends with [DONE], a
// finish_reason or an error event.
func chatOracle(in string) bool {
	if strings.Contains(strings.ReplaceAll(in, "\r", "\n"), "\ndata: [DONE]\n") || strings.HasPrefix(in, "data: [DONE]") {
		return false
	}
	carried := false
	for _, e := range eventObjects(in) {
		if isErrorEvent(e) {
			return false
		}
		choices, ok := e["choices"].([]any)
		if !ok {
			continue
		}
		carried = true
		for _, c := range choices {
			if m, _ := c.(map[string]any); m != nil && m["finish_reason"] != nil {
				return false
			}
		}
	}
	return carried
}

// dataStreamOracle: d or 3 ends it; else a last e (not continued) that only
// 2 and 8 parts and skipped lines follow.
func dataStreamOracle(in string) bool {
	lastE := false
	for line := range strings.SplitSeq(in, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if len(line) < 2 || line[1] != ':' || !json.Valid([]byte(line[2:])) {
			continue // blank or skipped
		}
		switch line[0] {
		case 'd':
			if strings.HasPrefix(strings.TrimSpace(line[2:]), "{") {
				return false
			}
		case '3':
			if strings.HasPrefix(strings.TrimSpace(line[2:]), `"`) {
				return false
			}
			lastE = false
		case '2', '8':
		case 'e':
			var v struct {
				IsContinued any `json:"isContinued"`
			}
			_ = json.Unmarshal([]byte(line[2:]), &v)
			lastE = v.IsContinued != true
		default:
			lastE = false
		}
	}
	return !lastE
}

// uiStreamOracle: finish ends it; abort before it ends it cut short; an
// error part ends it.
func uiStreamOracle(in string) bool {
	for _, e := range eventObjects(in) {
		switch e["type"] {
		case "finish", "error":
			return false
		case "abort":
			return true
		}
	}
	return true
}
