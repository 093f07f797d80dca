package translate

import (
	"encoding/json"
	"testing"
)

// JSON replies of the Responses API and of Anthropic Messages (SPEC 4.4,
// 4.5): the meta becomes the top-level "meta"; nothing to change, the body
// as it came. And the run-once reading of every JSON reply (SPEC 6.1, 6.4).

func TestJSONTopLevelMeta(t *testing.T) {
	cases := []struct {
		name, body, want, meta string
		extra                  *Meta
	}{
		{
			name: "responses: tools and usage added at the end",
			body: `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1-mini","output":[{"type":"reasoning","id":"rs","summary":[]},{"type":"web_search_call","id":"ws","status":"completed"},{"type":"function_call","id":"fc","call_id":"c","name":"get_weather","arguments":"{}"},{"type":"message","id":"m","content":[{"type":"output_text","text":"Hi"}]},{"type":"mcp_call","name":"lookup"},{"type":"custom_tool_call","name":"grammar"}],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":34}}`,
			want: `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1-mini","output":[{"type":"reasoning","id":"rs","summary":[]},{"type":"web_search_call","id":"ws","status":"completed"},{"type":"function_call","id":"fc","call_id":"c","name":"get_weather","arguments":"{}"},{"type":"message","id":"m","content":[{"type":"output_text","text":"Hi"}]},{"type":"mcp_call","name":"lookup"},{"type":"custom_tool_call","name":"grammar"}],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":34},"meta":` + metaMark + `}`,
			meta: `{"tools_used":["web_search","get_weather","lookup","grammar"],"usage":{"input_tokens":30,"output_tokens":4,"total_tokens":34,"cached_input_tokens":0,"reasoning_tokens":2}}`,
		},
		{
			name: "responses: its meta merged and replaced where it lies",
			body: `{"id":"resp_1","object":"response","meta":{"trace":"t-1","tools_used":["up"]},"output":[{"type":"function_call","name":"f"}]}`,
			want: `{"id":"resp_1","object":"response","meta":` + metaMark + `,"output":[{"type":"function_call","name":"f"}]}`,
			meta: `{"trace":"t-1","tools_used":["up","f"]}`,
		},
		{
			name: "responses: what the module derived merged after",
			body: `{"object":"response","meta":{"prompt_trimmed_to":900,"x":1},"output":[]}`,
			want: `{"object":"response","meta":` + metaMark + `,"output":[]}`,
			meta: `{"prompt_trimmed_to":500,"x":1}`, extra: trimmedMeta(500),
		},
		{
			name: "anthropic: tools and usage added",
			body: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"t","name":"get_weather","input":{}},{"type":"server_tool_use","id":"s","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"s","content":[]},{"type":"mcp_tool_use","id":"m","name":"mcp_lookup","input":{}},{"type":"thinking","thinking":"x"}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_creation_input_tokens":1,"cache_read_input_tokens":5,"output_tokens":3}}`,
			want: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"t","name":"get_weather","input":{}},{"type":"server_tool_use","id":"s","name":"web_search","input":{}},{"type":"web_search_tool_result","tool_use_id":"s","content":[]},{"type":"mcp_tool_use","id":"m","name":"mcp_lookup","input":{}},{"type":"thinking","thinking":"x"}],"stop_reason":"tool_use","usage":{"input_tokens":10,"cache_creation_input_tokens":1,"cache_read_input_tokens":5,"output_tokens":3},"meta":` + metaMark + `}`,
			meta: `{"tools_used":["get_weather","web_search","mcp_lookup"],"usage":{"input_tokens":16,"output_tokens":3,"total_tokens":19,"cached_input_tokens":5}}`,
		},
		{
			name: "anthropic: its meta merged and replaced, usage cost",
			body: "{\"type\":\"message\",\"meta\": {\"a\":1} ,\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"cost\":0.5}}",
			want: "{\"type\":\"message\",\"meta\": " + metaMark + " ,\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"cost\":0.5}}",
			meta: `{"a":1,"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3},"cost_usd":0.5}`,
		},
	}
	for _, c := range cases {
		body := []byte(c.body)
		out, meta, ok := RewriteJSONReply(body, c.extra, JSONOptions{})
		if !ok {
			t.Fatalf("%s: not rewritten", c.name)
		}
		checkSpliced(t, c.name, string(out), c.want, c.meta)
		if !sameJSON(t, string(meta.JSON()), c.meta) {
			t.Fatalf("%s: returned meta %s", c.name, meta.JSON())
		}
		if string(body) != c.body {
			t.Fatalf("%s: the input was written to", c.name)
		}
	}
}

func trimmedMeta(n int64) *Meta {
	var m Meta
	m.SetTrimmed(n)
	return &m
}

