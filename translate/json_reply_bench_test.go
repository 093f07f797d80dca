package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// The JSON replies of every protocol as the module forwards them (issue 21:
// ≤ 2 µs added per 2 KB reply), each exactly 2,048 bytes, in the shapes the
// upstreams send (the recordings of translate/testdata and the conformance
// cases): a chat completion with usage only, and with tool_calls; a
// Responses object without and with a function_call item; an Anthropic
// message without and with tool_use blocks. Every one gains meta.usage.

// benchProse is n bytes of reply text as a JSON string's inside: sentences,
// an escaped quote and paragraph breaks, as model output has them.
func benchProse(n int) string {
	const para = `Caddy is a web server written in Go; it obtains and renews TLS certificates on its own. ` +
		`The reverse proxy passes each request to an upstream and streams its reply back as it comes. ` +
		`A handler in front of it can read the reply, add a \"meta\" object and write it out again.\n\n`
	s := strings.Repeat(para, n/len(para)+1)[:n]
	for strings.HasSuffix(s, `\`) { // never cut an escape in two
		s = s[:len(s)-1] + " "
	}
	return s
}

// benchSized fills head + text + tail to exactly 2,048 bytes.
func benchSized(head, tail string) []byte {
	return []byte(head + benchProse(2048-len(head)-len(tail)) + tail)
}

var benchJSONReplies = []struct {
	name string
	body []byte
	want string // what the meta must say
}{
	{"chat", benchSized(
		`{"id":"chatcmpl-BcYk1T3ZxQp9LmN4aR7sVw2","object":"chat.completion","created":1748000000,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"`,
		`","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":48,"completion_tokens":380,"total_tokens":428,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_34a54ae93c"}`),
		`{"usage":{"input_tokens":48,"output_tokens":380,"total_tokens":428,"cached_input_tokens":0,"reasoning_tokens":0}}`},
	{"chat_tools", benchSized(
		`{"id":"chatcmpl-BcYk1T3ZxQp9LmN4aR7sVw2","object":"chat.completion","created":1748000000,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":"`,
		`","tool_calls":[{"id":"call_Qx1a9bT2","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris, France\",\"unit\":\"celsius\"}"}},{"id":"call_Qx2c7dU4","type":"function","function":{"name":"get_markets","arguments":"{\"limit\":5,\"sort\":\"volume\",\"category\":\"politics\"}"}},{"id":"call_Qx3e5fV6","type":"function","function":{"name":"send_message","arguments":"{\"to\":\"team\",\"text\":\"Weather and markets attached.\"}"}}],"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":212,"completion_tokens":96,"total_tokens":308,"prompt_tokens_details":{"cached_tokens":128,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_34a54ae93c"}`),
		`{"tools_used":["get_weather","get_markets","send_message"],"usage":{"input_tokens":212,"output_tokens":96,"total_tokens":308,"cached_input_tokens":128,"reasoning_tokens":0}}`},
	{"responses", benchSized(
		`{"id":"resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424","object":"response","created_at":1763474589,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5-nano-2025-08-07","output":[{"id":"rs_05500b38c2cd9bfc00691c7c9e","type":"reasoning","summary":[]},{"id":"msg_05500b38c2cd9bfc00691c7ca1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"`,
		`"}],"role":"assistant"}],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{"effort":"medium","summary":null},"safety_identifier":null,"service_tier":"default","store":true,"temperature":1,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[],"top_logprobs":0,"top_p":1,"truncation":"disabled","usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":420,"output_tokens_details":{"reasoning_tokens":128},"total_tokens":456},"user":null,"metadata":{}}`),
		`{"usage":{"input_tokens":36,"output_tokens":420,"total_tokens":456,"cached_input_tokens":0,"reasoning_tokens":128}}`},
	{"responses_tools", benchSized(
		`{"id":"resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424","object":"response","created_at":1763474589,"status":"completed","background":false,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,"max_tool_calls":null,"model":"gpt-5-nano-2025-08-07","output":[{"id":"rs_05500b38c2cd9bfc00691c7c9e","type":"reasoning","summary":[]},{"type":"web_search_call","id":"ws_05500b38c2cd9bfc00691c7c9f","status":"completed","action":{"type":"search","query":"Paris weather"}},{"id":"msg_05500b38c2cd9bfc00691c7ca1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"`,
		`"}],"role":"assistant"},{"id":"fc_05500b38c2cd9bfc00691c7ca2","type":"function_call","status":"completed","arguments":"{\"location\":\"Paris, France\",\"unit\":\"celsius\"}","call_id":"call_Qx1a9bT2","name":"get_weather"}],"parallel_tool_calls":true,"previous_response_id":null,"prompt_cache_key":null,"reasoning":{"effort":"medium","summary":null},"safety_identifier":null,"service_tier":"default","store":true,"temperature":1,"text":{"format":{"type":"text"},"verbosity":"medium"},"tool_choice":"auto","tools":[{"type":"function","name":"get_weather","description":"Current weather for a place","parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","unit"],"additionalProperties":false},"strict":true},{"type":"web_search"}],"top_logprobs":0,"top_p":1,"truncation":"disabled","usage":{"input_tokens":320,"input_tokens_details":{"cached_tokens":256},"output_tokens":140,"output_tokens_details":{"reasoning_tokens":64},"total_tokens":460},"user":null,"metadata":{}}`),
		`{"tools_used":["web_search","get_weather"],"usage":{"input_tokens":320,"output_tokens":140,"total_tokens":460,"cached_input_tokens":256,"reasoning_tokens":64}}`},
	{"anthropic", benchSized(
		`{"id":"msg_019Q1hrJbZG26Fb9BQhrkHEr","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"`,
		`"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":377,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":412,"service_tier":"standard"}}`),
		`{"usage":{"input_tokens":377,"output_tokens":412,"total_tokens":789,"cached_input_tokens":0}}`},
	{"anthropic_tools", benchSized(
		`{"id":"msg_019Q1hrJbZG26Fb9BQhrkHEr","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"`,
		`"},{"type":"server_tool_use","id":"srvtoolu_01Wq8cZk","name":"web_search","input":{"query":"Paris weather"}},{"type":"web_search_tool_result","tool_use_id":"srvtoolu_01Wq8cZk","content":[]},{"type":"tool_use","id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","name":"get_weather","caller":{"type":"direct"},"input":{"location":"Paris, France","unit":"celsius"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":50,"cache_creation_input_tokens":20,"cache_read_input_tokens":300,"output_tokens":65,"service_tier":"standard"}}`),
		`{"tools_used":["web_search","get_weather"],"usage":{"input_tokens":370,"output_tokens":65,"total_tokens":435,"cached_input_tokens":300}}`},
}

