package translate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// structuredEvent finds choice 0 and splices the new content in place; it
// must give what the previous version gave: the position of choice 0, then
// sjson.SetBytes on "choices.N.delta.content", and GetMany for carriesMore.
func refChoiceZero(s string) int {
	pos, found := 0, -1
	gjson.Get(s, "choices").ForEach(func(_, c gjson.Result) bool {
		if idx := c.Get("index"); !idx.Exists() || (idx.Type == gjson.Number && idx.Num == 0) {
			found = pos
			return false
		}
		pos++
		return true
	})
	return found
}

func refCarriesMore(s, prefix string) bool {
	for _, v := range gjson.GetMany(s, prefix+".delta.role", prefix+".finish_reason", "usage", prefix+".delta.tool_calls", "choices.1") {
		if v.Exists() && v.Type != gjson.Null {
			return true
		}
	}
	return false
}

func checkSplice(t *testing.T, data []byte, text string) {
	s := strView(data)
	pos := refChoiceZero(s)
	choice, ok := choiceZero(s)
	if ok != (pos >= 0) {
		t.Fatalf("%s: choiceZero found %v, reference position %d", data, ok, pos)
	}
	if !ok {
		return
	}
	prefix := "choices." + strconv.Itoa(pos)
	if got, want := carriesMore(s, choice), refCarriesMore(s, prefix); got != want {
		t.Fatalf("%s: carriesMore %v, want %v", data, got, want)
	}
	c := choice.Get("delta.content")
	if c.Type != gjson.String {
		if gjson.Get(s, prefix+".delta.content").Type == gjson.String {
			t.Fatalf("%s: content not found", data)
		}
		return
	}
	want, err := sjson.SetBytes(append([]byte(nil), data...), prefix+".delta.content", text)
	got, ok := appendReplaced(nil, data, c.Index, c.Raw, text)
	if err != nil || !ok {
		t.Fatalf("%s: sjson error %v, splice ok %v", data, err, ok)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s with %q:\n got %s\nwant %s", data, text, got, want)
	}
}

var spliceSeeds = []string{
	`{"id":"c","choices":[{"index":0,"delta":{"content":"{\"reply\":\"Hel"},"finish_reason":null}]}`,
	`{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"role":"assistant","content":"y"}}],"usage":null}`,
	`{"choices":[{"delta":{"content":"no index","tool_calls":[]}}],"usage":{"total_tokens":3}}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"dup"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":7}}]}`,
	`{ "choices" : [ { "index" : 0 , "delta" : { "content" : "spaced" } } ] }`,
}

func TestStructuredSplice(t *testing.T) {
	for _, s := range spliceSeeds {
		for _, text := range []string{"", "Hello", `with "quotes" and \ and <html> & é`, "\x01\u2028"} {
			checkSplice(t, []byte(s), text)
		}
	}
}

func FuzzStructuredSplice(f *testing.F) {
	for _, s := range spliceSeeds {
		f.Add([]byte(s), "Hello <b>")
	}
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		if !gjson.ValidBytes(data) {
			return // objectEvent only sees chunks that start like an object; gjson on invalid JSON is unspecified
		}
		checkSplice(t, data, text)
	})
}

func TestMarshalString(t *testing.T) {
	for _, s := range []string{"", "plain", "\b\f\x01<>&\u2028\u2029\xff\"\\é", "\xe2\x80", "日本語 \t\n\r"} {
		want, _ := json.Marshal(s)
		if got := jsonscan.AppendStringHTML(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}

func FuzzMarshalString(f *testing.F) {
	f.Add("\b\f<é\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsonscan.AppendStringHTML(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
