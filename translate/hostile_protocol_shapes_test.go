package translate

import (
	"io"
	"strings"
	"testing"
)

// The hostile shapes of SPEC 8.1 in the Responses API (4.4) and Anthropic
// Messages (4.5): the elements an attacker would repeat in their events and
// JSON replies. They join hostileShapes, so the linearity check and the
// benchmarks run them with every other shape.

func init() { hostileShapes = append(hostileShapes, protocolHostileShapes...) }

// namedEvent is one SSE event with an event: line, as both protocols send.
func namedEvent(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

// feedProtocol runs a stream of protocol f through its pipeline, in one
// write, reading the text as run-once does (the most work per event).
func feedProtocol(f Format) func(in []byte) {
	return feedRecord(f, func(rep *Reply) { rep.WantContent, rep.MaxContent = true, 1<<30 })
}

// feedRecord runs a stream of protocol f through its pipeline, in one
// write, into a record that set has set up.
func feedRecord(f Format, set func(*Reply)) func(in []byte) {
	return func(in []byte) {
		var rep Reply
		set(&rep)
		rep.Meta.Limit(1<<30, nil)
		opts := sseOpts
		opts.Reply = &rep
		w, _ := OpenStream(f, io.Discard, opts, convOpts(), nil)
		w.Write(in)
		w.Close()
	}
}

// readJSONText rewrites a JSON reply with a bound too large to be reached,
// then reads its text as run-once does.
func readJSONText(in []byte) {
	var r Reply
	r.Meta.Limit(1<<30, nil)
	out, _, _ := RewriteJSONReply(in, nil, JSONOptions{Reply: &r})
	JSONReplyText(out, &r)
}

func responsesFunctionCall(i int) string {
	return `{"type":"function_call","id":"fc_` + num(i) + `","call_id":"call_` + num(i) + `","name":"tool_` + num(i) + `","arguments":"{}","status":"completed"}`
}

func anthropicToolUse(i int) string {
	return `{"type":"tool_use","id":"toolu_` + num(i) + `","name":"tool_` + num(i) + `","input":{}}`
}

const (
	responsesCreated = `{"type":"response.created","response":{"id":"resp_1","object":"response","model":"m","status":"in_progress","output":[]}}`
	anthropicStart   = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}`
	anthropicEnd     = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// responsesCompleted is the terminal event with output items.
func responsesCompleted(output string) string {
	return namedEvent("response.completed", `{"type":"response.completed","response":{"id":"resp_1","object":"response","model":"m","status":"completed","output":[`+output+`],"usage":{"input_tokens":5,"output_tokens":9,"total_tokens":14}}}`)
}

var protocolHostileShapes = []hostileShape{
	{"responses/text_deltas", 300, func(n int) []byte {
		return []byte(namedEvent("response.created", responsesCreated) + rep(n, "", func(i int) string {
			return namedEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"word "}`)
		}) + responsesCompleted(""))
	}, feedProtocol(FormatResponses)},
	{"responses/text_items", 300, func(n int) []byte {
		// Each delta in an output item of its own: a new part every time.
		return []byte(rep(n, "", func(i int) string {
			return namedEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_`+num(i)+`","output_index":`+num(i)+`,"content_index":0,"delta":"w"}`)
		}) + responsesCompleted(""))
	}, feedProtocol(FormatResponses)},
	{"responses/function_call_items", 300, func(n int) []byte {
		// Each call announced, then all of them again in the terminal event.
		return []byte(rep(n, "", func(i int) string {
			return namedEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":`+num(i)+`,"item":`+responsesFunctionCall(i)+`}`)
		}) + responsesCompleted(rep(n, ",", responsesFunctionCall)))
	}, feedProtocol(FormatResponses)},
	{"responses/long_delta", 2000, func(n int) []byte {
		return []byte(namedEvent("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","delta":"`+strings.Repeat("x", n)+`"}`) + responsesCompleted(""))
	}, feedProtocol(FormatResponses)},
	{"responses/meta_in_terminal", 250, func(n int) []byte {
		return []byte(namedEvent("response.completed", `{"type":"response.completed","response":{"id":"r","object":"response","output":[],"meta":{`+
			rep(n, ",", func(i int) string { return `"key_` + num(i) + `":` + num(i) })+`}}}`))
	}, feedProtocol(FormatResponses)},
	{"responses_json/function_calls", 300, func(n int) []byte {
		return []byte(`{"id":"resp_1","object":"response","model":"m","output":[` + rep(n, ",", responsesFunctionCall) + `],"usage":{"input_tokens":5,"output_tokens":9}}`)
	}, readJSONText},
	{"responses_json/text_parts", 1000, func(n int) []byte {
		return []byte(`{"id":"resp_1","object":"response","output":[{"type":"message","content":[` +
			rep(n, ",", func(i int) string { return `{"type":"output_text","text":"p` + num(i) + `"}` }) + `]}]}`)
	}, readJSONText},
	{"anthropic/text_deltas", 300, func(n int) []byte {
		return []byte(namedEvent("message_start", anthropicStart) + rep(n, "", func(i int) string {
			return namedEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"word "}}`)
		}) + anthropicEnd)
	}, feedProtocol(FormatAnthropic)},
	{"anthropic/text_blocks", 300, func(n int) []byte {
		// Each delta in a block of its own: a new part every time.
		return []byte(namedEvent("message_start", anthropicStart) + rep(n, "", func(i int) string {
			return namedEvent("content_block_delta", `{"type":"content_block_delta","index":`+num(i)+`,"delta":{"type":"text_delta","text":"w"}}`)
		}) + anthropicEnd)
	}, feedProtocol(FormatAnthropic)},
	{"anthropic/tool_use_blocks", 300, func(n int) []byte {
		return []byte(namedEvent("message_start", anthropicStart) + rep(n, "", func(i int) string {
			return namedEvent("content_block_start", `{"type":"content_block_start","index":`+num(i)+`,"content_block":`+anthropicToolUse(i)+`}`)
		}) + anthropicEnd)
	}, feedProtocol(FormatAnthropic)},
	{"anthropic/long_delta", 2000, func(n int) []byte {
		return []byte(namedEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+strings.Repeat("x", n)+`"}}`) + anthropicEnd)
	}, feedProtocol(FormatAnthropic)},
	{"anthropic_json/tool_use_blocks", 300, func(n int) []byte {
		return []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[` + rep(n, ",", anthropicToolUse) + `],"usage":{"input_tokens":5,"output_tokens":9}}`)
	}, readJSONText},
	{"anthropic_json/text_blocks", 1000, func(n int) []byte {
		return []byte(`{"id":"msg_1","type":"message","content":[` + rep(n, ",", func(i int) string { return `{"type":"text","text":"p` + num(i) + `"}` }) + `]}`)
	}, readJSONText},
}

// TestProtocolShapesAreRead: the shapes above do the work they are meant
// to measure: every tool name of the tool shapes is read, and every word of
// the text shapes (a shape the pipeline ignored would measure nothing).
func TestProtocolShapesAreRead(t *testing.T) {
	const n = 50
	for _, sh := range protocolHostileShapes {
		in := sh.input(n)
		var rep Reply
		rep.WantContent, rep.MaxContent = true, 1<<30
		switch {
		case strings.HasPrefix(sh.name, "responses/"), strings.HasPrefix(sh.name, "anthropic/"):
			f := FormatResponses
			if strings.HasPrefix(sh.name, "anthropic/") {
				f = FormatAnthropic
			}
			opts := sseOpts
			opts.Reply = &rep
			w, _ := OpenStream(f, io.Discard, opts, convOpts(), nil)
			w.Write(in)
			w.Close()
		default:
			out, _, ok := RewriteJSONReply(in, nil, JSONOptions{Reply: &rep})
			if !ok {
				t.Fatalf("%s: not read as JSON", sh.name)
			}
			content, _, _ := JSONReplyText(out, &rep)
			rep.AddText(content)
		}
		tools, text := len(rep.Meta.Tools()), rep.Content()
		switch {
		case strings.Contains(sh.name, "function_call") || strings.Contains(sh.name, "tool_use"):
			if tools != n {
				t.Errorf("%s: %d tools read of %d", sh.name, tools, n)
			}
		case strings.Contains(sh.name, "meta_in_terminal"):
			if got := len(rep.Meta.JSON()); got < n*10 {
				t.Errorf("%s: meta of %d bytes read", sh.name, got)
			}
		case strings.Contains(sh.name, "long_delta"):
			if !strings.Contains(text, strings.Repeat("x", n)) {
				t.Errorf("%s: text %q…", sh.name, text[:min(len(text), 20)])
			}
		default:
			if strings.Count(text, "w") < n && strings.Count(text, "p") < n {
				t.Errorf("%s: text %q…", sh.name, text[:min(len(text), 40)])
			}
		}
	}
}