// TestBenchJSONReplies checks the benchmarks' replies: valid, 2 KB, and
// rewritten with the meta each is expected to gain, at the end.
func TestBenchJSONReplies(t *testing.T) {
	for _, c := range benchJSONReplies {
		if len(c.body) != 2048 || !jsonscan.Valid(strView(c.body)) {
			t.Fatalf("%s: %d bytes, valid %v", c.name, len(c.body), jsonscan.Valid(strView(c.body)))
		}
		out, meta, ok := RewriteJSONReply(c.body, new(Meta), JSONOptions{})
		want := append(c.body[:len(c.body)-1:len(c.body)-1], `,"meta":`+c.want+`}`...)
		if !ok || !bytes.Equal(out, want) || string(meta.JSON()) != c.want {
			t.Errorf("%s: ok %v, meta %s\n got %s\nwant %s", c.name, ok, meta.JSON(), out, want)
		}
	}
}

// TestJSONReplyNoAllocs: a forwarded JSON reply of each protocol, read
// and rewritten into a kept buffer, allocates nothing (the index stays on
// the stack: nothing hands it to a protocol's function value).
func TestJSONReplyNoAllocs(t *testing.T) {
	for _, c := range benchJSONReplies {
		var rep Reply
		extra := new(Meta)
		buf := make([]byte, 0, len(c.body)+256)
		n := testing.AllocsPerRun(50, func() {
			rep = Reply{}
			rep.Meta.Limit(DefaultMaxMetaBytes, nil)
			RewriteJSONReply(c.body, extra, JSONOptions{Buf: buf, Reply: &rep})
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per reply, want 0", c.name, n)
		}
	}
}

// BenchmarkJSONReply2K is RewriteJSONReply as the module calls it for a
// forwarded reply: a fresh record, the request's (empty) meta, a scratch
// buffer it reuses.
func BenchmarkJSONReply2K(b *testing.B) {
	for _, c := range benchJSONReplies {
		b.Run(c.name, func(b *testing.B) {
			var rep Reply
			extra := new(Meta)
			buf := make([]byte, 0, len(c.body)+256)
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rep = Reply{}
				rep.Meta.Limit(DefaultMaxMetaBytes, nil)
				out, _, ok := RewriteJSONReply(c.body, extra, JSONOptions{Buf: buf, Reply: &rep})
				if !ok || len(out) <= len(c.body) {
					b.Fatal("not rewritten")
				}
			}
		})
	}
}

// BenchmarkJSONReplyParts2K is the same call made as pieces
// (JSONReplyParts, kept from reply to reply as the module would keep it in
// its per-request state): no copy of the reply, its length known.
func BenchmarkJSONReplyParts2K(b *testing.B) {
	for _, c := range benchJSONReplies {
		b.Run(c.name, func(b *testing.B) {
			var rep Reply
			var parts JSONReplyParts
			extra := new(Meta)
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				rep = Reply{}
				rep.Meta.Limit(DefaultMaxMetaBytes, nil)
				if _, ok := parts.Rewrite(c.body, extra, JSONOptions{Reply: &rep}); !ok || parts.Len() <= len(c.body) {
					b.Fatal("not rewritten")
				}
			}
		})
	}
}
