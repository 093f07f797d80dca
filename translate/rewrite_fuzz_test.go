package translate

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRewriteJSONReply: valid stays valid, invalid stays untouched, and an
// unchanged reply comes back as the very same bytes.
func FuzzRewriteJSONReply(f *testing.F) {
	for _, s := range []string{
		`{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"launcher","arguments":"{}"}}]},"meta":{"tools_used":["x"]}}],"meta":{"prompt_trimmed_to":5}}`,
		`{"content":"Status:","meta":{"structured_result":{"type":"key_value","entries":[{"key":"Uptime","value":3600},{"key":"Owner","value":null}]}}}`,
		`{"content":"x","meta":{"tools_used":["a","a",""],"structured_result":{"type":"table","headers":[1],"rows":[[true,{"a":1}]]}}}`,
		`{"choices":[{"message":{"function_call":{"name":"legacy"}}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"function":{"name":"launcher"`,
		`[1,2,3]`, `"text"`, `{}`, `{"meta":{}}`, `{"meta":null}`,
		// Gemini (SPEC 4.6): tools, usage, a blocked prompt, candidates beside choices.
		`{"candidates":[{"content":{"parts":[{"text":"a"},{"functionCall":{"name":"f","args":{}}},{"executableCode":{"code":"1"}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"thoughtsTokenCount":2},"modelVersion":"g","meta":{"k":1}}`,
		`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`,
		`{"candidates":[],"choices":[{"message":{"content":"x"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in := append([]byte(nil), body...)
		out, meta, ok := RewriteJSONReply(body, nil, JSONOptions{})
		if !bytes.Equal(body, in) {
			t.Fatal("the input was modified")
		}
		var v any
		validObject := json.Unmarshal(body, &v) == nil
		if _, isObj := v.(map[string]any); !isObj {
			validObject = false
		}
		if !ok {
			if validObject {
				t.Fatalf("a valid JSON object was refused: %s", body)
			}
			if !bytes.Equal(out, body) {
				t.Fatal("an invalid body was changed")
			}
			return
		}
		if !validObject {
			// gjson is laxer than encoding/json for a few inputs (for example
			// invalid UTF-8 in strings); the body must then still come back
			// untouched or as valid JSON.
			if !bytes.Equal(out, body) && !json.Valid(out) {
				t.Fatalf("invalid output for a lax input: %s", out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("valid input gave invalid output:\n in %s\nout %s", body, out)
		}
		if meta == nil {
			t.Fatal("ok without meta")
		}
		if !meta.Empty() && !json.Valid(meta.JSON()) {
			t.Fatalf("meta is not valid JSON: %s", meta.JSON())
		}
	})
}

// FuzzRewriteRequest: the flags are gone and everything else is preserved.
func FuzzRewriteRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"gpt-4o-mini","run_once":true,"messages":[{"role":"user","content":"Hello"}]}`,
		`{"model":"m","return_final_only":false,"enable_structured_output":"yes","stream":true}`,
		`{"run_once":null,"run_once":true}`,
		`{"messages":[],"a":{"run_once":true}}`,
		`{}`, `[]`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, ok := RewriteRequest(body, RequestOptions{})
		var in map[string]any
		if json.Unmarshal(body, &in) != nil || in == nil {
			if ok && !json.Valid(res.Body) {
				t.Fatalf("lax input gave invalid output: %s", res.Body)
			}
			return
		}
		if !ok {
			t.Fatalf("a JSON object was refused: %s", body)
		}
		if !res.Changed && !bytes.Equal(res.Body, body) {
			t.Fatal("unchanged but different bytes")
		}
		var out map[string]any
		if err := json.Unmarshal(res.Body, &out); err != nil {
			t.Fatalf("output is not a JSON object: %v\n%s", err, res.Body)
		}
		for _, k := range requestFlags {
			if hasKey(res.Body, k) {
				t.Fatalf("flag %q still present: %s", k, res.Body)
			}
			delete(in, k)
		}
		a, _ := json.Marshal(in)
		b, _ := json.Marshal(out)
		if !bytes.Equal(a, b) {
			t.Fatalf("other fields changed:\n in %s\nout %s", a, b)
		}
	})
}

// hasKey reports whether a top-level key occurs in a JSON object, duplicates
// included.
func hasKey(body []byte, key string) bool {
	d := json.NewDecoder(bytes.NewReader(body))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if tok == key {
			return true
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return false
		}
	}
	return false
}
