package translate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func TestRewriteJSONReplyNotAnObject(t *testing.T) {
	for _, in := range []string{
		``,
		`{"choices":[`,
		`{"a":1}}`,
		`not json`,
		`[{"choices":[{"meta":{"a":1}}]}]`,
		`"a string"`,
		`42`,
		`null`,
		`{"a":1} {"b":2}`,
	} {
		body := []byte(in)
		out, meta, ok := RewriteJSONReply(body, metaFrom(t, `{"tools_used":["x"]}`), JSONOptions{})
		if ok {
			t.Errorf("%q: ok = true", in)
		}
		if !sameSlice(out, body) {
			t.Errorf("%q: out is not the body itself: %q", in, out)
		}
		if meta != nil {
			t.Errorf("%q: meta = %s", in, meta.JSON())
		}
	}
}

func TestRewriteJSONReplyNothingToChange(t *testing.T) {
	contract, err := os.ReadFile(filepath.Join("testdata", "json_contract_untouched.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"contract reply with complete meta (conformance json-contract-untouched)": string(contract),
		"plain chat completion":                   `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}]}`,
		"pretty printed":                          "{\n  \"choices\": [\n    {\"message\": {\"content\": \"hi\"}}\n  ]\n}\n",
		"empty object":                            `{}`,
		"empty top meta":                          `{"content":"x","meta":{}}`,
		"meta equal in another order and spacing": `{"choices":[{"message":{"content":"a","tool_calls":[{"function":{"name":"b"}}]}}],"meta":{ "x" : 1.0, "tools_used" : [ "b" ] }}`,
		"tool names already in meta":              `{"choices":[{"message":{"tool_calls":[{"function":{"name":"launcher"}},{"function":{"name":"file_search"}}]}}],"meta":{"tools_used":["launcher","file_search"]}}`,
		"structured_result already strings":       `{"meta":{"structured_result":{"type":"list","items":["1","2"]}}}`,
		"choices not objects":                     `{"choices":[1,"x",null]}`,
		"empty tool name only":                    `{"choices":[{"message":{"tool_calls":[{"function":{"name":""}}],"function_call":{"name":""}}}]}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			body := []byte(in)
			out, _, ok := RewriteJSONReply(body, nil, JSONOptions{})
			if !ok {
				t.Fatal("ok = false")
			}
			if !sameSlice(out, body) {
				t.Fatalf("body changed:\n in  %s\n out %s", body, out)
			}
			if string(body) != in {
				t.Fatal("input modified")
			}
			// An empty extra meta changes nothing either.
			out, _, _ = RewriteJSONReply(body, new(Meta), JSONOptions{})
			if !sameSlice(out, body) {
				t.Fatalf("empty extra meta changed the body: %s", out)
			}
		})
	}
}

func TestRewriteJSONReplyChoiceMetaMoved(t *testing.T) {
	body := []byte(`{"id":"x","choices":[` +
		`{"index":0,"message":{"content":"a"},"meta":{"a":1,"tools_used":["t0"],"prompt_trimmed_to":900}},` +
		`{"index":1,"message":{"content":"b"}},` +
		`{"index":2,"message":{"content":"c"},"meta":{"a":2,"b":"two","tools_used":["t2","t0"],"prompt_trimmed_to":950}}` +
		`],"meta":{"b":"top","tools_used":["top"],"prompt_trimmed_to":1000}}`)
	orig := string(body)
	out, meta, ok := RewriteJSONReply(body, nil, JSONOptions{})
	if !ok {
		t.Fatal("not ok")
	}
	if string(body) != orig {
		t.Fatal("input modified")
	}
	want := `{"id":"x","choices":[` +
		`{"index":0,"message":{"content":"a"}},` +
		`{"index":1,"message":{"content":"b"}},` +
		`{"index":2,"message":{"content":"c"}}` +
		`],"meta":{"a":2,"tools_used":["t0","t2","top"],"prompt_trimmed_to":900,"b":"top"}}`
	if !json.Valid(out) || !jsonscan.Equal(out, []byte(want)) {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	// Choice metas merged i ascending, then the top level: key order too.
	if got := gjson.GetBytes(out, "meta").Raw; got != `{"a":2,"tools_used":["t0","t2","top"],"prompt_trimmed_to":900,"b":"top"}` {
		t.Fatalf("meta %s", got)
	}
	if string(meta.JSON()) != gjson.GetBytes(out, "meta").Raw {
		t.Fatalf("returned meta %s differs from the body's", meta.JSON())
	}
	for i := 0; i < 3; i++ {
		if gjson.GetBytes(out, "choices."+itoa(int64(i))+".meta").Exists() {
			t.Fatalf("choices[%d].meta not removed", i)
		}
	}
}

func TestRewriteJSONReplyToolNames(t *testing.T) {
	cases := []struct {
		name, body string
		tools      []string
	}{
		{"tool_calls in order, each once",
			`{"choices":[{"message":{"tool_calls":[{"function":{"name":"launcher"}},{"function":{"name":"file_search"}},{"function":{"name":"launcher"}}]}}]}`,
			[]string{"launcher", "file_search"}},
		{"legacy function_call",
			`{"choices":[{"message":{"content":null,"function_call":{"name":"get_weather","arguments":"{}"}}}]}`,
			[]string{"get_weather"}},
		{"every choice, tool_calls before function_call",
			`{"choices":[{"message":{"function_call":{"name":"f0"},"tool_calls":[{"function":{"name":"a"}}]}},{"message":{"tool_calls":[{"function":{"name":"b"}},{"function":{"name":"a"}}]}}]}`,
			[]string{"a", "f0", "b"}},
		{"after choice and top meta",
			`{"choices":[{"message":{"tool_calls":[{"function":{"name":"x"}}]},"meta":{"tools_used":["c"]}}],"meta":{"tools_used":["t","x"]}}`,
			[]string{"c", "t", "x"}},
		{"non-string and empty names ignored",
			`{"choices":[{"message":{"tool_calls":[{"function":{"name":1}},{"function":{}},{"function":{"name":""}},{"function":{"name":"ok"}}],"function_call":{"name":null}}}]}`,
			[]string{"ok"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, meta, ok := RewriteJSONReply([]byte(c.body), nil, JSONOptions{})
			if !ok || !json.Valid(out) {
				t.Fatalf("ok=%v out=%s", ok, out)
			}
			var got []string
			gjson.GetBytes(out, "meta.tools_used").ForEach(func(_, v gjson.Result) bool {
				got = append(got, v.Str)
				return true
			})
			if !equalStrings(got, c.tools) || !equalStrings(meta.Tools(), c.tools) {
				t.Fatalf("tools_used = %q (meta %q), want %q\n%s", got, meta.Tools(), c.tools, out)
			}
			// The rest of the body is unchanged.
			if !jsonscan.Equal(deleteKey(t, out, "meta"), deleteChoiceMeta(t, []byte(c.body))) {
				t.Fatalf("other content changed: %s", out)
			}
		})
	}
}

func TestRewriteJSONReplyMetaOnlyWhenNonEmpty(t *testing.T) {
	cases := []struct{ in, want string }{
		// choices[i].meta goes even when it holds nothing; no top meta is added.
		{`{"choices":[{"message":{"content":"a"},"meta":{}}]}`, `{"choices":[{"message":{"content":"a"}}]}`},
		{`{"choices":[{"meta":{"tools_used":[""]}},{"meta":{}}]}`, `{"choices":[{},{}]}`},
		// A top-level meta whose merged result is empty is not kept (SPEC 4.2).
		{`{"content":"x","meta":{"tools_used":[]}}`, `{"content":"x"}`},
		// Something derived: meta is set.
		{`{"choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`, `{"choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}],"meta":{"tools_used":["t"]}}`},
	}
	for _, c := range cases {
		out, _, ok := RewriteJSONReply([]byte(c.in), nil, JSONOptions{})
		if !ok || !json.Valid(out) || !jsonscan.Equal(out, []byte(c.want)) {
			t.Errorf("%s:\n got  %s\n want %s", c.in, out, c.want)
		}
	}
}

func TestRewriteJSONReplyExtraMeta(t *testing.T) {
	extra := new(Meta)
	extra.SetTrimmed(800)
	body := []byte(`{"content":"x","meta":{"prompt_trimmed_to":1200,"backendUsed":"b"}}`)
	out, meta, ok := RewriteJSONReply(body, extra, JSONOptions{})
	if !ok {
		t.Fatal("not ok")
	}
	if want := `{"content":"x","meta":{"prompt_trimmed_to":800,"backendUsed":"b"}}`; string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	if n, _ := trimmedOf(meta); n != 800 {
		t.Fatalf("meta trimmed %d", n)
	}
	// extra is not modified.
	if string(extra.JSON()) != `{"prompt_trimmed_to":800}` {
		t.Fatalf("extra modified: %s", extra.JSON())
	}

	// No meta in the reply: the extra meta is added.
	body = []byte(`{"choices":[{"message":{"content":"hi"}}]}`)
	out, _, _ = RewriteJSONReply(body, extra, JSONOptions{})
	if want := `{"choices":[{"message":{"content":"hi"}}],"meta":{"prompt_trimmed_to":800}}`; string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestRewriteJSONReplyStructuredResultStringified(t *testing.T) {
	body := []byte(`{"content":"Status:","meta":{"structured_result":{"type":"key_value","entries":[{"key":"Uptime","value":3600},{"key":"Healthy","value":true},{"key":"Ports","value":[80,443]},{"key":"Owner","value":null}]}}}`)
	out, _, ok := RewriteJSONReply(body, nil, JSONOptions{})
	want := `{"content":"Status:","meta":{"structured_result":{"type":"key_value","entries":[{"key":"Uptime","value":"3600"},{"key":"Healthy","value":"true"},{"key":"Ports","value":"[80,443]"},{"key":"Owner","value":""}]}}}`
	if !ok || string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

// A meta that is not an object has no keys to merge: it must not turn into
// a key "" (gjson's ForEach hands a scalar over as one value with no key).
func TestRewriteJSONReplyMetaNotAnObject(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":1,"meta":"hello","choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`,
			`{"a":1,"meta":{"tools_used":["t"]},"choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`},
		{`{"a":1,"meta":null,"choices":[{"meta":[1,2],"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`,
			`{"a":1,"meta":{"tools_used":["t"]},"choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`},
		{`{"choices":[{"meta":7}],"meta":{"k":1}}`, `{"choices":[{}],"meta":{"k":1}}`},
	}
	for _, c := range cases {
		out, meta, ok := RewriteJSONReply([]byte(c.in), nil, JSONOptions{})
		if !ok || !json.Valid(out) || !jsonscan.Equal(out, []byte(c.want)) {
			t.Errorf("%s:\n got  %s\n want %s", c.in, out, c.want)
		}
		if meta != nil && meta.Has("") {
			t.Errorf("%s: meta has a key \"\": %s", c.in, meta.JSON())
		}
	}
}

