package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The upstream's replies: one abstract reply (a script: text, then tool
// calls, then usage) written in each protocol's exact wire format, so that
// every protocol carries the same content and the same work for the module.

// script is one reply, whatever its protocol.
type script struct {
	text    []string // text deltas (a JSON reply joins them)
	calls   []call   // tool calls, after the text
	in, out int      // usage: input and output tokens
}

// call is one tool call.
type call struct {
	n     int      // 1, 2, …: makes the ids
	name  string   // the tool
	args  string   // its arguments, a JSON object
	frags []string // args in the pieces a stream sends
}

var words = []string{" markets", " volume", " election", " the", " favourite", " week", " 62%", " up"}

// filler is n bytes of text (JSON-safe ASCII).
func filler(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[i%len(words)])
	}
	return b.String()[:n]
}

// newCall makes tool call n with arguments of about 8 bytes per fragment,
// split into frags pieces.
func newCall(n int, name string, frags int) call {
	frags = max(frags, 1)
	c := call{n: n, name: name, args: `{"query":"` + filler(max(0, frags*8-12)) + `"}`}
	size := (len(c.args) + frags - 1) / frags
	for p := 0; p < len(c.args); p += size {
		c.frags = append(c.frags, c.args[p:min(p+size, len(c.args))])
	}
	return c
}

// streamScript is a streamed reply of n content events: n text deltas, or
// with tools n/2 text deltas and two tool calls whose arguments arrive in
// the other n/2 events.
func streamScript(n int, tools bool) *script {
	s := &script{in: 80, out: n}
	nText := n
	if tools {
		nText = n / 2
		s.calls = []call{newCall(1, "get_weather", (n-nText)/2), newCall(2, "get_markets", (n-nText)/2)}
	}
	for i := 0; i < nText; i++ {
		s.text = append(s.text, words[i%len(words)])
	}
	return s
}

// sizedJSON is a JSON reply of about size bytes in the encoding enc: one
// text (padded to the size), with tools two calls after it.
func sizedJSON(enc func(*script) []byte, tools bool, size int) ([]byte, *script) {
	s := &script{in: 80, out: 120, text: []string{""}}
	if tools {
		s.calls = []call{newCall(1, "get_weather", 4), newCall(2, "get_markets", 4)}
	}
	s.text[0] = filler(max(0, size-len(enc(s))))
	return enc(s), s
}

func (s *script) fullText() string { return strings.Join(s.text, "") }

func (s *script) toolNames() []string {
	var names []string
	for _, c := range s.calls {
		names = append(names, c.name)
	}
	return names
}

// js is s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }

// sse is one SSE event, with an event: line when name is not empty.
func sse(name, data string) []byte {
	if name == "" {
		return []byte("data: " + data + "\n\n")
	}
	return []byte("event: " + name + "\ndata: " + data + "\n\n")
}

// ---------------------------------------------------------------------------
// OpenAI chat completions (protocols.md §1)

const chatHead = `{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":`

// chatStream: role chunk, content chunks, tool-call deltas (the first of
// each call with id, type and name), finish chunk, the usage chunk
// (choices: [], as with stream_options.include_usage) and [DONE].
func chatStream(s *script) [][]byte {
	chunk := func(delta, finish string) []byte {
		return sse("", chatHead+`[{"index":0,"delta":`+delta+`,"finish_reason":`+finish+`}]}`)
	}
	evs := [][]byte{chunk(`{"role":"assistant","content":""}`, "null")}
	for _, t := range s.text {
		evs = append(evs, chunk(`{"content":`+js(t)+`}`, "null"))
	}
	for i, c := range s.calls {
		evs = append(evs, chunk(`{"tool_calls":[{"index":`+itoa(i)+`,"id":"call_Qx`+itoa(c.n)+`","type":"function","function":{"name":`+js(c.name)+`,"arguments":""}}]}`, "null"))
		for _, f := range c.frags {
			evs = append(evs, chunk(`{"tool_calls":[{"index":`+itoa(i)+`,"function":{"arguments":`+js(f)+`}}]}`, "null"))
		}
	}
	finish := `"stop"`
	if len(s.calls) > 0 {
		finish = `"tool_calls"`
	}
	return append(evs, chunk(`{}`, finish),
		sse("", chatHead+`[],"usage":`+chatUsage(s)+`}`),
		[]byte("data: [DONE]\n\n"))
}

func chatUsage(s *script) string {
	return `{"prompt_tokens":` + itoa(s.in) + `,"completion_tokens":` + itoa(s.out) + `,"total_tokens":` + itoa(s.in+s.out) + `}`
}

// chatJSON: a chat.completion (protocols.md §1.12).
func chatJSON(s *script) []byte {
	msg := `{"role":"assistant","content":` + js(s.fullText())
	finish := "stop"
	if len(s.calls) > 0 {
		msg += `,"tool_calls":[`
		for i, c := range s.calls {
			if i > 0 {
				msg += ","
			}
			msg += `{"id":"call_Qx` + itoa(c.n) + `","type":"function","function":{"name":` + js(c.name) + `,"arguments":` + js(c.args) + `}}`
		}
		msg += "]"
		finish = "tool_calls"
	}
	msg += `,"refusal":null}`
	return []byte(`{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"message":` + msg + `,"logprobs":null,"finish_reason":"` + finish + `"}],` +
		`"usage":` + chatUsage(s) + `,"system_fingerprint":"fp_0ba0d124f1"}`)
}

