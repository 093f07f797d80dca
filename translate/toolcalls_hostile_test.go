package translate

import (
	"io"
	"strings"
	"testing"
)

// The hostile shapes of SPEC 8.1 for tool_arguments (11.3): one call's
// arguments in ever more fragments, ever more calls, arguments ever
// larger and deeper. They join hostileShapes, so that
// TestHostileInputLinear and BenchmarkHostile run them with the others.

func init() { hostileShapes = append(hostileShapes, toolArgsShapes...) }

// feedArgs runs a stream of protocol f through its pipeline with
// tool_arguments on, in one write.
func feedArgs(f Format) func(in []byte) {
	return feedRecord(f, func(rep *Reply) { rep.ToolArguments = true })
}

// rewriteArgs rewrites a JSON reply with tool_arguments on.
func rewriteArgs(in []byte) {
	var rep Reply
	rep.ToolArguments = true
	rep.Meta.Limit(1<<30, nil)
	RewriteJSONReply(in, nil, JSONOptions{Reply: &rep})
}

// chatCallDelta is a chunk with one tool-call delta of choice 0.
func chatCallDelta(call string) string {
	return sseEvent(chunkHead + `{"index":0,"delta":{"tool_calls":[` + call + `]},"finish_reason":null}]}`)
}

var toolArgsShapes = []hostileShape{
	{"tool_args/chat_fragments", 1000, func(n int) []byte {
		// One call, its arguments in n fragments (escapes in each).
		return []byte(chatCallDelta(`{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":""}}`) +
			rep(n, "", func(int) string { return chatCallDelta(`{"index":0,"function":{"arguments":"{\"k\":\"v\u00e9\"}"}}`) }) +
			sseEvent("[DONE]"))
	}, feedArgs(FormatSSE)},
	{"tool_args/chat_calls", 1000, func(n int) []byte {
		// n calls, each begun and given a fragment.
		return []byte(rep(n, "", func(i int) string {
			return chatCallDelta(`{"index":`+num(i)+`,"id":"c`+num(i)+`","type":"function","function":{"name":"f`+num(i)+`","arguments":""}}`) +
				chatCallDelta(`{"index":`+num(i)+`,"function":{"arguments":"{}"}}`)
		}) + sseEvent("[DONE]"))
	}, feedArgs(FormatSSE)},
	{"tool_args/chat_unindexed_calls", 1000, func(n int) []byte {
		// n calls without an index, each continued once.
		return []byte(rep(n, "", func(i int) string {
			return chatCallDelta(`{"function":{"name":"f`+num(i%7)+`","arguments":"{"}}`) +
				chatCallDelta(`{"function":{"arguments":"}"}}`)
		}) + sseEvent("[DONE]"))
	}, feedArgs(FormatSSE)},
	{"tool_args/chat_json_calls", 1000, func(n int) []byte {
		return []byte(`{"choices":[{"index":0,"message":{"tool_calls":[` + rep(n, ",", func(i int) string {
			return `{"id":"c` + num(i) + `","type":"function","function":{"name":"f` + num(i) + `","arguments":"{\"i\":` + num(i) + `}"}}`
		}) + `]}}]}`)
	}, rewriteArgs},
	{"tool_args/chat_json_huge_escaped_args", 2000, func(n int) []byte {
		// One call whose arguments are n escaped characters: decoded
		// only as far as an entry holds.
		return []byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"` +
			strings.Repeat(`\u00e9\n`, n) + `"}}]}}]}`)
	}, rewriteArgs},
	{"tool_args/anthropic_fragments", 1000, func(n int) []byte {
		return []byte(namedEvent("message_start", anthropicStart) +
			namedEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`) +
			rep(n, "", func(int) string {
				return namedEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}`)
			}) + anthropicEnd)
	}, feedArgs(FormatAnthropic)},
	{"tool_args/anthropic_deep_input", 2000, func(n int) []byte {
		// A block's input nested n deep, in its content_block_start.
		return []byte(namedEvent("message_start", anthropicStart) +
			namedEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":`+
				strings.Repeat(`{"a":[`, n)+strings.Repeat(`]}`, n)+`}}`) + anthropicEnd)
	}, feedArgs(FormatAnthropic)},
	{"tool_args/responses_items", 300, func(n int) []byte {
		return []byte(namedEvent("response.created", responsesCreated) + rep(n, "", func(i int) string {
			return namedEvent("response.output_item.added", `{"type":"response.output_item.added","output_index":`+num(i)+`,"item":`+responsesFunctionCall(i)+`}`) +
				namedEvent("response.output_item.done", `{"type":"response.output_item.done","output_index":`+num(i)+`,"item":`+responsesFunctionCall(i)+`}`)
		}) + responsesCompleted(""))
	}, feedArgs(FormatResponses)},
	{"tool_args/gemini_calls", 300, func(n int) []byte {
		// n events of two calls each.
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"f` + num(i) + `","args":{"i":` + num(i) +
				`}}},{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]}}]},"index":0}]}`)
		}) + sseEvent(`{"candidates":[{"content":{"role":"model","parts":[{"text":"."}]},"finishReason":"STOP","index":0}]}`))
	}, feedArgs(FormatGemini)},
	{"tool_args/datastream_calls", 1000, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return `9:{"toolCallId":"c` + num(i) + `","toolName":"f` + num(i%5) + `","args":{"i":` + num(i) + `}}` + "\n"
		}) + `d:{"finishReason":"stop"}` + "\n")
	}, feedArgs(FormatDataStream)},
	{"tool_args/uistream_calls", 1000, func(n int) []byte {
		// n calls, each id new: looked for among the entries held.
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(`{"type":"tool-input-available","toolCallId":"call-` + num(i) + `","toolName":"f","input":{"i":` + num(i) + `}}`)
		}) + sseEvent(`{"type":"finish"}`))
	}, feedArgs(FormatUIStream)},
}

// TestToolCallsBoundedOnHostileStreams feeds what SPEC 11.3's bounds are
// for, write by write as an upstream would: a million fragments of one
// call's arguments, and 100,000 calls. The record holds 64 entries at
// most, each with at most keepArgs bytes of arguments.
func TestToolCallsBoundedOnHostileStreams(t *testing.T) {
	frag := []byte(chatCallDelta(`{"index":0,"function":{"arguments":"ab"}}`))
	call := func(i int) []byte {
		return []byte(chatCallDelta(`{"index":` + num(i) + `,"function":{"name":"f","arguments":"{}"}}`))
	}
	for _, tc := range []struct {
		name  string
		n     int
		write func(i int) []byte
		calls int
	}{
		{"a million fragments", 1_000_000, func(int) []byte { return frag }, 1},
		{"100,000 calls", 100_000, call, MaxToolCalls},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rep Reply
			rep.ToolArguments = true
			w := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: &rep}, nil)
			w.Write(call(0))
			for i := 1; i < tc.n; i++ {
				if _, err := w.Write(tc.write(i)); err != nil {
					t.Fatal(err)
				}
			}
			w.Write([]byte(sseEvent("[DONE]")))
			w.Close()
			if len(rep.calls.list) != tc.calls || cap(rep.calls.list) > MaxToolCalls {
				t.Fatalf("%d entries held (room for %d)", len(rep.calls.list), cap(rep.calls.list))
			}
			for _, c := range rep.calls.list {
				if cap(c.args) > keepArgs {
					t.Fatalf("%d bytes of arguments held", cap(c.args))
				}
			}
			got := toolCallsOf(t, &rep.Meta)
			if len(got) != tc.calls {
				t.Fatalf("%d entries in tool_calls", len(got))
			}
			if tc.calls == 1 && (got[0]["clipped"] != true || len(got[0]["arguments"].(string)) != MaxToolArgBytes) {
				t.Fatalf("entry %v", got[0]["clipped"])
			}
		})
	}
}