// Nothing to change: the body itself comes back.
func TestJSONTopLevelMetaNothingToChange(t *testing.T) {
	for _, body := range []string{
		`{"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"m","content":[{"type":"output_text","text":"Hi"}]},{"type":"reasoning","summary":[]}],"error":null}`,
		`{"id":"resp_1","object":"response","output":[],"meta":{}}`,
		`{"id":"resp_1","object":"response","output":[{"type":"function_call","name":"f"}],"meta":{"tools_used":["f"]}}`,
		`{"object":"response","meta":{"trace":"x"},"output":[]}`,
		"  {\"object\":\"response\",\n \"output\":[]}\n",
		`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn"}`,
		`{"type":"message","content":[{"type":"tool_use","name":"t","input":{}}],"meta":{"tools_used":["t"],"k":[1,2]}}`,
		`{"type":"message","content":[{"type":"text","text":"a \"tool_use\" and a web_search_call"}]}`,
	} {
		in := []byte(body)
		out, _, ok := RewriteJSONReply(in, nil, JSONOptions{})
		if !ok || !sameSlice(out, in) {
			t.Fatalf("%s: got %s, ok %v; want the body itself", body, out, ok)
		}
	}
}

// A reply whose meta is not an object loses it when nothing else is to be
// said, as a chat completion does (json_reply_test); with meta to say, it
// is replaced.
func TestJSONTopLevelMetaNotAnObject(t *testing.T) {
	out, _, _ := RewriteJSONReply([]byte(`{"type":"message","meta":"x","content":[{"type":"tool_use","name":"t"}]}`), nil, JSONOptions{})
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if m, _ := json.Marshal(v["meta"]); string(m) != `{"tools_used":["t"]}` {
		t.Fatalf("meta %s", m)
	}
}

// The run-once reading of a JSON reply: its text, or the message of a
// reply that carries only an error (SPEC 6.1, 6.4).
func TestJSONReplyText(t *testing.T) {
	cases := []struct {
		name, body, content, errMsg string
	}{
		{"chat content", `{"choices":[{"message":{"role":"assistant","content":"Hi"}}]}`, "Hi", ""},
		{"chat content beats an error", `{"choices":[{"message":{"content":"Hi"}}],"error":{"message":"ignored"}}`, "Hi", ""},
		{"chat empty content is content", `{"choices":[{"message":{"content":""}}],"error":"ignored"}`, "", ""},
		{"chat error object", `{"error":{"message":"Rate limited","type":"rate_limit"}}`, "", "Rate limited"},
		{"chat error string", `{"error":"Upstream said no"}`, "", "Upstream said no"},
		{"chat error without message", `{"error":{"code":500}}`, NoResponse, ""},
		{"chat nothing", `{"id":"x","choices":[]}`, NoResponse, ""},
		{"chat top-level output", `{"output":"plain"}`, "plain", ""},
		{"anthropic error body", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`, "", "Overloaded"},

		{"responses items joined", `{"object":"response","output":[` +
			`{"type":"message","content":[{"type":"output_text","text":"Hello"},{"type":"refusal","refusal":"no"},{"type":"output_text","text":" world"}]},` +
			`{"type":"function_call","name":"f","arguments":"{\"text\":\"x\"}"},` +
			`{"type":"reasoning","summary":[{"type":"summary_text","text":"thought"}]},` +
			`{"type":"message","content":[{"type":"output_text","text":"Second"}]}],"error":null}`, "Hello world\nSecond", ""},
		{"responses text beats an error", `{"object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}],"error":{"message":"x"}}`, "Hi", ""},
		{"responses failed", `{"object":"response","status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}`, "", "The model failed."},
		{"responses no text", `{"object":"response","status":"completed","output":[{"type":"function_call","name":"f"}],"error":null}`, NoResponse, ""},
		{"responses top-level text is not its text", `{"object":"response","output":[],"text":{"format":{"type":"text"}}}`, NoResponse, ""},

		{"anthropic blocks joined", `{"type":"message","content":[{"type":"text","text":"Hello"},{"type":"tool_use","name":"t","input":{"text":"no"}},{"type":"thinking","thinking":"hmm"},{"type":"text","text":"Bye"}]}`, "Hello\nBye", ""},
		{"anthropic no text", `{"type":"message","content":[{"type":"tool_use","name":"t","input":{}}]}`, NoResponse, ""},
		{"anthropic error", `{"type":"message","content":[],"error":{"message":"Stopped"}}`, "", "Stopped"},
	}
	for _, c := range cases {
		rep := &Reply{Asked: Asked{WantContent: true}}
		out, _, ok := RewriteJSONReply([]byte(c.body), nil, JSONOptions{Reply: rep})
		if !ok {
			t.Fatalf("%s: not read", c.name)
		}
		content, errMsg, isErr := JSONReplyText(out, rep)
		if content != c.content || errMsg != c.errMsg || isErr != (c.errMsg != "") {
			t.Fatalf("%s: content %q, error %q %v; want %q, %q", c.name, content, errMsg, isErr, c.content, c.errMsg)
		}
	}
}

// A JSON protocol whose is would read more top-level members than jsonTop
// holds is refused at registration, not by an index out of range at its
// first reply. Its paths are top-level keys other protocols registered
// already, so the tree does not change.
func TestRegisterJSONRefusesTooManyTops(t *testing.T) {
	j := &jsonProtocol{paths: []string{"choices", "candidates", "promptFeedback", "object"}}
	defer func() {
		if recover() == nil {
			t.Fatalf("%d top-level paths registered; jsonTop holds %d", len(j.tops), len(jsonTop{}.v))
		}
	}()
	registerJSON(j)
}
