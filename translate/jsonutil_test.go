package translate

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// JSONString returns s encoded as a JSON string.
func JSONString(s string) []byte { return jsonscan.AppendString(nil, s) }

// stringifyStructuredResult is appendStructuredResult as a whole value: raw
// itself when nothing needs to change (or raw is not valid JSON).
func stringifyStructuredResult(raw []byte) []byte {
	if out, changed := appendStructuredResult(nil, raw); changed {
		return out
	}
	return raw
}

func TestStringifyStructuredResult(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"list", `{"type":"list","items":["a",1,2.50,-3e2,true,false,null,{"k": "v"},[1, "x"]]}`,
			`{"type":"list","items":["a","1","2.50","-3e2","true","false","","{\"k\":\"v\"}","[1,\"x\"]"]}`},
		{"table", `{"type":"table","headers":["PID",2],"rows":[["123",456],[null,{"a":[]}]]}`,
			`{"type":"table","headers":["PID","2"],"rows":[["123","456"],["","{\"a\":[]}"]]}`},
		{"table row not an array", `{"type":"table","headers":["a"],"rows":[{"x":1},[1]]}`,
			`{"type":"table","headers":["a"],"rows":[{"x":1},["1"]]}`},
		{"key_value", `{"type":"key_value","entries":[{"key":1,"value":3600},{"key":"Healthy","value":true},{"key":"Ports","value":[80, 443]},{"key":"Owner","value":null},{"key":"Extra","value":"s","note":5}]}`,
			`{"type":"key_value","entries":[{"key":"1","value":"3600"},{"key":"Healthy","value":"true"},{"key":"Ports","value":"[80,443]"},{"key":"Owner","value":""},{"key":"Extra","value":"s","note":5}]}`},
		{"key_value entry not an object", `{"type":"key_value","entries":[7,{"key":"k","value":1}]}`,
			`{"type":"key_value","entries":[7,{"key":"k","value":"1"}]}`},
		{"key_value missing value stays missing", `{"type":"key_value","entries":[{"key":"k"}]}`,
			`{"type":"key_value","entries":[{"key":"k"}]}`},
		{"nested object compacted", "{\"type\":\"list\",\"items\":[{\n \"a\" : [ 1 , 2 ]\n}]}",
			`{"type":"list","items":["{\"a\":[1,2]}"]}`},
		{"unicode kept", `{"type":"list","items":[{"k":"é\u00e9"}]}`,
			`{"type":"list","items":["{\"k\":\"é\\u00e9\"}"]}`},
		{"other fields untouched", `{"type":"list","title":5,"items":[1]}`,
			`{"type":"list","title":5,"items":["1"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := stringifyStructuredResult([]byte(c.in))
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			if !jsonscan.Equal(got, []byte(c.want)) {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestStringifyStructuredResultUnchanged(t *testing.T) {
	for _, in := range []string{
		`{"type":"list","items":["a","b"]}`,
		`{"type":"table","headers":["A","B"],"rows":[["1","2"],[]]}`,
		`{"type":"key_value","entries":[{"key":"a","value":"b"}]}`,
		`{"type":"list","items":[]}`,
		`{"type":"list","items":"not an array"}`,
		`{"type":"chart","data":[1,2,3]}`,
		`{"items":[1,2]}`,
		`{"type":1,"items":[1]}`,
		`[1,2]`,
		`"text"`,
		`null`,
		`not json`,
		``,
	} {
		raw := []byte(in)
		got := stringifyStructuredResult(raw)
		if !bytes.Equal(got, raw) || (len(raw) > 0 && &got[0] != &raw[0]) {
			t.Errorf("%s: not returned as the same slice: %s", in, got)
		}
	}
	// A result that changes must not touch the input.
	raw := []byte(`{"type":"list","items":[1]}`)
	orig := string(raw)
	stringifyStructuredResult(raw)
	if string(raw) != orig {
		t.Fatalf("input modified: %s", raw)
	}
}

// eventType reads what gjson.Get(s, "type").Str reads, on its fast path
// and off it.
func TestEventType(t *testing.T) {
	cases := []string{
		`{"type":"response.output_text.delta","delta":"x"}`, `{"type":"a\"b"}`, `{"type":"a\\b","type":"c"}`,
		`{"type":"","x":1}`, `{"type":"unterminated`, `{ "type":"spaced"}`, `{"x":1,"type":"later"}`,
		`{"type":1}`, `{"type":"\u0061"}`, `{"types":"no","type":"yes"}`, `{"type":"x","type":"y"}`, ``, `{`,
	}
	for _, s := range cases {
		if got, want := eventType(s), gjson.Get(s, "type").Str; got != want {
			t.Errorf("eventType(%q) = %q, gjson %q", s, got, want)
		}
	}
}

func FuzzEventType(f *testing.F) {
	f.Add(`{"type":"content_block_delta","index":0}`)
	f.Add(`{"type":"a\\"b"}`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := eventType(s), gjson.Get(s, "type").Str; got != want {
			t.Fatalf("eventType(%q) = %q, gjson %q", s, got, want)
		}
	})
}