// ---------------------------------------------------------------------------
// OpenAI Responses (protocols.md §2, SPEC 4.4)

const respID = "resp_67c9fdcecf488190bdd9a0409de3a1ec"
const respMsgID = "msg_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654"

func respUsage(s *script) string {
	return `{"input_tokens":` + itoa(s.in) + `,"input_tokens_details":{"cached_tokens":0},"output_tokens":` + itoa(s.out) +
		`,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":` + itoa(s.in+s.out) + `}`
}

// respObject is the response object: status, output items (JSON array
// text) and usage ("null" while in progress).
func respObject(status, output, usage string) string {
	return `{"id":"` + respID + `","object":"response","created_at":1718000000,"status":"` + status +
		`","error":null,"incomplete_details":null,"model":"gpt-4o-mini-2024-07-18","output":` + output +
		`,"parallel_tool_calls":true,"temperature":1,"tool_choice":"auto","top_p":1,"usage":` + usage + `}`
}

func respTextPart(text string) string {
	return `{"type":"output_text","annotations":[],"text":` + js(text) + `}`
}

func respMessage(status, text string) string {
	content := "[]"
	if status == "completed" {
		content = "[" + respTextPart(text) + "]"
	}
	return `{"id":"` + respMsgID + `","type":"message","status":"` + status + `","content":` + content + `,"role":"assistant"}`
}

func respCall(c call, status, args string) string {
	return `{"id":"fc_67c9fdd` + itoa(c.n) + `","type":"function_call","status":"` + status + `","arguments":` + js(args) +
		`,"call_id":"call_Qx` + itoa(c.n) + `","name":` + js(c.name) + `}`
}

// respOutput is the completed output items.
func respOutput(s *script) string {
	items := []string{respMessage("completed", s.fullText())}
	for _, c := range s.calls {
		items = append(items, respCall(c, "completed", c.args))
	}
	return "[" + strings.Join(items, ",") + "]"
}

// responsesStream: created, in_progress, the message item (added, part
// added, text deltas, text done, part done, item done), each function_call
// item (added, argument deltas, arguments done, item done), completed with
// the usage. Every event has its event: line and a sequence_number.
func responsesStream(s *script) [][]byte {
	var evs [][]byte
	seq := 0
	ev := func(typ, rest string) {
		evs = append(evs, sse(typ, `{"type":"`+typ+`","sequence_number":`+itoa(seq)+rest+`}`))
		seq++
	}
	text := s.fullText()
	ev("response.created", `,"response":`+respObject("in_progress", "[]", "null"))
	ev("response.in_progress", `,"response":`+respObject("in_progress", "[]", "null"))
	ev("response.output_item.added", `,"output_index":0,"item":`+respMessage("in_progress", ""))
	loc := `,"item_id":"` + respMsgID + `","output_index":0,"content_index":0`
	ev("response.content_part.added", loc+`,"part":`+respTextPart(""))
	for _, t := range s.text {
		ev("response.output_text.delta", loc+`,"delta":`+js(t)+`,"logprobs":[]`)
	}
	ev("response.output_text.done", loc+`,"text":`+js(text)+`,"logprobs":[]`)
	ev("response.content_part.done", loc+`,"part":`+respTextPart(text))
	ev("response.output_item.done", `,"output_index":0,"item":`+respMessage("completed", text))
	for i, c := range s.calls {
		idx := `,"output_index":` + itoa(i+1)
		ev("response.output_item.added", idx+`,"item":`+respCall(c, "in_progress", ""))
		for _, f := range c.frags {
			ev("response.function_call_arguments.delta", `,"item_id":"fc_67c9fdd`+itoa(c.n)+`"`+idx+`,"delta":`+js(f))
		}
		ev("response.function_call_arguments.done", `,"item_id":"fc_67c9fdd`+itoa(c.n)+`"`+idx+`,"arguments":`+js(c.args))
		ev("response.output_item.done", idx+`,"item":`+respCall(c, "completed", c.args))
	}
	ev("response.completed", `,"response":`+respObject("completed", respOutput(s), respUsage(s)))
	return evs
}

// responsesJSON: the completed response object.
func responsesJSON(s *script) []byte {
	return []byte(respObject("completed", respOutput(s), respUsage(s)))
}

// ---------------------------------------------------------------------------
// Anthropic Messages (protocols.md §3, SPEC 4.5)

const anthMsgHead = `{"id":"msg_019QvAsXfDhbWvM3UaTRWBm4","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":`

func anthToolUse(c call, input string) string {
	return `{"type":"tool_use","id":"toolu_01NRLabsLyVHZPKxbKvkfSM` + itoa(c.n) + `","name":` + js(c.name) + `,"input":` + input + `}`
}

