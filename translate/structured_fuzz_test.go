package translate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// replyCutsFrom turns fuzzer bytes into delta boundaries: each byte is the length
// of the next delta (0 to 15: empty deltas included); the rest goes whole.
func replyCutsFrom(n int, splits []byte) []int {
	var cuts []int
	p := 0
	for _, b := range splits {
		p += int(b % 16)
		if p > n {
			break
		}
		cuts = append(cuts, p)
	}
	return cuts
}

// FuzzReplyStream builds a structured answer around a reply string with
// encoding/json, places the reply among other fields (some of them nested
// decoys holding the same text under a "reply" key), feeds it in pieces and
// checks that the text shown is exactly the reply encoding/json decodes, and
// that Metadata is SplitStructuredReply's.
func FuzzReplyStream(f *testing.F) {
	f.Add("Hello **world**", []byte{1, 2, 3}, uint8(0), false)
	f.Add("Line one\nHe said \"hi\" 😀 café", []byte{5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, uint8(1), true)
	f.Add(`back\slash \/ "quoted" {braces} [brackets] "reply":`, []byte{1, 1, 1, 1, 1, 1, 1, 1}, uint8(2), false)
	f.Add("<html> & \u2028 \u2029 \x00 \x1f tab\t cr\r", []byte{7, 0, 3, 15, 2}, uint8(3), false)
	f.Add("日本語 😀😀 \xff invalid \xc3", []byte{1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2}, uint8(4), true)
	f.Add("", []byte{}, uint8(5), false)
	f.Add(strings.Repeat("long text ", 50), []byte{15, 14, 13, 12, 11}, uint8(6), true)
	f.Fuzz(func(t *testing.T, reply string, splits []byte, layout uint8, space bool) {
		var enc bytes.Buffer
		e := json.NewEncoder(&enc)
		e.SetEscapeHTML(layout&8 != 0)
		if err := e.Encode(reply); err != nil {
			t.Skip()
		}
		r := strings.TrimSuffix(enc.String(), "\n")
		fields := []string{
			`"intent":"question"`,
			`"entities":[{"name":` + r + `,"type":"person"},{"reply":` + r + `}]`,
			`"nested":{"reply":` + r + `,"deep":{"reply":"}{]["}}`,
			`"topics":["a","b"],"n":-1.5e3,"ok":true,"none":null`,
			`"scheduling_intent":{"detected":false,"datetime_mentioned":` + r + `}`,
		}
		pos := int(layout) % (len(fields) + 1)
		fields = append(fields[:pos], append([]string{`"reply":` + r}, fields[pos:]...)...)
		sep := ","
		if space {
			sep = " ,\n "
		}
		content := "{" + strings.Join(fields, sep) + "}"
		if space {
			content = " \n" + content + "\n"
		}

		var want struct{ Reply string }
		if err := json.Unmarshal([]byte(content), &want); err != nil {
			t.Fatalf("built invalid JSON %q: %v", content, err)
		}
		d := NewReplyStream(1 << 20)
		got := feedReplyPieces(t, d, content, replyCutsFrom(len(content), splits))
		if got != want.Reply {
			t.Fatalf("content %q: shown %q, want %q", content, got, want.Reply)
		}
		if !d.Structured() {
			t.Fatal("not structured")
		}
		md, ok := d.Metadata()
		split, wantMD, wantOK := SplitStructuredReply(content)
		if !ok || !wantOK || !bytes.Equal(md, wantMD) {
			t.Fatalf("Metadata = %s, %v; SplitStructuredReply = %s, %v", md, ok, wantMD, wantOK)
		}
		if split != want.Reply {
			t.Fatalf("SplitStructuredReply reply = %q, want %q", split, want.Reply)
		}
	})
}

// FuzzReplyStreamEscapes feeds raw string bodies (any escapes, surrogates
// valid or not) as the reply of {"reply":"…"}; whenever that is valid JSON,
// the text shown must be what encoding/json decodes.
func FuzzReplyStreamEscapes(f *testing.F) {
	f.Add(`caf\u00e9 \ud83d\ude00 \n\t\"\\\/\b\f\r`, []byte{1, 1, 1, 1, 1, 1})
	f.Add(`\ud83d\u0041 \ude00 \ud83d \ud83d\ud83d\ude00 \uDBFF\uDFFF`, []byte{3, 3, 3, 3, 3})
	f.Add(`\ud83d`, []byte{2})
	f.Add(`x\\u0041`, []byte{1, 2})
	f.Add("\xe2", []byte("0"))                                               // invalid UTF-8 is U+FFFD, as in encoding/json
	f.Add("a\xe2\x82\xacb \xf0\x9f\x98 \xed\xa0\x80", []byte{3, 1, 1, 1, 2}) // cut characters, broken ones
	f.Fuzz(func(t *testing.T, body string, splits []byte) {
		var want string // body must be exactly one JSON string's inside
		if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil {
			t.Skip()
		}
		content := `{"reply":"` + body + `","intent":"question"}`
		d := NewReplyStream(0)
		if got := feedReplyPieces(t, d, content, replyCutsFrom(len(content), splits)); got != want {
			t.Fatalf("content %q: shown %q, want %q", content, got, want)
		}
		if reply, _, ok := SplitStructuredReply(content); !ok || reply != want {
			t.Fatalf("SplitStructuredReply = %q, %v; want %q", reply, ok, want)
		}
	})
}
