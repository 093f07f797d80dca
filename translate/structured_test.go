package translate

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The enums exactly as SPEC 7 lists them (kept here apart from the
// package's own lists, so that a slip in either shows).
var (
	spec7Intents     = []string{"question", "request", "task_delegation", "feedback", "complaint", "follow_up", "attachment_analysis"}
	spec7EntityTypes = []string{"person", "organization", "location", "product", "project", "document", "event",
		"money", "date", "investor", "advisor", "metric", "technology", "tool", "service", "methodology",
		"credential", "timeframe", "feature", "url", "email_address"}
)

func schemaStrings(t *testing.T, r gjson.Result) []string {
	t.Helper()
	if !r.IsArray() {
		t.Fatalf("not an array: %s", r.Raw)
	}
	var out []string
	for _, v := range r.Array() {
		if v.Type != gjson.String {
			t.Fatalf("not a string: %s", v.Raw)
		}
		out = append(out, v.Str)
	}
	return out
}

func TestApplyStructuredRequestSchema(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	out, err := ApplyStructuredRequest(body, "")
	if err != nil {
		t.Fatal(err)
	}
	if !gjson.ValidBytes(out) {
		t.Fatalf("invalid JSON: %s", out)
	}
	rf := gjson.GetBytes(out, "response_format")
	if rf.Get("type").Str != "json_schema" || rf.Get("json_schema.name").Str != "structured_reply" {
		t.Fatalf("response_format = %s", rf.Raw)
	}
	s := rf.Get("json_schema.schema")
	if s.Get("type").Str != "object" {
		t.Errorf("schema type = %s", s.Get("type").Raw)
	}
	if got := schemaStrings(t, s.Get("required")); !reflect.DeepEqual(got, []string{"reply", "intent"}) {
		t.Errorf("required = %v", got)
	}
	p := s.Get("properties")
	var keys []string
	p.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.Str); return true })
	wantKeys := []string{"entities", "reply", "intent", "requires_user_action", "topics", "scheduling_intent"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("properties = %v, want %v", keys, wantKeys)
	}
	checks := map[string]string{
		"reply.type":                                 "string",
		"intent.type":                                "string",
		"requires_user_action.type":                  "boolean",
		"entities.type":                              "array",
		"entities.items.type":                        "object",
		"entities.items.properties.name.type":        "string",
		"entities.items.properties.type.type":        "string",
		"topics.type":                                "array",
		"topics.items.type":                          "string",
		"scheduling_intent.type":                     "object",
		"scheduling_intent.properties.detected.type": "boolean",
		"scheduling_intent.properties.datetime_mentioned.type": "string",
	}
	for path, want := range checks {
		if got := p.Get(path).Str; got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if !strings.Contains(strings.ToLower(p.Get("reply.description").Str), "markdown") {
		t.Errorf("reply description does not say Markdown: %q", p.Get("reply.description").Str)
	}
	if got := schemaStrings(t, p.Get("intent.enum")); !reflect.DeepEqual(got, spec7Intents) {
		t.Errorf("intent enum = %v", got)
	}
	if got := schemaStrings(t, p.Get("entities.items.properties.type.enum")); !reflect.DeepEqual(got, spec7EntityTypes) {
		t.Errorf("entity type enum = %v", got)
	}
	if p.Get("topics.minItems").Int() != 2 || p.Get("topics.maxItems").Int() != 4 {
		t.Errorf("topics = %s", p.Get("topics").Raw)
	}
	// The schema is valid JSON Schema-shaped JSON that encoding/json agrees with.
	var v map[string]any
	if err := json.Unmarshal([]byte(rf.Raw), &v); err != nil {
		t.Fatal(err)
	}
}

