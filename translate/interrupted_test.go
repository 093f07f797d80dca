package translate

import (
	"strings"
	"testing"
)

// throughStream runs in through the module's pipeline for format f
// (OpenStream, with a record), in pieces of n bytes (0: at once), and
// closes it.
func throughStream(t *testing.T, f Format, in string, n int, sse StreamOptions) (string, *Reply) {
	t.Helper()
	if sse.MaxEvent == 0 {
		sse.MaxEvent = 1 << 20
	}
	var w recWriter
	rep := &Reply{Asked: Asked{WantContent: true}}
	sse.Reply = rep
	chain, _ := OpenStream(f, &w, sse, ConvertOptions{Model: "m", MaxLine: 1 << 20, Created: 1}, nil)
	for rest := in; len(rest) > 0; {
		k := n
		if k <= 0 || k > len(rest) {
			k = len(rest)
		}
		if _, err := chain.Write([]byte(rest[:k])); err != nil {
			t.Fatalf("Write: %v", err)
		}
		rest = rest[k:]
	}
	if err := chain.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return w.buf.String(), rep
}

var markOn = StreamOptions{FinalMeta: true, MarkInterrupted: true}

const chatInterruptedEvent = `data: {"error":{"message":"The upstream ended the reply before it was complete.","type":"upstream_interrupted","code":null}}` + "\n\n"

// The ends of a chat stream (SPEC 11.1): [DONE], a finish_reason, an error
// event; a stream that carried no chat chunk is never cut short.
func TestChatStreamEnds(t *testing.T) {
	cases := []struct {
		name, in string
		cut      bool
	}{
		{"done", roleEv() + contentEv("a") + doneEv, false},
		{"done without finish", contentEv("a") + doneEv, false},
		{"finish, no done", contentEv("a") + finishChunkEv("stop"), false},
		{"finish, then usage", contentEv("a") + finishChunkEv("length") + ev(`{`+upHead+`,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`), false},
		{"error event", contentEv("a") + ev(`{"error":{"message":"boom"}}`), false},
		{"no end", roleEv() + contentEv("a"), true},
		{"finish null only", contentEv("a") + ev(`{`+upHead+`,"choices":[{"index":0,"delta":{},"finish_reason" : null}]}`), true},
		{"the word in text", ev(`{"choices":[{"index":0,"delta":{"content":"\"finish_reason\":\"stop\""}}]}`), true},
		{"no chat chunk", "data: hello\n\n" + ev(`{"candidates":[]}`), false},
		{"nothing", "", false},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			out, rep := throughStream(t, FormatSSE, c.in, n, markOn)
			if rep.Interrupted != c.cut {
				t.Fatalf("%s %s: interrupted = %v, want %v", c.name, chunkName(n), rep.Interrupted, c.cut)
			}
			if strings.HasSuffix(out, chatInterruptedEvent) != c.cut {
				t.Fatalf("%s %s: error event written %v, want %v:\n%s", c.name, chunkName(n), !c.cut, c.cut, out)
			}
			if c.cut && !strings.HasPrefix(out, c.in) {
				t.Fatalf("%s %s: upstream bytes lost:\n%s", c.name, chunkName(n), out)
			}
		}
	}
}

// mark_interrupted in the native protocols: the protocol's own error event,
// with the meta, in the stream's line ending, after an event the body ended
// inside is ended; Responses numbers it after the upstream's last event.
func TestMarkInterruptedNative(t *testing.T) {
	anth := "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-x\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\r\n\r\n" +
		"event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"get_weather\",\"input\":{}}}\r\n\r\n" +
		"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"ci\"}}"
	resp := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"model\":\"gpt\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":7,\"item_id\":\"m\",\"delta\":\"Hi\"}\n\n"
	respNoSeq := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\n"
	gem := "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"The\"}],\"role\": \"model\"}}],\"modelVersion\": \"gemini-2.5-flash\"}\r\n\r\n"
	cases := []struct {
		name string
		f    Format
		in   string
		want string // what follows the upstream's bytes
	}{
		{"anthropic crlf, cut inside an event", FormatAnthropic, anth, "\r\n\r\n" +
			"event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"The upstream ended the reply before it was complete.\"},\"meta\":{\"tools_used\":[\"get_weather\"],\"interrupted\":true,\"usage\":{\"input_tokens\":3,\"output_tokens\":1,\"total_tokens\":4}}}\r\n\r\n"},
		{"responses", FormatResponses, resp,
			"event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_interrupted\",\"message\":\"The upstream ended the reply before it was complete.\",\"param\":null,\"sequence_number\":8,\"meta\":{\"interrupted\":true}}\n\n"},
		{"gemini crlf", FormatGemini, gem,
			"data: {\"error\":{\"code\":502,\"message\":\"The upstream ended the reply before it was complete.\",\"status\":\"UNAVAILABLE\"},\"meta\":{\"interrupted\":true}}\r\n\r\n"},
		{"responses without sequence numbers", FormatResponses, respNoSeq,
			"event: error\ndata: {\"type\":\"error\",\"code\":\"upstream_interrupted\",\"message\":\"The upstream ended the reply before it was complete.\",\"param\":null,\"sequence_number\":0,\"meta\":{\"interrupted\":true}}\n\n"},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			out, rep := throughStream(t, c.f, c.in, n, markOn)
			if !rep.Interrupted || out != c.in+c.want {
				t.Fatalf("%s %s: interrupted %v\n got %q\nwant %q", c.name, chunkName(n), rep.Interrupted, out, c.in+c.want)
			}
			// Off: the upstream's bytes alone (no event is left to carry
			// the meta), and the record still says so.
			out, rep = throughStream(t, c.f, c.in, n, finalMetaOn)
			if !rep.Interrupted || out != c.in {
				t.Fatalf("%s %s, mark off: interrupted %v, got %q", c.name, chunkName(n), rep.Interrupted, out)
			}
			// final_meta off: the event carries no meta.
			out, _ = throughStream(t, c.f, c.in, n, StreamOptions{MarkInterrupted: true})
			if strings.Contains(out[len(c.in):], `"meta"`) || !strings.Contains(out, "upstream ended the reply") {
				t.Fatalf("%s %s, final_meta off: %q", c.name, chunkName(n), out[len(c.in):])
			}
		}
	}
	// An error event is an end: nothing of ours after it.
	errStream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	if out, rep := throughStream(t, FormatAnthropic, errStream, 0, markOn); rep.Interrupted || out != errStream {
		t.Fatalf("error event: interrupted %v, %q", rep.Interrupted, out)
	}
}