func anthStop(s *script) string {
	if len(s.calls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// anthropicStream: message_start (usage), the text block (start, a ping,
// text deltas, stop), each tool_use block (start, input_json_delta
// fragments, stop), message_delta (stop reason, usage), message_stop.
func anthropicStream(s *script) [][]byte {
	var evs [][]byte
	ev := func(typ, rest string) {
		evs = append(evs, sse(typ, `{"type":"`+typ+`"`+rest+`}`))
	}
	ev("message_start", `,"message":`+anthMsgHead+`[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+itoa(s.in)+
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1,"service_tier":"standard"}}`)
	ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`)
	evs = append(evs, sse("ping", `{"type": "ping"}`))
	for _, t := range s.text {
		ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":`+js(t)+`}`)
	}
	ev("content_block_stop", `,"index":0`)
	for i, c := range s.calls {
		idx := `,"index":` + itoa(i+1)
		ev("content_block_start", idx+`,"content_block":`+anthToolUse(c, "{}"))
		for _, f := range c.frags {
			ev("content_block_delta", idx+`,"delta":{"type":"input_json_delta","partial_json":`+js(f)+`}`)
		}
		ev("content_block_stop", idx)
	}
	ev("message_delta", `,"delta":{"stop_reason":"`+anthStop(s)+`","stop_sequence":null},"usage":{"output_tokens":`+itoa(s.out)+`}`)
	ev("message_stop", "")
	return evs
}

// anthropicJSON: a message.
func anthropicJSON(s *script) []byte {
	blocks := []string{`{"type":"text","text":` + js(s.fullText()) + `}`}
	for _, c := range s.calls {
		blocks = append(blocks, anthToolUse(c, c.args))
	}
	return []byte(anthMsgHead + "[" + strings.Join(blocks, ",") + `],"stop_reason":"` + anthStop(s) +
		`","stop_sequence":null,"usage":{"input_tokens":` + itoa(s.in) +
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":` + itoa(s.out) + `}}`)
}

// ---------------------------------------------------------------------------
// Vercel AI SDK streams (protocols.md §5, SPEC 5.1 and 5.2)

func aiFinish(s *script) string {
	if len(s.calls) > 0 {
		return "tool-calls"
	}
	return "stop"
}

// dataStream: one part a line: start step, text parts, each call as
// streaming start, argument deltas and the whole call, finish step, finish
// message with usage (as AI SDK 4's toDataStream writes them).
func dataStream(s *script) [][]byte {
	parts := [][]byte{[]byte(`f:{"messageId":"msg-xZkgBuDjmIEtRWqu0wB6kNFw"}` + "\n")}
	line := func(code, v string) { parts = append(parts, []byte(code+":"+v+"\n")) }
	for _, t := range s.text {
		line("0", js(t))
	}
	for _, c := range s.calls {
		id := js("call-" + itoa(c.n))
		line("b", `{"toolCallId":`+id+`,"toolName":`+js(c.name)+`}`)
		for _, f := range c.frags {
			line("c", `{"toolCallId":`+id+`,"argsTextDelta":`+js(f)+`}`)
		}
		line("9", `{"toolCallId":`+id+`,"toolName":`+js(c.name)+`,"args":`+c.args+`}`)
	}
	usage := `"usage":{"promptTokens":` + itoa(s.in) + `,"completionTokens":` + itoa(s.out) + `}`
	line("e", `{"finishReason":"`+aiFinish(s)+`",`+usage+`,"isContinued":false}`)
	line("d", `{"finishReason":"`+aiFinish(s)+`",`+usage+`}`)
	return parts
}

// uiStream: an AI SDK 5 UI message stream: start, start-step, the text
// (start, deltas, end), each call (input start, input deltas, input
// available), finish-step, finish with the usage in messageMetadata, [DONE].
func uiStream(s *script) [][]byte {
	var evs [][]byte
	ev := func(typ, rest string) { evs = append(evs, sse("", `{"type":"`+typ+`"`+rest+`}`)) }
	ev("start", `,"messageId":"msg-xZkgBuDjmIEtRWqu0wB6kNFw"`)
	ev("start-step", "")
	ev("text-start", `,"id":"txt-0"`)
	for _, t := range s.text {
		ev("text-delta", `,"id":"txt-0","delta":`+js(t))
	}
	ev("text-end", `,"id":"txt-0"`)
	for _, c := range s.calls {
		id := `,"toolCallId":` + js("call-"+itoa(c.n))
		ev("tool-input-start", id+`,"toolName":`+js(c.name))
		for _, f := range c.frags {
			ev("tool-input-delta", id+`,"inputTextDelta":`+js(f))
		}
		ev("tool-input-available", id+`,"toolName":`+js(c.name)+`,"input":`+c.args)
	}
	ev("finish-step", "")
	ev("finish", `,"finishReason":"`+aiFinish(s)+`","messageMetadata":{"usage":{"inputTokens":`+itoa(s.in)+
		`,"outputTokens":`+itoa(s.out)+`,"totalTokens":`+itoa(s.in+s.out)+`}}`)
	return append(evs, []byte("data: [DONE]\n\n"))
}