func TestApplyStructuredRequestMessages(t *testing.T) {
	inst := DefaultStructuredInstruction
	if inst == "" || !strings.Contains(inst, "entities") || !strings.Contains(inst, "reply") {
		t.Fatalf("DefaultStructuredInstruction = %q", inst)
	}
	tests := []struct {
		name        string
		body        string
		instruction string
		want        string // the messages array, as JSON
	}{
		{
			name: "system string appended",
			body: `{"model":"gemini-2.5-flash","messages":[{"role":"system","content":"You are JARVIS."},{"role":"user","content":"hi"}],"temperature":0.2}`,
			want: `[{"role":"system","content":` + string(JSONString("You are JARVIS.\n\n"+inst)) + `},{"role":"user","content":"hi"}]`,
		},
		{
			name:        "custom instruction",
			body:        `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"hi"}]}`,
			instruction: "Be <structured> & brief.",
			want:        `[{"role":"system","content":"S\n\nBe <structured> & brief."},{"role":"user","content":"hi"}]`,
		},
		{
			name: "first system message only",
			body: `{"messages":[{"role":"user","content":"a"},{"role":"system","content":"one"},{"role":"system","content":"two"}]}`,
			want: `[{"role":"user","content":"a"},{"role":"system","content":` + string(JSONString("one\n\n"+inst)) + `},{"role":"system","content":"two"}]`,
		},
		{
			name: "system with array content gets a new first system message",
			body: `{"messages":[{"role":"system","content":[{"type":"text","text":"You are JARVIS."}]},{"role":"user","content":"hi"}]}`,
			want: `[{"role":"system","content":` + string(JSONString(inst)) + `},{"role":"system","content":[{"type":"text","text":"You are JARVIS."}]},{"role":"user","content":"hi"}]`,
		},
		{
			name: "no system message",
			body: `{"messages":[{"role":"user","content":"hi"}]}`,
			want: `[{"role":"system","content":` + string(JSONString(inst)) + `},{"role":"user","content":"hi"}]`,
		},
		{
			name: "empty messages",
			body: `{"messages":[ ]}`,
			want: `[{"role":"system","content":` + string(JSONString(inst)) + `}]`,
		},
		{
			name: "no messages at all",
			body: `{"model":"m"}`,
			want: `[{"role":"system","content":` + string(JSONString(inst)) + `}]`,
		},
		{
			name: "empty system content",
			body: `{"messages":[{"role":"system","content":""},{"role":"user","content":"hi"}]}`,
			want: `[{"role":"system","content":` + string(JSONString(inst)) + `},{"role":"user","content":"hi"}]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			orig := append([]byte(nil), body...)
			out, err := ApplyStructuredRequest(body, tc.instruction)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, orig) {
				t.Fatalf("input body modified")
			}
			if !gjson.ValidBytes(out) {
				t.Fatalf("invalid JSON: %s", out)
			}
			got := gjson.GetBytes(out, "messages").Raw
			if !jsonscan.Equal([]byte(got), []byte(tc.want)) {
				t.Errorf("messages =\n%s\nwant\n%s", got, tc.want)
			}
			if !gjson.GetBytes(out, "response_format.json_schema.schema").IsObject() {
				t.Errorf("no schema: %s", out)
			}
		})
	}
}

// Every byte of the body other than response_format and the one system
// message is kept.
func TestApplyStructuredRequestKeepsBytes(t *testing.T) {
	prefix := `{ "model" : "gemini-2.5-flash",  "temperature":0.20, "stop":["\u003c/s>"], "messages" : [ `
	sys := `{"role": "system", "content": "You are JARVIS."}`
	suffix := ` , {"role":"user","content":"caf\u00e9 <b>"} ] , "x":{"y":[1,2.50e1,null]} }`
	body := []byte(prefix + sys + suffix)
	out, err := ApplyStructuredRequest(body, "Do it.")
	if err != nil {
		t.Fatal(err)
	}
	wantSys := `{"role": "system", "content": "You are JARVIS.\n\nDo it."}`
	if !bytes.HasPrefix(out, []byte(prefix+wantSys+suffix[:len(suffix)-1])) {
		t.Fatalf("bytes not kept:\n%s", out)
	}
	// Only response_format was added after the last original field.
	back, err := sjson.DeleteBytes(out, "response_format")
	if err != nil {
		t.Fatal(err)
	}
	if want := prefix + wantSys + suffix; strings.TrimSpace(string(back)) != want {
		t.Fatalf("after removing response_format:\n%s\nwant\n%s", back, want)
	}

	// Inserting a system message keeps the other messages' bytes too.
	body = []byte(`{"messages":[ {"role" : "user" , "content":"a\/b"} ],"n":1}`)
	out, err = ApplyStructuredRequest(body, "I.")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(out, []byte(`{"messages":[{"role":"system","content":"I."}, {"role" : "user" , "content":"a\/b"} ],"n":1`)) {
		t.Fatalf("bytes not kept:\n%s", out)
	}
}

func TestApplyStructuredRequestNotObject(t *testing.T) {
	for _, body := range []string{``, `[]`, `"x"`, `null`, `{"a":`, `not json`, `{"a":1}x`} {
		if out, err := ApplyStructuredRequest([]byte(body), ""); err == nil {
			t.Errorf("%q: no error, got %s", body, out)
		}
	}
}

func TestSplitStructuredReply(t *testing.T) {
	tests := []struct {
		name    string
		content string
		ok      bool
		reply   string
		meta    string
	}{
		{
			name:    "full",
			content: `{"reply":"Sure — **Acme Corp** at 2pm.","intent":"request","requires_user_action":true,"entities":[{"name":"Acme Corp","type":"organization"},{"name":"next Tuesday","type":"date"}],"topics":["meeting","scheduling"],"scheduling_intent":{"detected":true,"datetime_mentioned":"next Tuesday at 2pm"}}`,
			ok:      true,
			reply:   "Sure — **Acme Corp** at 2pm.",
			meta:    `{"intent":"request","requires_user_action":true,"entities":[{"name":"Acme Corp","type":"organization"},{"name":"next Tuesday","type":"date"}],"topics":["meeting","scheduling"],"scheduling":{"detected":true,"datetime_mentioned":"next Tuesday at 2pm"}}`,
		},
		{
			name:    "missing fields get defaults",
			content: `{"reply":"Hi"}`,
			ok:      true,
			reply:   "Hi",
			meta:    `{"intent":"","requires_user_action":false,"entities":[],"topics":[]}`,
		},
		{
			name:    "scheduling absent",
			content: `{"topics":["a","b"],"intent":"question","reply":"x","requires_user_action":false}`,
			ok:      true,
			reply:   "x",
			meta:    `{"intent":"question","requires_user_action":false,"entities":[],"topics":["a","b"]}`,
		},
		{
			name:    "scheduling present with missing datetime",
			content: `{"reply":"x","scheduling_intent":{"detected":false}}`,
			ok:      true,
			reply:   "x",
			meta:    `{"intent":"","requires_user_action":false,"entities":[],"topics":[],"scheduling":{"detected":false,"datetime_mentioned":""}}`,
		},
		{
			name:    "escapes decoded, leading and trailing white space",
			content: " \n\t{\"reply\" : \"a\\nb \\\"q\\\" caf\\u00e9 \\ud83d\\ude00\", \"intent\":\"feedback\"}\n ",
			ok:      true,
			reply:   "a\nb \"q\" café 😀",
			meta:    `{"intent":"feedback","requires_user_action":false,"entities":[],"topics":[]}`,
		},
		{
			name:    "broken surrogates as encoding/json",
			content: `{"reply":"\ud83d\u0041 \ude00"}`,
			ok:      true,
			reply:   "\uFFFDA \uFFFD",
			meta:    `{"intent":"","requires_user_action":false,"entities":[],"topics":[]}`,
		},
		{
			name:    "lenient types",
			content: `{"reply":"x","intent":3,"entities":["Bob",{"name":"Acme"},7],"topics":["a",2,null,{"x":1}]}`,
			ok:      true,
			reply:   "x",
			meta:    `{"intent":"3","requires_user_action":false,"entities":[{"name":"Bob","type":""},{"name":"Acme","type":""}],"topics":["a","2"]}`,
		},
		{
			name:    "nested reply does not count",
			content: `{"data":{"reply":"inner"}}`,
		},
		{name: "not JSON", content: `Hello there`},
		{name: "truncated JSON", content: `{"reply":"Hello`},
		{name: "trailing text", content: `{"reply":"Hello"} and more`},
		{name: "array", content: `[{"reply":"x"}]`},
		{name: "reply not a string", content: `{"reply":42,"intent":"question"}`},
		{name: "reply null", content: `{"reply":null}`},
		{name: "no reply", content: `{"intent":"question"}`},
		{name: "empty", content: ``},
		{name: "fenced", content: "```json\n{\"reply\":\"x\"}\n```"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply, meta, ok := SplitStructuredReply(tc.content)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				if reply != tc.content || meta != nil {
					t.Errorf("not ok but reply = %q, meta = %s", reply, meta)
				}
				return
			}
			if reply != tc.reply {
				t.Errorf("reply = %q, want %q", reply, tc.reply)
			}
			if string(meta) != tc.meta { // exact bytes: compact, key order as specified
				t.Errorf("meta =\n%s\nwant\n%s", meta, tc.meta)
			}
		})
	}
}

// replyStreamCases are contents for the stream decoder. Structured ones must
// decode to what encoding/json reads as the top-level "reply".
var replyStreamCases = []struct {
	name    string
	content string
}{
	{"reply first", `{"reply":"Hello **world**","intent":"question","topics":["a","b"]}`},
	{"reply middle", `{"intent":"request","reply":"In the middle.","requires_user_action":true}`},
	{"reply last after nested decoys", `{"entities":[{"name":"reply","type":"tool"},{"name":"{\"reply\":\"no\"}","type":"document"}],` +
		`"meta":{"reply":"nested {not} [this]","x":[1,{"reply":"deep"},"]}"]},"note":"say \"reply\": \\\"x\\\" }{","reply":"Final answer"}`},
	{"escapes", `{"reply":"a\nb\tc \"q\" back\\slash \/ \b\f\r end \\n not newline","intent":"question"}`},
	{"unicode escapes", `{"reply":"caf\u00e9 CAF\u00C9 raw café \u0000 \u2028 \u0041"}`},
	{"surrogate pair", `{"reply":"smile \ud83d\ude00! raw 😀 and \uD83D\uDE03"}`},
	{"broken surrogates", `{"reply":"lone \ud83d then \ude00, \ud83d\u0041, \ud83d\n, \ud83d\ud83d\ude00, end \ud83d"}`},
	{"multibyte raw", `{"reply":"日本語 — ünï 😀 ok"}`},
	{"invalid UTF-8", "{\"reply\":\"bad \xff byte, cut \xe2\x82, surrogate \xed\xa0\x80, end \xf0\x9f\"}"},
	{"empty reply", `{"reply":"","intent":"question"}`},
	{"spaced", " \n\t {\n  \"intent\" : \"x\" ,\n  \"reply\" :\t\"spaced out\" ,\n \"topics\" : [ ] \n}\n "},
	{"scalars before", `{"n":-1.5e3,"b":true,"z":null,"f":false,"reply":"after scalars","m":0}`},
	{"keys like reply", `{"replyx":"no","rep":"no","re\"ply":"no","r\u0065ply":"escaped key is reply"}`},
	{"markdown", `{"reply":"# Title\n\n- item 1\n- item 2\n\n` + "```go\\nfmt.Println(\\\"{}\\\")\\n```" + `","intent":"question"}`},
	{"plain text", "Plain text answer {not json}"},
	{"plain with leading space", "  \n Hello {\"reply\":\"x\"}"},
	{"array content", ` [{"reply":"x"}]`},
	{"fenced json", "```json\n{\"reply\":\"x\"}\n```"},
}

// wantReplyStream is what the concatenated Feed output must be: the reply as
// encoding/json decodes it for structured content, the content itself
// otherwise.
func wantReplyStream(t testing.TB, content string) (want string, structured bool) {
	trimmed := strings.TrimLeft(content, " \t\r\n")
	if !strings.HasPrefix(trimmed, "{") {
		return content, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(content), &obj); err != nil {
		t.Fatalf("bad test content %q: %v", content, err)
	}
	var reply string
	if raw, ok := obj["reply"]; ok {
		if err := json.Unmarshal(raw, &reply); err != nil {
			t.Fatalf("bad reply in %q: %v", content, err)
		}
	}
	return reply, true
}

// feedReplyPieces feeds content cut at the given offsets and returns the joined
// output. Each output must be valid UTF-8 when the content is.
func feedReplyPieces(t testing.TB, d *ReplyStream, content string, cuts []int) string {
	var sb strings.Builder
	prev := 0
	for _, c := range append(cuts, len(content)) {
		out := d.Feed(content[prev:c])
		if utf8.ValidString(content) && !utf8.ValidString(out) {
			t.Fatalf("output %q of delta %q is not valid UTF-8", out, content[prev:c])
		}
		sb.WriteString(out)
		prev = c
	}
	return sb.String()
}

// replyStreamWant is what a ReplyStream must produce for one content.
type replyStreamWant struct {
	content    string
	text       string
	structured bool
	md         []byte
	mdOK       bool
}

func newReplyStreamWant(t *testing.T, content string) replyStreamWant {
	t.Helper()
	w := replyStreamWant{content: content}
	w.text, w.structured = wantReplyStream(t, content)
	if w.structured {
		var reply string
		reply, w.md, w.mdOK = SplitStructuredReply(content)
		if w.mdOK && reply != w.text {
			t.Fatalf("SplitStructuredReply reply = %q, encoding/json %q", reply, w.text)
		}
	}
	return w
}

func (w replyStreamWant) check(t *testing.T, cuts []int) {
	t.Helper()
	d := NewReplyStream(1 << 20)
	if got := feedReplyPieces(t, d, w.content, cuts); got != w.text {
		t.Fatalf("cuts %v: got %q, want %q", cuts, got, w.text)
	}
	if d.Structured() != w.structured {
		t.Fatalf("Structured() = %v, want %v", d.Structured(), w.structured)
	}
	if md, ok := d.Metadata(); ok != w.mdOK || !bytes.Equal(md, w.md) {
		t.Fatalf("Metadata = %s, %v; want %s, %v", md, ok, w.md, w.mdOK)
	}
}

func TestReplyStreamSplits(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, tc := range replyStreamCases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.content
			w := newReplyStreamWant(t, c)
			w.check(t, nil)
			for i := 0; i <= len(c); i++ { // every single split point
				w.check(t, []int{i})
			}
			for i := 0; i < len(c); i++ { // every piece of up to 12 bytes cut out
				for j := i + 1; j < len(c) && j <= i+12; j++ {
					w.check(t, []int{i, j})
				}
			}
			one := make([]int, 0, len(c))
			for i := 1; i < len(c); i++ {
				one = append(one, i)
			}
			w.check(t, one) // 1-byte deltas
			for n := 0; n < 200; n++ {
				var cuts []int
				for p := rng.Intn(8); p <= len(c); p += rng.Intn(8) {
					cuts = append(cuts, p) // empty deltas included
				}
				w.check(t, cuts)
			}
		})
	}
}

