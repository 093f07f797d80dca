package translate

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

const fuzzMaxLine = 64

// validTextParts is an independent reading of SPEC 5.1 for the fuzzer: the
// concatenated texts of the valid 0: parts of a data stream, decoded by
// encoding/json.
func validTextParts(in []byte) string {
	var b strings.Builder
	for i, line := range bytes.Split(in, []byte("\n")) {
		if i == 0 {
			line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > fuzzMaxLine || !bytes.HasPrefix(line, []byte("0:")) {
			continue
		}
		var s string
		if !json.Valid(line[2:]) || json.Unmarshal(line[2:], &s) != nil {
			continue
		}
		b.WriteString(s)
	}
	return b.String()
}

var generatedID = regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]{24}"`)

func FuzzDataStream(f *testing.F) {
	for _, s := range []string{
		mixedStream,
		"0:\"a\"\n0:\"b\"",
		"0:\"\\ud83d\\ude00 \\ud800 x\"\r\n3:\"e\"\n",
		"f:{\"messageId\":\"m\"}\n2:[{\"type\":\"reasoning\",\"confidence\":1e400}]\nd:{\"finishReason\":\"stop\",\"usage\":{\"promptTokens\":1e30}}\n",
		"0:\"\xff\xfe invalid utf8\"\n0:\"\u2028\"\n",
		"\xEF\xBB\xBF0:\"bom\"\n",
		"0:\"" + strings.Repeat("long", 20) + "\"\n0:\"short\"\n",
		"9:{\"toolName\":\"t\"}\nb:{\"toolName\":\"\"}\n8:[1,2,3]\ng:\"r\"\n",
	} {
		f.Add([]byte(s), int64(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed int64) {
		opts := ConvertOptions{Model: "m", Created: 1, MaxLine: fuzzMaxLine, HustleSummary: true}

		var whole bytes.Buffer
		wholeOpts := withRecord(opts)
		c := NewDataStreamConverter(&whole, wholeOpts)
		c.Write(in)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}

		var pieces bytes.Buffer
		piecesOpts := withRecord(opts)
		c = NewDataStreamConverter(&pieces, piecesOpts)
		rng := rand.New(rand.NewSource(seed))
		for b := in; len(b) > 0; {
			n := min(1+rng.Intn(9), len(b))
			c.Write(b[:n])
			b = b[n:]
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		out := withMetaEvent(whole.String(), wholeOpts.Reply)
		w := generatedID.ReplaceAllString(out, `"id":"X"`)
		p := generatedID.ReplaceAllString(withMetaEvent(pieces.String(), piecesOpts.Reply), `"id":"X"`)
		if w != p {
			t.Fatalf("whole and in pieces differ:\n%q\n%q", w, p)
		}

		if !strings.HasSuffix(out, "data: [DONE]\n\n") {
			t.Fatalf("output does not end with [DONE]: %q", out)
		}
		var content strings.Builder
		events := strings.SplitAfter(out, "\n\n")
		for i, ev := range events {
			if ev == "" {
				continue
			}
			if !strings.HasPrefix(ev, "data: ") || !strings.HasSuffix(ev, "\n\n") || strings.Count(ev, "\n") != 2 {
				t.Fatalf("event %d is not one data line: %q", i, ev)
			}
			data := ev[len("data: ") : len(ev)-2]
			if data == "[DONE]" {
				if i != len(events)-2 { // the last element is the empty rest
					t.Fatalf("[DONE] is not last: %q", out)
				}
				continue
			}
			if !json.Valid([]byte(data)) {
				t.Fatalf("event data is not valid JSON: %q", data)
			}
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content *string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(data), &chunk); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != nil {
				content.WriteString(*chunk.Choices[0].Delta.Content)
			}
		}
		if got, want := content.String(), validTextParts(in); got != want {
			t.Fatalf("content %q, want %q (input %q)", got, want, in)
		}
	})
}

// FuzzUIStream: any bytes in any pieces never panic, give one-line events
// whose data is JSON or [DONE], [DONE] exactly once and last, and the same
// output whole or in pieces.
func FuzzUIStream(f *testing.F) {
	f.Add([]byte(mixedUIStream), int64(1))
	f.Add([]byte(sse(uiStart, `{"type":"text-delta","delta":"a\ud83d\ude00\u2028"}`, `{"type":"data-x","data":[1,{"type":"reasoning"}]}`, `[DONE]`, `x`)), int64(2))
	f.Add([]byte("data: {\"type\":\"finish\",\"usage\":{\"inputTokens\":1e308}}\r\r: c\ndata:[DONE]"), int64(3))
	f.Fuzz(func(t *testing.T, in []byte, seed int64) {
		opts := ConvertOptions{Model: "m", Created: 1, MaxLine: fuzzMaxLine * 2, HustleSummary: true}
		var whole, pieces bytes.Buffer
		wholeOpts, piecesOpts := withRecord(opts), withRecord(opts)
		c := NewUIStreamConverter(&whole, wholeOpts)
		c.Write(in)
		c.Close()
		c = NewUIStreamConverter(&pieces, piecesOpts)
		rng := rand.New(rand.NewSource(seed))
		for b := in; len(b) > 0; {
			n := min(1+rng.Intn(9), len(b))
			c.Write(b[:n])
			b = b[n:]
		}
		c.Close()
		out := withMetaEvent(whole.String(), wholeOpts.Reply)
		w := generatedID.ReplaceAllString(out, `"id":"X"`)
		p := generatedID.ReplaceAllString(withMetaEvent(pieces.String(), piecesOpts.Reply), `"id":"X"`)
		if w != p {
			t.Fatalf("whole and in pieces differ:\n%q\n%q", w, p)
		}
		if !strings.HasSuffix(out, "data: [DONE]\n\n") || strings.Count(out, "data: [DONE]\n\n") != 1 {
			t.Fatalf("[DONE] not once and last: %q", out)
		}
		for _, ev := range strings.SplitAfter(strings.TrimSuffix(out, "data: [DONE]\n\n"), "\n\n") {
			if ev == "" {
				continue
			}
			if !strings.HasPrefix(ev, "data: ") || strings.Count(ev, "\n") != 2 || !json.Valid([]byte(ev[6:len(ev)-2])) {
				t.Fatalf("bad event %q", ev)
			}
		}
	})
}

