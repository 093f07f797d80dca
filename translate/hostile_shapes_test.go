package translate

import (
	"io"
	"strconv"
	"strings"
)

// Hostile input shapes (SPEC 8.1): for each, an input with n of the element
// an attacker would repeat, and the module's work on it. The benchmarks
// (hostile_bench_test.go) run each at four sizes; TestHostileInputLinear
// checks that the work grows in proportion to the input.

type hostileShape struct {
	name  string
	unit  int                // elements at the smallest benchmark size
	input func(n int) []byte // the input with n elements
	run   func(in []byte)    // the module's work on it
}

// rep joins f(0)…f(n-1) with sep.
func rep(n int, sep string, f func(i int) string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(f(i))
	}
	return b.String()
}

func num(i int) string { return strconv.Itoa(i) }

// hostileMaxEvent lets the shapes that grow one event or line grow past
// the default max_event_bytes: the work is measured, not the limit.
const hostileMaxEvent = 1 << 30

const chunkHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[`

func sseEvent(data string) string { return "data: " + data + "\n\n" }

// feedSSE runs a stream through a rewriter: one write.
func feedSSE(opts StreamOptions) func(in []byte) {
	return func(in []byte) {
		r := NewRewriter(io.Discard, opts, nil)
		r.Write(in)
		r.Close()
	}
}

var sseOpts = StreamOptions{MaxEvent: hostileMaxEvent, FinalMeta: true, Chat: ChatOptions{Model: "m"}}

func convOpts() ConvertOptions {
	return ConvertOptions{Model: "m", MaxLine: hostileMaxEvent, HustleSummary: true, Created: 1, Reply: new(Reply)}
}

// rewriteUnbounded rewrites a JSON reply with a meta bound too large to
// be reached: the work on every key is measured, at every size, rather
// than a path that changes where the bound starts dropping keys.
func rewriteUnbounded(in []byte) {
	var r Reply
	r.Meta.Limit(1<<30, nil)
	RewriteJSONReply(in, nil, JSONOptions{Reply: &r})
}

var hostileShapes = []hostileShape{
	// Request bodies (SPEC 3).
	{"request/repeated_flag", 2000, func(n int) []byte {
		return []byte(`{"model":"m",` + rep(n, ",", func(int) string { return `"run_once":true` }) + `,"messages":[]}`)
	}, func(in []byte) { RewriteRequest(in, RequestOptions{}) }},
	{"request/repeated_model", 2000, func(n int) []byte {
		return []byte(`{"run_once":true,` + rep(n, ",", func(i int) string { return `"model":"gpt-` + num(i) + `"` }) + `}`)
	}, func(in []byte) { RewriteRequest(in, RequestOptions{StructuredModels: []string{"*"}}) }},
	{"request/many_messages_structured", 1000, func(n int) []byte {
		return []byte(`{"model":"m","enable_structured_output":true,"messages":[` +
			rep(n, ",", func(i int) string { return `{"role":"user","content":"m` + num(i) + `"}` }) + `]}`)
	}, func(in []byte) { RewriteRequest(in, RequestOptions{StructuredModels: []string{"*"}}) }},
	{"request/deep_nesting", 2000, func(n int) []byte {
		return []byte(`{"run_once":true,"x":` + strings.Repeat(`{"a":[`, n) + strings.Repeat(`]}`, n) + `,"model":"m"}`)
	}, func(in []byte) { RewriteRequest(in, RequestOptions{}) }},
	{"request/content_parts_to_trim", 500, func(n int) []byte {
		part := `{"type":"text","text":"abc"},{"type":"image_url","image_url":{"url":"u"}}`
		return []byte(`{"messages":[{"role":"user","content":[` + rep(n, ",", func(int) string { return part }) + `]},{"role":"user","content":"last"}]}`)
	}, func(in []byte) { RewriteRequest(in, RequestOptions{MaxPromptChars: 5}) }},
	{"trim/tool_call_pairs", 500, func(n int) []byte {
		return []byte(`{"model":"m","messages":[` + rep(n, ",", func(i int) string {
			id := `"c` + num(i) + `"`
			return `{"role":"assistant","tool_calls":[{"id":` + id + `,"function":{"name":"f"}}]},{"role":"tool","tool_call_id":` + id + `,"content":"answer"}`
		}) + `,{"role":"user","content":"last"}]}`)
	}, func(in []byte) { TrimPrompt(in, 10) }},
	{"trim/answers_far_away", 500, func(n int) []byte {
		// Every call first, every answer after: each answer is found by id.
		calls := rep(n, ",", func(i int) string {
			return `{"role":"assistant","tool_calls":[{"id":"c` + num(i) + `","function":{"name":"f"}}]},{"role":"user","content":"u"}`
		})
		answers := rep(n, ",", func(i int) string { return `{"role":"tool","tool_call_id":"c` + num(i) + `","content":"a"}` })
		return []byte(`{"messages":[` + calls + `,` + answers + `]}`)
	}, func(in []byte) { TrimPrompt(in, 10) }},
	{"trim/tiny_messages", 2000, func(n int) []byte {
		return []byte(`{"messages":[` + rep(n, ",", func(int) string { return `{"content":"ab"}` }) + `]}`)
	}, func(in []byte) { TrimPrompt(in, 10) }},

	// JSON replies (SPEC 4.2).
	{"json/choices_with_meta", 500, func(n int) []byte {
		return []byte(`{"id":"x","choices":[` + rep(n, ",", func(i int) string {
			return `{"index":` + num(i) + `,"message":{"content":"x"},"meta":{"k` + num(i%50) + `":` + num(i) + `}}`
		}) + `]}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/choices_object_with_meta", 500, func(n int) []byte {
		// choices as an object (not what OpenAI sends): every member's meta
		// is merged, and those named by an index removed.
		return []byte(`{"choices":{` + rep(n, ",", func(i int) string {
			return `"` + num(i) + `":{"message":{"content":"x"},"meta":{"k":` + num(i) + `}}`
		}) + `}}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/deep_reply", 2000, func(n int) []byte {
		return []byte(`{"choices":[{"message":{"content":"x","tool_calls":[{"function":{"name":"f"}}]}}],"extra":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/distinct_tool_names", 500, func(n int) []byte {
		return []byte(`{"choices":[{"message":{"tool_calls":[` + rep(n, ",", func(i int) string {
			return `{"id":"c","function":{"name":"tool_` + num(i) + `","arguments":"{}"}}`
		}) + `]}}]}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/escaped_tool_names", 500, func(n int) []byte {
		return []byte(`{"choices":[{"message":{"tool\u005fcalls":[` + rep(n, ",", func(i int) string {
			return `{"function":{"name":"t\u00e9` + num(i) + `"}}`
		}) + `]}}]}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/wide_meta", 250, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{` + rep(n, ",", func(i int) string { return `"key_` + num(i) + `":` + num(i) }) + `}}`)
	}, rewriteUnbounded},
	{"json/wide_meta_past_bound", 1000, func(n int) []byte {
		// Past max_meta_bytes at every size: most keys are dropped.
		return []byte(`{"choices":[],"meta":{` + rep(n, ",", func(i int) string { return `"key_` + num(i) + `":"` + strings.Repeat("v", 300) + `"` }) + `}}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/repeated_meta_key", 1000, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{` + rep(n, ",", func(i int) string { return `"same":"value ` + num(i) + `"` }) + `}}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{}) }},
	{"json/deep_meta", 1000, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{"deep":` + strings.Repeat(`{"a":[`, n) + "1" + strings.Repeat(`]}`, n) + `}}`)
	}, rewriteUnbounded},
	{"json/structured_list", 2000, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{"structured_result":{"type":"list","items":[` + rep(n, ",", num) + `]}}}`)
	}, rewriteUnbounded},
	{"json/structured_table", 500, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{"structured_result":{"type":"table","rows":[` +
			rep(n, ",", func(i int) string { return `[` + num(i) + `,true,null,{"a":1}]` }) + `],"headers":[1,2,3,4]}}}`)
	}, rewriteUnbounded},
	{"json/structured_key_value", 500, func(n int) []byte {
		return []byte(`{"choices":[],"meta":{"structured_result":{"entries":[` +
			rep(n, ",", func(i int) string { return `{"value":` + num(i) + `,"key":` + num(i) + `}` }) + `],"type":"key_value"}}}`)
	}, rewriteUnbounded},
	{"json/structured_reply_entities", 500, func(n int) []byte {
		content := `{"reply":"hi","intent":"question","entities":[` + rep(n, ",", func(i int) string {
			return `{"name":"e` + num(i) + `","type":"person"}`
		}) + `],"topics":[` + rep(n, ",", func(i int) string { return `"t` + num(i) + `"` }) + `]}`
		return []byte(`{"choices":[{"message":{"content":` + string(JSONString(content)) + `}}]}`)
	}, func(in []byte) { RewriteJSONReply(in, nil, JSONOptions{Structured: true}) }},
	{"json/reply_content_parts", 1000, func(n int) []byte {
		return []byte(`{"choices":[{"message":{"content":[` + rep(n, ",", func(i int) string { return `{"type":"text","text":"p` + num(i) + `"}` }) + `]}}]}`)
	}, func(in []byte) { replyContent(in) }},
	{"json/meta_object_merge", 1000, func(n int) []byte {
		return []byte(`{` + rep(n, ",", func(i int) string { return `"k` + num(i%700) + `":{"v":` + num(i) + `}` }) + `}`)
	}, func(in []byte) {
		var m Meta
		m.MergeJSON(in)
		m.JSON()
	}},

	// OpenAI-style event streams (SPEC 4.3).
	{"sse/meta_events_distinct_keys", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(`{"meta":{"key_` + num(i) + `":"` + strings.Repeat("v", 40) + `"}}`)
		}))
	}, feedSSE(sseOpts)},
	{"sse/meta_events_same_key", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string { return sseEvent(`{"meta":{"big":"` + strings.Repeat("v", 200) + `"}}`) }))
	}, feedSSE(sseOpts)},
	{"sse/meta_tools_used_array", 2000, func(n int) []byte {
		return []byte(sseEvent(`{"meta":{"tools_used":[` + rep(n, ",", func(i int) string { return `"tool_` + num(i) + `"` }) + `]}}`))
	}, feedSSE(sseOpts)},
	{"sse/many_choices_in_one_chunk", 500, func(n int) []byte {
		return []byte(sseEvent(chunkHead + rep(n, ",", func(i int) string {
			return `{"index":` + num(i) + `,"delta":{"tool_calls":[{"index":0,"function":{"name":"t` + num(i%300) + `"}}]}}`
		}) + `]}`))
	}, feedSSE(sseOpts)},
	{"sse/comment_lines", 2000, func(n int) []byte {
		return []byte(rep(n, "", func(int) string { return ": keep-alive\n\n" }) + "data: [DONE]\n\n")
	}, feedSSE(sseOpts)},
	{"sse/tool_names_across_deltas", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(chunkHead + `{"index":0,"delta":{"tool_calls":[{"index":` + num(i) + `,"function":{"name":"tool_` + num(i) + `","arguments":""}}]}}]}`)
		}))
	}, feedSSE(sseOpts)},
	{"sse/tool_call_fragments", 300, func(n int) []byte {
		return []byte(sseEvent(chunkHead+`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":""}}]}}]}`) +
			rep(n, "", func(i int) string {
				return sseEvent(chunkHead + `{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ab"}}]}}]}`)
			}))
	}, feedSSE(sseOpts)},
	{"sse/many_data_lines", 2000, func(n int) []byte {
		return []byte(rep(n, "\n", func(int) string { return "data: {}" }) + "\n\n")
	}, feedSSE(sseOpts)},
	{"sse/long_line", 2000, func(n int) []byte {
		return []byte(sseEvent(chunkHead + `{"index":0,"delta":{"content":"` + strings.Repeat("x", n) + `"}}]}`))
	}, feedSSE(sseOpts)},
	{"sse/cr_only_lines", 2000, func(n int) []byte {
		return []byte(rep(n, "", func(int) string { return ": c\r" }) + "data: {}\r\r")
	}, feedSSE(sseOpts)},
	{"sse/oversize_events", 100000, func(n int) []byte {
		return []byte(sseEvent(strings.Repeat("y", n)))
	}, feedSSE(StreamOptions{MaxEvent: 64, FinalMeta: true})},
	{"sse/byte_by_byte", 200, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(chunkHead + `{"index":0,"delta":{"content":"w"}}]}`)
		}))
	}, func(in []byte) {
		r := NewRewriter(io.Discard, sseOpts, nil)
		for i := range in {
			r.Write(in[i : i+1])
		}
		r.Close()
	}},
	{"sse/structured_deltas", 300, func(n int) []byte {
		return []byte(sseEvent(chunkHead+`{"index":0,"delta":{"content":"{\"reply\":\""}}]}`) +
			rep(n, "", func(i int) string { return sseEvent(chunkHead + `{"index":0,"delta":{"content":"word \\u00e9 "}}]}`) }) +
			sseEvent(chunkHead+`{"index":0,"delta":{"content":"\",\"intent\":\"question\"}"}}]}`) + "data: [DONE]\n\n")
	}, func(in []byte) {
		opts := sseOpts
		opts.Chat.Structured = NewReplyStream(1 << 30)
		feedSSE(opts)(in)
	}},

	// The two converted streams (SPEC 5).
	{"datastream/distinct_tools", 300, func(n int) []byte {
		return []byte(rep(n, "\n", func(i int) string { return `9:{"toolCallId":"c","toolName":"tool_` + num(i) + `","args":{}}` }) + "\n")
	}, func(in []byte) {
		c := NewDataStreamConverter(io.Discard, convOpts())
		c.Write(in)
		c.Close()
	}},
	{"datastream/data_parts", 300, func(n int) []byte {
		return []byte(rep(n, "\n", func(i int) string {
			return `2:[{"type":"reasoning","thinking":"t` + num(i) + `","categories":["a","b"]},{"x":` + num(i) + `}]`
		}) + "\n")
	}, func(in []byte) {
		c := NewDataStreamConverter(io.Discard, convOpts())
		c.Write(in)
		c.Close()
	}},
	{"datastream/long_line", 2000, func(n int) []byte {
		return []byte(`0:"` + strings.Repeat("z", n) + "\"\n")
	}, func(in []byte) {
		c := NewDataStreamConverter(io.Discard, convOpts())
		for len(in) > 0 { // as a proxy hands it on, in pieces
			k := min(len(in), 512)
			c.Write(in[:k])
			in = in[k:]
		}
		c.Close()
	}},
	{"datastream/one_part_many_elements", 2000, func(n int) []byte {
		return []byte(`8:[` + rep(n, ",", func(i int) string { return `{"e":` + num(i) + `}` }) + "]\n")
	}, func(in []byte) {
		c := NewDataStreamConverter(io.Discard, convOpts())
		c.Write(in)
		c.Close()
	}},
	{"uistream/distinct_tools", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(`{"type":"tool-input-start","toolCallId":"c","toolName":"tool_` + num(i) + `"}`)
		}))
	}, func(in []byte) {
		c := NewUIStreamConverter(io.Discard, convOpts())
		c.Write(in)
		c.Close()
	}},
	{"uistream/data_parts", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string {
			return sseEvent(`{"type":"data-x","data":[{"a":` + num(i) + `},{"type":"token_usage","tokensIn":1}]}`)
		}))
	}, func(in []byte) {
		c := NewUIStreamConverter(io.Discard, convOpts())
		c.Write(in)
		c.Close()
	}},

	// Run-once (SPEC 6.1).
	{"runonce/content_deltas", 300, func(n int) []byte {
		return []byte(rep(n, "", func(i int) string { return sseEvent(chunkHead + `{"index":0,"delta":{"content":"word "}}]}`) }))
	}, func(in []byte) {
		// The run-once path: the record collects the text.
		rep := &Reply{Asked: Asked{WantContent: true, MaxContent: 1 << 30}}
		c := NewRewriter(io.Discard, StreamOptions{MaxEvent: hostileMaxEvent, FinalMeta: true, Reply: rep}, nil)
		c.Write(in)
		c.Close()
	}},
	{"runonce/upstream_error_text", 100000, func(n int) []byte {
		return []byte(`{"error":{"message":"` + strings.Repeat("e", n) + `"}}`)
	}, func(in []byte) { UpstreamErrorMessage(in, "502 Bad Gateway") }},
}