// The deltas of shared/conformance/structured-stream.txtar.
func TestReplyStreamConformanceDeltas(t *testing.T) {
	deltas := []string{"", `{"rep`, `ly":"`, `Line `, `one\n`, `He sa`, `id \"`, `hi\" `, `\ud83`, `d\ude`,
		`00 ca`, `f\u00`, `e9","`, `inten`, `t":"q`, `uesti`, `on","`, `requi`, `res_u`, `ser_a`, `ction`,
		`":fal`, `se,"e`, `ntiti`, `es":[`, `],"to`, `pics"`, `:["gr`, `eetin`, `g","t`, `est"]`, `}`}
	d := NewReplyStream(1 << 20)
	var outs []string
	for _, delta := range deltas {
		outs = append(outs, d.Feed(delta))
	}
	if got, want := strings.Join(outs, ""), "Line one\nHe said \"hi\" 😀 café"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// Text is shown as soon as it is decoded; only escapes are held back.
	wantOuts := []string{"", "", "", "Line ", "one\n", "He sa", "id \"", "hi\" ", "", "", "😀 ca", "f", "é", ""}
	if !reflect.DeepEqual(outs[:len(wantOuts)], wantOuts) {
		t.Errorf("outputs = %q, want %q", outs[:len(wantOuts)], wantOuts)
	}
	md, ok := d.Metadata()
	if want := `{"intent":"question","requires_user_action":false,"entities":[],"topics":["greeting","test"]}`; !ok || string(md) != want {
		t.Errorf("Metadata = %s, %v", md, ok)
	}
}

