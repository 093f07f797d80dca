package translate

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestAppendJSONString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`q"b\s`, `"q\"b\\s"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x01\x08\x0c\x1f", `"\u0000\u0001\u0008\u000c\u001f"`},
		{"<a href='x'>&</a>", `"<a href='x'>&</a>"`}, // no HTML escaping
		{"café 日本 😀", `"café 日本 😀"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xc3", `"\ufffd"`},                     // truncated sequence
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`}, // encoded surrogate: invalid
		{"\x7f", "\"\x7f\""},
	}
	for _, c := range cases {
		if got := string(appendJSONString(nil, c.in)); got != c.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", c.in, got, c.want)
		}
		if got := string(JSONString(c.in)); got != c.want {
			t.Errorf("JSONString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := string(appendJSONString([]byte("x="), "y")); got != `x="y"` {
		t.Errorf("appendJSONString does not append: %s", got)
	}
}

// appendJSONString must agree with encoding/json on the decoded value for
// any input, valid UTF-8 or not.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "é", "😀", "\u2028", "<", "&", "\xe2\x82", "\t"}
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := sb.String()
		enc := appendJSONString(nil, s)
		if !json.Valid(enc) {
			t.Fatalf("invalid JSON for %q: %s", s, enc)
		}
		if !utf8.Valid(enc) {
			t.Fatalf("invalid UTF-8 for %q: %q", s, enc)
		}
		var got, want string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatal(err)
		}
		ref, _ := json.Marshal(s)
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q: decoded %q, encoding/json gives %q", s, got, want)
		}
	}
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
			got := StringifyStructuredResult([]byte(c.in))
			if !json.Valid(got) {
				t.Fatalf("invalid JSON: %s", got)
			}
			if !jsonEqual(got, []byte(c.want)) {
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
		got := StringifyStructuredResult(raw)
		if !bytes.Equal(got, raw) || (len(raw) > 0 && &got[0] != &raw[0]) {
			t.Errorf("%s: not returned as the same slice: %s", in, got)
		}
	}
	// A result that changes must not touch the input.
	raw := []byte(`{"type":"list","items":[1]}`)
	orig := string(raw)
	StringifyStructuredResult(raw)
	if string(raw) != orig {
		t.Fatalf("input modified: %s", raw)
	}
}

func TestJSONEqual(t *testing.T) {
	cases := []struct {
		a, b string
		eq   bool
	}{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, true},
		{`{"a":1}`, `{ "a" : 1.0 }`, true},
		{`{"a":100}`, `{"a":1e2}`, true},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":[1,{"b":null}]}`, `{"a":[1,{"b":null}]}`, true},
		{`{"a":"1"}`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`{"a":true}`, `{"a":"true"}`, false},
		{`{"a":"é"}`, `{"a":"\u00e9"}`, true},
		{`{"a":1}`, `{"a":`, false},
		{`{"a":`, `{"a":`, true}, // byte-equal texts are equal
		{`null`, `null`, true},
		{`{}`, `[]`, false},
	}
	for _, c := range cases {
		if got := jsonEqual([]byte(c.a), []byte(c.b)); got != c.eq {
			t.Errorf("jsonEqual(%s, %s) = %v", c.a, c.b, got)
		}
		if got := jsonEqual([]byte(c.b), []byte(c.a)); got != c.eq {
			t.Errorf("jsonEqual(%s, %s) = %v (swapped)", c.b, c.a, got)
		}
	}
}

func TestUnsafeString(t *testing.T) {
	if unsafeString(nil) != "" || unsafeString([]byte{}) != "" {
		t.Fatal("empty")
	}
	if unsafeString([]byte("abc")) != "abc" {
		t.Fatal("abc")
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

// appendJSONStr writes, byte for byte, what encoding/json writes (without
// HTML escaping, or with it in html mode), for text with long plain runs
// (where plainJSONRun skips eight bytes at a time) broken by every kind of
// byte at every offset. (\b and \f, which the two write differently
// outside html mode, are in TestAppendJSONString.)
func TestAppendJSONStrSameAsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	special := []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "é", "😀", "\u2028", "<", "&", "\t", " ", "~"}
	var enc bytes.Buffer
	noHTML := json.NewEncoder(&enc)
	noHTML.SetEscapeHTML(false)
	for n := 0; n < 20000; n++ {
		var sb strings.Builder
		for k := rng.Intn(6); k > 0; k-- {
			run := strings.Repeat("plain text ", 2)
			sb.WriteString(run[:rng.Intn(len(run))])
			sb.WriteString(special[rng.Intn(len(special))])
		}
		s := sb.String()
		enc.Reset()
		if err := noHTML.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := appendJSONStr(nil, s, false), bytes.TrimSuffix(enc.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONStr(%q) = %s, encoding/json %s", s, got, want)
		}
		want, _ := json.Marshal(s)
		if got := appendJSONStr(nil, s, true); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONStr(%q, html) = %s, json.Marshal %s", s, got, want)
		}
	}
}

// plainJSONRun never passes a byte that is not plain and never returns
// short of where it started, for every length from 8 to 24, every start,
// and one or two bytes of each kind at every place (before the start too,
// where the last word's bytes are read again); over plain text it reaches
// the end. (After a stop it may return early at a plain byte: the caller
// looks at each byte it stops at.)
func TestPlainJSONRunNeverPassesAStop(t *testing.T) {
	kinds := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff}
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	check := func(b []byte) {
		s := string(b)
		allPlain := !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x80 || !plain(byte(r)) })
		for i := 0; i <= len(s); i++ {
			r := plainJSONRun(s, i)
			stop := i
			for stop < len(s) && plain(s[stop]) {
				stop++
			}
			if r < i || r > stop || (allPlain && r != len(s)) {
				t.Fatalf("plainJSONRun(%q, %d) = %d, first byte not plain at %d", s, i, r, stop)
			}
		}
	}
	for n := 8; n <= 24; n++ {
		b := bytes.Repeat([]byte{'a'}, n)
		check(b)
		for p := 0; p < n; p++ {
			for _, k := range kinds {
				b[p] = k
				check(b)
				for q := p + 1; q < n; q++ {
					for _, k2 := range kinds {
						b[q] = k2
						check(b)
					}
					b[q] = 'a'
				}
			}
			b[p] = 'a'
		}
	}
}