// FuzzObjectValue checks the allocation-free key look-up against gjson: for
// every top-level key of a valid object, the raw value of its first
// occurrence.
func FuzzObjectValue(f *testing.F) {
	for _, s := range []string{
		`{"type":"text-delta","delta":"x"}`,
		` { "a" : [1,{"b":"}"}] , "t\u0079pe" : "e\"s\\c" , "n":-1.5e3,"z":null,"a":2 } `,
		`{"":{},"x":"\\","y":true}`,
		`{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) || !gjson.Valid(s) {
			return
		}
		v := gjson.Parse(s)
		if !v.IsObject() {
			if got := jsonscan.ObjectValue(s, "a"); got != "" {
				t.Fatalf("objectValue of a non-object %q = %q", s, got)
			}
			return
		}
		seen := map[string]bool{}
		v.ForEach(func(k, val gjson.Result) bool {
			if !seen[k.Str] {
				seen[k.Str] = true
				if got := jsonscan.ObjectValue(s, k.Str); got != val.Raw {
					t.Fatalf("jsonscan.ObjectValue(%q, %q) = %q, want %q", s, k.Str, got, val.Raw)
				}
			}
			return true
		})
		if !seen["\x00absent"] && jsonscan.ObjectValue(s, "\x00absent") != "" {
			t.Fatalf("objectValue found an absent key in %q", s)
		}
	})
}

// FuzzUIDeltaAsSent holds the one-pass reading of a delta part to the
// general one: whenever it reads s, s is valid JSON whose first type is
// the part it says and whose first value under the part's delta key is the
// literal it returns.
func FuzzUIDeltaAsSent(f *testing.F) {
	for _, s := range uiDeltaShapes {
		f.Add(s.event)
	}
	f.Fuzz(func(t *testing.T, s string) {
		part, raw, esc, ok := uiDeltaAsSent(s)
		if !ok {
			return
		}
		if esc != strings.Contains(raw, `\`) {
			t.Fatalf("%q: escape %v in %s", s, esc, raw)
		}
		p := uiDeltaParts[part]
		key := strings.Trim(p.deltaKey, `,":`)
		if !jsonscan.Valid(s) || jsonscan.ObjectValue(s, "type") != `"`+p.typ+`"` || jsonscan.ObjectValue(s, key) != raw {
			t.Fatalf("%q read as %s %s: valid %v, type %s, %s %s", s, p.typ, raw, jsonscan.Valid(s), jsonscan.ObjectValue(s, "type"), key, jsonscan.ObjectValue(s, key))
		}
	})
}

// uiDeltaShapes: which events the one-pass reading takes (the others are
// read the general way).
var uiDeltaShapes = []struct {
	event string
	ok    bool
}{
	{`{"type":"text-delta","id":"0","delta":"Hello"}`, true},
	{`{"type":"reasoning-delta","id":"r-1","delta":"hm"}`, true},
	{`{"type":"text-delta","id":"t\"1","delta":"a\nb\u00e9\ud83d\ude00"}`, true},
	{`{"type":"text-delta","id":"","delta":""}`, true},
	{`{"type":"text-delta","id":"0","delta":"caf` + "\xc3\xa9" + `"}`, true},
	{`{"type":"text-delta","id":"0","delta":"x"} `, false},
	{`{"type":"text-delta","id":"0","delta":"x","providerMetadata":{}}`, false},
	{`{"type":"text-delta","delta":"x"}`, false},
	{`{"type":"text-delta","id":"0","delta":"x"`, false},
	{`{"type":"text-delta","id":"0","delta":"x"}}`, false},
	{`{"type":"text-delta","id":"0","delta":"a` + "\n" + `"}`, false},
	{`{"type":"text-delta","id":"0","delta":"\x"}`, false},
	{`{"type":"text-delta","id":"0\u12","delta":"x"}`, false},
	{`{"type":"text-delta","id":0,"delta":"x"}`, false},
	{`{"type":"text-delta","id":"0","delta":1}`, false},
	{`{"type":"text-delta","id":"0", "delta":"x"}`, false},
	{`{"type":"text-deltas","id":"0","delta":"x"}`, false},
	{`{"type":"tool-input-delta","id":"0","delta":"x"}`, false},
	{`{"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"{\"city\":"}`, true},
	{`{"type":"tool-input-delta","toolCallId":"call_1","delta":"x"}`, false},
	{`{"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"x","providerExecuted":true}`, false},
}

func TestUIDeltaAsSent(t *testing.T) {
	for _, c := range uiDeltaShapes {
		if _, _, _, ok := uiDeltaAsSent(c.event); ok != c.ok {
			t.Errorf("%s: read in one pass %v, want %v", c.event, ok, c.ok)
		}
	}
	part, raw, _, _ := uiDeltaAsSent(`{"type":"reasoning-delta","id":"r","delta":"a\"b"}`)
	if uiDeltaParts[part].field != "reasoning_content" || raw != `"a\"b"` {
		t.Errorf("reasoning delta read as %s %s", uiDeltaParts[part].field, raw)
	}
}