func TestReplyStreamPassthrough(t *testing.T) {
	d := NewReplyStream(0)
	if out := d.Feed("  "); out != "" {
		t.Fatalf("white space not held: %q", out)
	}
	if out := d.Feed("\n"); out != "" {
		t.Fatalf("white space not held: %q", out)
	}
	if out := d.Feed("Hi {"); out != "  \nHi {" {
		t.Fatalf("got %q", out)
	}
	for _, s := range []string{`"reply":"x"}`, "", "  ", "more"} {
		if out := d.Feed(s); out != s {
			t.Fatalf("passthrough changed %q to %q", s, out)
		}
	}
	if d.Structured() {
		t.Error("Structured() = true")
	}
	if md, ok := d.Metadata(); ok || md != nil {
		t.Errorf("Metadata = %s, %v", md, ok)
	}
}

// Only white space, then the end: nothing shown, nothing structured.
func TestReplyStreamOnlySpace(t *testing.T) {
	d := NewReplyStream(0)
	if d.Feed(" \n") != "" || d.Structured() {
		t.Fatal("white space decided the stream")
	}
	if _, ok := d.Metadata(); ok {
		t.Error("Metadata ok")
	}
	// White space beyond maxBytes is let through rather than held.
	d = NewReplyStream(4)
	if out := d.Feed("   "); out != "" {
		t.Fatalf("got %q", out)
	}
	if out := d.Feed("   "); out != "      " {
		t.Fatalf("got %q", out)
	}
	if out := d.Feed("{"); out != "{" {
		t.Fatalf("got %q", out)
	}
}