func TestRewriteJSONReplyPrettyBody(t *testing.T) {
	body := []byte("{\n  \"choices\": [\n    {\n      \"index\": 0,\n      \"message\": {\"content\": \"hi\"},\n      \"meta\": {\n        \"tools_used\": [\"a\"]\n      }\n    },\n    {\n      \"index\": 1,\n      \"meta\": {\"x\": 1}\n    }\n  ],\n  \"usage\": {\"total_tokens\": 3}\n}\n")
	out, _, ok := RewriteJSONReply(body, nil, JSONOptions{})
	if !ok || !json.Valid(out) {
		t.Fatalf("invalid: %s", out)
	}
	want := `{"choices":[{"index":0,"message":{"content":"hi"}},{"index":1}],"usage":{"total_tokens":3},"meta":{"tools_used":["a"],"x":1}}`
	if !jsonscan.Equal(out, []byte(want)) {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// deleteKey returns a JSON object without one top-level key.
func deleteKey(t *testing.T, b []byte, key string) []byte {
	t.Helper()
	v := decodeObject(t, b)
	delete(v, key)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// deleteChoiceMeta returns a reply without its top-level and choice metas.
func deleteChoiceMeta(t *testing.T, b []byte) []byte {
	t.Helper()
	v := decodeObject(t, b)
	delete(v, "meta")
	if cs, ok := v["choices"].([]any); ok {
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				delete(m, "meta")
			}
		}
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(out)
}
