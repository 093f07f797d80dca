package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// Get returns the JSON stored under key, or nil: m's own bytes, valid until
// key is set again. It does not answer for tools_used and
// prompt_trimmed_to (Tools, m.trimmed).
func (m *Meta) Get(key string) []byte {
	if i := m.index(key); i >= 0 {
		return m.vals[i]
	}
	return nil
}

// metaFrom builds a Meta by merging each JSON object in turn.
func metaFrom(t *testing.T, objs ...string) *Meta {
	t.Helper()
	m := new(Meta)
	for _, o := range objs {
		if !m.MergeJSON([]byte(o)) {
			t.Fatalf("MergeJSON(%s) = false", o)
		}
	}
	return m
}

// decodeObject decodes a JSON object, failing the test when it is not one.
func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	if d.More() {
		t.Fatalf("trailing data after JSON object: %s", b)
	}
	return v
}

// assertCompactJSON checks that b is valid JSON with no insignificant white space.
func assertCompactJSON(t *testing.T, b []byte) {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Bytes(), b) {
		t.Fatalf("JSON is not compact:\n got %s\nwant %s", b, c.Bytes())
	}
}

// keyOrder returns the keys of a JSON object in the order they are written.
func keyOrder(t *testing.T, b []byte) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	tok, err := d.Token()
	if err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestMetaLaterWins(t *testing.T) {
	m := metaFrom(t,
		`{"x":1,"y":"a","obj":{"k":1}}`,
		`{"y":"b","z":true,"obj":{"other":2}}`,
	)
	got := m.JSON()
	want := `{"x":1,"y":"b","obj":{"other":2},"z":true}`
	if string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// Keys keep the position where they were first seen.
	if ks := keyOrder(t, got); !reflect.DeepEqual(ks, []string{"x", "y", "obj", "z"}) {
		t.Fatalf("key order %v", ks)
	}
}

func TestMetaToolsUsedUnion(t *testing.T) {
	cases := []struct {
		name string
		objs []string
		want []string
	}{
		{"first-seen order", []string{`{"tools_used":["b","a"]}`, `{"tools_used":["c","a","b"]}`}, []string{"b", "a", "c"}},
		{"strings only", []string{`{"tools_used":["a",1,null,true,{"n":"x"},["y"],"b"]}`}, []string{"a", "b"}},
		{"no duplicates", []string{`{"tools_used":["a","a","a"]}`, `{"tools_used":["a"]}`}, []string{"a"}},
		{"no empty", []string{`{"tools_used":["","a",""]}`}, []string{"a"}},
		{"empty list adds nothing", []string{`{"tools_used":["a"]}`, `{"tools_used":[]}`}, []string{"a"}},
		{"escaped names decoded", []string{`{"tools_used":["caf\u00e9","a\"b"]}`}, []string{"café", `a"b`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := metaFrom(t, c.objs...)
			if got := m.Tools(); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Tools() = %q, want %q", got, c.want)
			}
			v := decodeObject(t, m.JSON())
			var got []string
			for _, x := range v["tools_used"].([]any) {
				got = append(got, x.(string))
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("JSON tools_used = %q, want %q", got, c.want)
			}
		})
	}
}