func TestReplyStreamMaxBytes(t *testing.T) {
	content := `{"reply":"0123456789","intent":"question"}`
	d := NewReplyStream(len(content))
	if got := feedReplyPieces(t, d, content, []int{5, 17}); got != "0123456789" {
		t.Fatalf("got %q", got)
	}
	if _, ok := d.Metadata(); !ok {
		t.Fatal("Metadata not ok at exactly maxBytes")
	}
	d = NewReplyStream(len(content) - 1)
	if got := feedReplyPieces(t, d, content, []int{5, 17}); got != "0123456789" {
		t.Fatalf("reply not streamed past maxBytes: %q", got)
	}
	if !d.Structured() {
		t.Error("not structured")
	}
	if md, ok := d.Metadata(); ok || md != nil {
		t.Fatalf("Metadata past maxBytes = %s, %v", md, ok)
	}
}

func TestReplyStreamBroken(t *testing.T) {
	tests := []struct{ content, shown string }{
		{`{"reply":"ab\x"cd","intent":"q"}`, "ab"},
		{`{"reply":"ab\u12G4"}`, "ab"},
		{`{reply:"x"}`, ""},
		{`{"reply" "x"}`, ""},
		{`{"a":1 "reply":"x"}`, ""},
		{`{"reply":42,"x":"y"}`, ""},
		{`{"intent":"question"}`, ""},
		{`{"reply":"cut off`, "cut off"},
	}
	for _, tc := range tests {
		d := NewReplyStream(0)
		if got := feedReplyPieces(t, d, tc.content, []int{3}); got != tc.shown {
			t.Errorf("%s: shown %q, want %q", tc.content, got, tc.shown)
		}
		if !d.Structured() {
			t.Errorf("%s: not structured", tc.content)
		}
		if md, ok := d.Metadata(); ok {
			t.Errorf("%s: Metadata = %s", tc.content, md)
		}
	}
}