// The conversions (SPEC 5, 11.1): a data stream ends with d, or with a last
// e part followed only by 2 and 8 parts and skipped lines; a UI stream with
// finish, and abort is an end that is an interruption. A stream cut short
// ends with its final meta event and the error event, without [DONE].
func TestConvertedStreamEnds(t *testing.T) {
	cases := []struct {
		name string
		f    Format
		in   string
		cut  bool
	}{
		{"d", FormatDataStream, "0:\"a\"\nd:{\"finishReason\":\"stop\"}\n", false},
		{"last e", FormatDataStream, "0:\"a\"\ne:{\"finishReason\":\"stop\",\"isContinued\":false}\n", false},
		{"last e, then 2, 8 and skipped lines", FormatDataStream, "0:\"a\"\ne:{\"finishReason\":\"stop\"}\n2:[{\"x\":1}]\n\nnot a part\n8:[]\n0:{bad\n", false},
		{"e continued", FormatDataStream, "0:\"a\"\ne:{\"finishReason\":\"tool-calls\",\"isContinued\":true}\n", true},
		{"e then more text", FormatDataStream, "e:{\"finishReason\":\"stop\"}\nf:{\"messageId\":\"x\"}\n0:\"b\"\n", true},
		{"e then a tool result", FormatDataStream, "0:\"a\"\ne:{}\na:{\"toolCallId\":\"c\",\"result\":1}\n", true},
		{"error part", FormatDataStream, "0:\"a\"\n3:\"boom\"\n", false},
		{"no end", FormatDataStream, "0:\"a\"\n0:\"b\"", true},
		{"finish", FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\ndata: {\"type\":\"finish\"}\n\n", false},
		{"finish, then done", FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\ndata: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n", false},
		{"abort", FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\ndata: {\"type\":\"abort\"}\n\ndata: [DONE]\n\n", true},
		{"finish, then abort", FormatUIStream, "data: {\"type\":\"finish\"}\n\ndata: {\"type\":\"abort\"}\n\n", false},
		{"error", FormatUIStream, "data: {\"type\":\"error\",\"errorText\":\"boom\"}\n\n", false},
		{"done without finish", FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\ndata: [DONE]\n\n", true},
		{"no end", FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\n", true},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			for _, mark := range []bool{false, true} {
				out, rep := throughStream(t, c.f, c.in, n, StreamOptions{FinalMeta: true, MarkInterrupted: mark})
				if rep.Interrupted != c.cut {
					t.Fatalf("%s %s: interrupted = %v, want %v", c.name, chunkName(n), rep.Interrupted, c.cut)
				}
				if c.cut && !strings.Contains(out, `"meta":{"interrupted":true`) {
					t.Fatalf("%s %s: no final meta event saying so:\n%s", c.name, chunkName(n), out)
				}
				marked := c.cut && mark
				if strings.HasSuffix(out, chatInterruptedEvent) != marked || strings.HasSuffix(out, DoneEventString) == marked {
					t.Fatalf("%s %s mark %v: wrong ending:\n%s", c.name, chunkName(n), mark, out)
				}
				if strings.Contains(out, `"Error: `) {
					t.Fatalf("%s: an error chunk of ours", c.name)
				}
			}
		}
	}
}

// DoneEventString is DoneEvent as a string, for tests.
var DoneEventString = string(DoneEvent)

// A stream whose connection failed is not a clean end: not cut short, in
// any protocol (SPEC 11.1).
func TestBrokenStreamIsNotInterrupted(t *testing.T) {
	for _, c := range []struct {
		f  Format
		in string
	}{
		{FormatSSE, contentEv("a")},
		{FormatResponses, "data: {\"type\":\"response.created\",\"response\":{}}\n\n"},
		{FormatDataStream, "0:\"a\"\n"},
		{FormatUIStream, "data: {\"type\":\"text-delta\",\"delta\":\"a\"}\n\n"},
	} {
		var w recWriter
		rep := &Reply{Told: Told{Broken: true}}
		chain, _ := OpenStream(c.f, &w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, MarkInterrupted: true, Reply: rep}, ConvertOptions{Model: "m"}, nil)
		chain.Write([]byte(c.in))
		chain.Close()
		if rep.Interrupted || strings.Contains(w.buf.String(), "interrupted") {
			t.Errorf("%s: a broken stream said interrupted: %q", c.f, w.buf.String())
		}
	}
}

// The edge stream (SPEC 6.3) shows an upstream error as content, but not
// the module's own error event.
func TestEdgeStreamNoErrorChunkForOwnEvent(t *testing.T) {
	opts := markOn
	opts.Chat.ErrorsAsContent = true
	out, rep := throughStream(t, FormatSSE, contentEv("a"), 0, opts)
	if !rep.Interrupted || strings.Contains(out, "Error:") || !strings.HasSuffix(out, chatInterruptedEvent) {
		t.Fatalf("edge stream cut short: %q", out)
	}
}