func TestMetaAddTool(t *testing.T) {
	var m Meta
	m.AddTool("")
	if !m.Empty() || m.Has("tools_used") || len(m.JSON()) != 2 {
		t.Fatalf("AddTool(\"\") changed the meta: %s", m.JSON())
	}
	for _, n := range []string{"search", "", "launcher", "search", "launcher", "calc"} {
		m.AddTool(n)
	}
	if got, want := string(m.JSON()), `{"tools_used":["search","launcher","calc"]}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if !m.Has("tools_used") || m.Empty() {
		t.Fatal("Has/Empty wrong after AddTool")
	}
}

// The tool names share one text (toolText): names handed out must keep
// their bytes as more names come, past the first storage.
func TestMetaToolNamesStayPut(t *testing.T) {
	var m Meta
	var names []string
	for i := 0; i < 40; i++ {
		names = append(names, fmt.Sprintf("tool_%02d_%s", i, strings.Repeat("x", i%7)))
	}
	var seen []string
	for i, n := range names {
		m.AddTool(n)
		seen = append(seen, m.Tools()[i])
		if got, want := toolsJoined(&m), strings.Join(names[:i+1], ","); got != want {
			t.Fatalf("toolsJoined after %d names:\n got %q\nwant %q", i+1, got, want)
		}
	}
	for i, n := range names {
		if seen[i] != n {
			t.Fatalf("name %d became %q, want %q", i, seen[i], n)
		}
	}
}

func TestMetaTrimmedSmallerWins(t *testing.T) {
	cases := []struct {
		objs []string
		want int64
		set  bool
	}{
		{[]string{`{"prompt_trimmed_to":100}`, `{"prompt_trimmed_to":50}`}, 50, true},
		{[]string{`{"prompt_trimmed_to":50}`, `{"prompt_trimmed_to":100}`}, 50, true},
		{[]string{`{"prompt_trimmed_to":50}`, `{"prompt_trimmed_to":"10"}`}, 50, true},
		{[]string{`{"prompt_trimmed_to":null}`}, 0, false},
		{[]string{`{"prompt_trimmed_to":0}`, `{"prompt_trimmed_to":7}`}, 0, true},
	}
	for _, c := range cases {
		m := metaFrom(t, c.objs...)
		n, ok := trimmedOf(m)
		if n != c.want || ok != c.set {
			t.Errorf("%v: trimmed = %d, %v; want %d, %v", c.objs, n, ok, c.want, c.set)
		}
		if c.set {
			v := decodeObject(t, m.JSON())
			if v["prompt_trimmed_to"] != json.Number(itoa(c.want)) {
				t.Errorf("%v: JSON %s", c.objs, m.JSON())
			}
		} else if m.Has("prompt_trimmed_to") || string(m.JSON()) != "{}" {
			t.Errorf("%v: unexpected %s", c.objs, m.JSON())
		}
	}

	var m Meta
	m.SetTrimmed(300)
	m.SetTrimmed(400)
	m.SetTrimmed(200)
	if n, _ := trimmedOf(&m); n != 200 {
		t.Fatalf("SetTrimmed: %d", n)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestMetaMergeMeta(t *testing.T) {
	a := metaFrom(t, `{"tools_used":["a"],"prompt_trimmed_to":500,"x":1,"backendUsed":"openclaw"}`)
	b := metaFrom(t, `{"x":2,"tools_used":["b","a"],"prompt_trimmed_to":900,"structured_metadata":{"intent":"question"}}`)
	a.Merge(b)
	want := `{"tools_used":["a","b"],"prompt_trimmed_to":500,"x":2,"backendUsed":"openclaw","structured_metadata":{"intent":"question"}}`
	if got := string(a.JSON()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Merging the other way round: later wins for plain keys only.
	c := metaFrom(t, `{"x":2,"tools_used":["b","a"],"prompt_trimmed_to":900}`)
	c.Merge(metaFrom(t, `{"tools_used":["a"],"prompt_trimmed_to":500,"x":1}`))
	if got, want := string(c.JSON()), `{"x":1,"tools_used":["b","a"],"prompt_trimmed_to":500}`; got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Merging an empty or zero Meta changes nothing.
	before := string(a.JSON())
	a.Merge(new(Meta))
	if string(a.JSON()) != before {
		t.Fatal("merging an empty Meta changed the result")
	}
}

func TestMetaUpstreamKeysSurvive(t *testing.T) {
	up := `{"backendUsed":"openclaw","hustle":{"reasoning":{"thinking":"t"}},"custom":[1,{"a":null}],"n":1.5e3,"s":"x\u00e9"}`
	m := metaFrom(t, up)
	m.AddTool("launcher")
	m.SetTrimmed(10)
	if !jsonscan.Equal([]byte(`{"backendUsed":"openclaw","hustle":{"reasoning":{"thinking":"t"}},"custom":[1,{"a":null}],"n":1.5e3,"s":"xé","tools_used":["launcher"],"prompt_trimmed_to":10}`), m.JSON()) {
		t.Fatalf("got %s", m.JSON())
	}
	// Raw values are kept as the upstream wrote them (numbers, escapes).
	if got := string(m.Get("n")); got != "1.5e3" {
		t.Fatalf("Get(n) = %s", got)
	}
	if got := string(m.Get("s")); got != `"x\u00e9"` {
		t.Fatalf("Get(s) = %s", got)
	}
}

func TestMetaMergeJSONNotObject(t *testing.T) {
	for _, in := range []string{``, `[]`, `[{"a":1}]`, `"meta"`, `1`, `null`, `true`, `{"a":`} {
		var m Meta
		if m.MergeJSON([]byte(in)) {
			t.Errorf("MergeJSON(%q) = true", in)
		}
		if !m.Empty() || string(m.JSON()) != "{}" {
			t.Errorf("MergeJSON(%q) merged %s", in, m.JSON())
		}
	}
}

func TestMetaEmptyHasGet(t *testing.T) {
	var m Meta
	if !m.Empty() || string(m.JSON()) != "{}" {
		t.Fatal("zero Meta not empty")
	}
	m.MergeJSON([]byte(`{"tools_used":[],"prompt_trimmed_to":"x"}`))
	if !m.Empty() {
		t.Fatalf("meta with nothing usable is not Empty: %s", m.JSON())
	}
	m.MergeJSON([]byte(`{}`))
	if !m.Empty() {
		t.Fatal("{} made Meta non-empty")
	}
	m.Set("k", []byte(`null`))
	if m.Empty() || !m.Has("k") || string(m.Get("k")) != "null" {
		t.Fatalf("Set(k, null): %s", m.JSON())
	}
	if m.Get("missing") != nil || m.Has("missing") {
		t.Fatal("Get/Has of a missing key")
	}
	if m.Get("tools_used") != nil {
		t.Fatal("Get must not answer for tools_used")
	}
}

func TestMetaSetCopiesRaw(t *testing.T) {
	raw := []byte(`{"a":1}`)
	var m Meta
	m.Set("k", raw)
	copy(raw, "XXXXXXX")
	if got := string(m.Get("k")); got != `{"a":1}` {
		t.Fatalf("Set kept the caller's bytes: %s", got)
	}
}

// Meta outlives the buffers it was built from (RewriteJSONReply returns it;
// stream processors keep it across Writes): no string it holds may point
// into a caller's buffer.
func TestMetaOwnsItsStrings(t *testing.T) {
	body := []byte(`{"choices":[{"index":0,"message":{"content":"x","function_call":{"name":"lookup","arguments":"{}"}},"meta":{"upstream_key":1}}]}`)
	_, meta, ok := RewriteJSONReply(body, nil, JSONOptions{})
	if !ok {
		t.Fatal("not ok")
	}
	want := string(meta.JSON())
	for i := range body {
		body[i] = 'X'
	}
	if got := string(meta.JSON()); got != want {
		t.Fatalf("meta changed with the caller's buffer:\n got %s\nwant %s", got, want)
	}
	if want != `{"upstream_key":1,"tools_used":["lookup"]}` {
		t.Fatalf("meta %s", want)
	}

	name := []byte("launcher")
	var m Meta
	m.AddTool(strView(name))
	m.Set(strView(name), []byte("1"))
	copy(name, "XXXXXXXX")
	if got := string(m.JSON()); got != `{"tools_used":["launcher"],"launcher":1}` {
		t.Fatalf("AddTool/Set kept the caller's string memory: %s", got)
	}
}

func TestMetaAppendJSONValidCompact(t *testing.T) {
	m := metaFrom(t,
		"{\"pretty\": {\n  \"a\": [1, 2,\t3],\r\n  \"b\": {\"c\": \"keep  spaces\\n\"}\n},\n\"tools_used\": [\"a\"]}",
		`{"structured_result": {"type": "list", "items": ["x", 1]}}`,
		`{"spaced": [ true , false ]}`,
	)
	m.AddTool("we\"ird\\na\tme\u2028\x01")
	m.AddTool("bad\xffutf8")
	m.Set("key with \"quotes\" and \n", []byte(`"v"`))
	got := m.JSON()
	assertCompactJSON(t, got)
	if bytes.ContainsAny(got, "\r\n") {
		t.Fatalf("meta JSON spans lines: %s", got)
	}
	v := decodeObject(t, got)
	if s := v["pretty"].(map[string]any)["b"].(map[string]any)["c"]; s != "keep  spaces\n" {
		t.Fatalf("string content changed: %q", s)
	}
	tools := v["tools_used"].([]any)
	if tools[1] != "we\"ird\\na\tme\u2028\x01" || tools[2] != "bad\ufffdutf8" {
		t.Fatalf("tools %q", tools)
	}
	if v["key with \"quotes\" and \n"] != "v" {
		t.Fatalf("odd key lost: %s", got)
	}
	if items := v["structured_result"].(map[string]any)["items"].([]any); items[1] != "1" {
		t.Fatalf("structured_result not stringified: %s", got)
	}

	// AppendJSON appends.
	out := m.AppendJSON([]byte("prefix:"))
	if !bytes.HasPrefix(out, []byte("prefix:")) || !bytes.Equal(out[len("prefix:"):], got) {
		t.Fatalf("AppendJSON did not append: %s", out)
	}
}

func TestMetaStructuredResultStringified(t *testing.T) {
	m := metaFrom(t, `{"structured_result":{"type":"key_value","entries":[{"key":"Uptime","value":3600},{"key":"Healthy","value":true},{"key":"Ports","value":[80,443]},{"key":"Owner","value":null}]}}`)
	want := `{"structured_result":{"type":"key_value","entries":[{"key":"Uptime","value":"3600"},{"key":"Healthy","value":"true"},{"key":"Ports","value":"[80,443]"},{"key":"Owner","value":""}]}}`
	if got := string(m.JSON()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Stored as it is written: merged into another meta, it stays so.
	var o Meta
	o.Merge(m)
	if got := string(o.JSON()); got != want {
		t.Fatalf("merged: got  %s\nwant %s", got, want)
	}
}

// toolsJoined is the comma-joined text the tool names are views of.
func toolsJoined(m *Meta) string { return strView(m.toolText) }

// trimmedOf is prompt_trimmed_to and whether it is set.
func trimmedOf(m *Meta) (int64, bool) { return m.trimmed, m.hasTrimmed }