// Only the first top-level reply is shown (the one gjson reads too); the
// rest of the content is kept for Metadata.
func TestReplyStreamDuplicateReply(t *testing.T) {
	content := `{"reply":"first","reply":"second","intent":"question"}`
	d := NewReplyStream(0)
	if got := feedReplyPieces(t, d, content, nil); got != "first" {
		t.Fatalf("got %q", got)
	}
	reply, _, ok := SplitStructuredReply(content)
	if !ok || reply != "first" {
		t.Fatalf("SplitStructuredReply = %q, %v", reply, ok)
	}
	md, ok := d.Metadata()
	if !ok || gjson.GetBytes(md, "intent").Str != "question" {
		t.Fatalf("Metadata = %s, %v", md, ok)
	}
}

// A delta with no escape comes back without a copy.
func TestReplyStreamNoCopy(t *testing.T) {
	d := NewReplyStream(0)
	d.Feed(`{"reply":"`)
	allocs := testing.AllocsPerRun(100, func() {
		if d.Feed("plain text ") != "plain text " {
			t.Fatal("wrong output")
		}
	})
	if allocs != 0 {
		t.Errorf("allocs per Feed = %v", allocs)
	}
}

// benchStructuredReply is a typical structured answer: a Markdown reply with some
// escapes and non-ASCII text, then the metadata.
var benchStructuredReply = func() string {
	reply := strings.Repeat("Here is the **plan** for the meeting with Acme Corp — \"Q3 review\":\n"+
		"- Agenda: budget, hiring, the café launch\n- Time: Tuesday 2pm 😀\n\n", 12)
	b, _ := json.Marshal(map[string]any{"reply": reply})
	s := string(b[:len(b)-1])
	return s + `,"intent":"request","requires_user_action":true,"entities":[{"name":"Acme Corp","type":"organization"},` +
		`{"name":"Tuesday 2pm","type":"date"}],"topics":["meeting","planning"],` +
		`"scheduling_intent":{"detected":true,"datetime_mentioned":"Tuesday 2pm"}}`
}()

func BenchmarkReplyStream(b *testing.B) {
	var deltas []string
	for i := 0; i < len(benchStructuredReply); i += 5 {
		deltas = append(deltas, benchStructuredReply[i:min(i+5, len(benchStructuredReply))])
	}
	b.SetBytes(int64(len(benchStructuredReply)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		d := NewReplyStream(16 << 20)
		for _, delta := range deltas {
			n += len(d.Feed(delta))
		}
		if _, ok := d.Metadata(); !ok {
			b.Fatal("no metadata")
		}
	}
	b.ReportMetric(float64(len(deltas)), "feeds/op")
	_ = n
}

// BenchmarkReplyStreamFeed measures Feed alone, per delta.
func BenchmarkReplyStreamFeed(b *testing.B) {
	var deltas []string
	for i := 0; i < len(benchStructuredReply); i += 5 {
		deltas = append(deltas, benchStructuredReply[i:min(i+5, len(benchStructuredReply))])
	}
	b.ReportAllocs()
	d := NewReplyStream(16 << 20)
	i := 0
	for b.Loop() {
		if i == len(deltas) {
			b.StopTimer()
			d, i = NewReplyStream(16<<20), 0
			b.StartTimer()
		}
		d.Feed(deltas[i])
		i++
	}
}
