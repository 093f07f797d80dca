package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

func TestAppendString(t *testing.T) {
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
		if got := string(AppendString(nil, c.in)); got != c.want {
			t.Errorf("AppendString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if got := string(AppendStringHTML(nil, "\b\f\x01<&>")); got != `"\b\f\u0001\u003c\u0026\u003e"` {
		t.Errorf("AppendStringHTML = %s, want json.Marshal's short \\b and \\f", got)
	}
	if got := string(AppendString([]byte("x="), "y")); got != `x="y"` {
		t.Errorf("AppendStringing does not append: %s", got)
	}
}

// AppendStringing must agree with encoding/json on the decoded value for
// any input, valid UTF-8 or not.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "é", "😀", "\u2028", "<", "&", "\xe2\x82", "\t"}
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			sb.WriteString(alphabet[rng.Intn(len(alphabet))])
		}
		s := sb.String()
		enc := AppendString(nil, s)
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

func TestEqual(t *testing.T) {
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
		// A number past float64's range is compared as its text; others
		// by the float64 they read as.
		{`{"a":1e400}`, `{ "a": 1e400 }`, true},
		{`[1e400]`, `[2e400]`, false},
		{`[1e400]`, `[1]`, false},
		{`[12345678901234567890]`, `[12345678901234567891]`, true},
		{`[-0]`, `[0.0]`, true},
	}
	for _, c := range cases {
		if got := Equal([]byte(c.a), []byte(c.b)); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v", c.a, c.b, got)
		}
		if got := Equal([]byte(c.b), []byte(c.a)); got != c.eq {
			t.Errorf("Equal(%s, %s) = %v (swapped)", c.b, c.a, got)
		}
	}
}

// AppendString writes, byte for byte, what encoding/json writes (without
// HTML escaping, or with it in html mode), for text with long plain runs
// (where plainRun skips eight bytes at a time) broken by every kind of
// byte at every offset. (\b and \f, which the two write differently
// outside html mode, are in TestAppendString.)
func TestAppendStrSameAsEncodingJSON(t *testing.T) {
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
		if got, want := AppendString(nil, s), bytes.TrimSuffix(enc.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
		if got, want := StringLen(s), len(AppendString(nil, s)); got != want {
			t.Fatalf("StringLen(%q) = %d, AppendString writes %d", s, got, want)
		}
		want, _ := json.Marshal(s)
		if got := AppendStringHTML(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q, html) = %s, json.Marshal %s", s, got, want)
		}
	}
}

// plainRun never passes a byte that is not plain and never returns
// short of where it started, for every length from 8 to 24, every start,
// and one or two bytes of each kind at every place (before the start too,
// where the last word's bytes are read again); over plain text it reaches
// the end. (After a stop it may return early at a plain byte: the caller
// looks at each byte it stops at.)
func TestPlainRunNeverPassesAStop(t *testing.T) {
	kinds := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff}
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	check := func(b []byte) {
		s := string(b)
		allPlain := !bytes.ContainsFunc(b, func(r rune) bool { return r >= 0x80 || !plain(byte(r)) })
		for i := 0; i <= len(s); i++ {
			r := plainRun(s, i)
			stop := i
			for stop < len(s) && plain(s[stop]) {
				stop++
			}
			if r < i || r > stop || (allPlain && r != len(s)) {
				t.Fatalf("plainRun(%q, %d) = %d, first byte not plain at %d", s, i, r, stop)
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

// FuzzAppendUnescaped holds AppendUnescaped to encoding/json on every
// valid literal of valid UTF-8 (invalid bytes are kept, where encoding/json
// writes U+FFFD), and Escape, told that s is cut anywhere, to either its
// answer on the whole literal or a request to wait for more.
func FuzzAppendUnescaped(f *testing.F) {
	f.Add(`caf\u00e9 \ud83d\ude00 \n\t\"\\\/\b\f\r`, uint8(9))
	f.Add(`\ud83d\u0041 \ude00 \ud83d \ud83d\ud83d\ude00 \uDBFF\uDFFF`, uint8(7))
	f.Add(`\ud83d`, uint8(3))
	f.Add(`\ud83d\n`, uint8(7))
	f.Fuzz(func(t *testing.T, lit string, cut uint8) {
		var want string
		if !utf8.ValidString(lit) || json.Unmarshal([]byte(`"`+lit+`"`), &want) != nil {
			t.Skip()
		}
		if got := string(AppendUnescaped(nil, lit)); got != want {
			t.Fatalf("AppendUnescaped(%q) = %q, want %q", lit, got, want)
		}
		i := strings.IndexByte(lit, '\\')
		if i < 0 {
			return
		}
		r, n := Escape(lit, i, false)
		end := i + 1 + int(cut)%(len(lit)-i)
		switch cr, cn := Escape(lit[:end], i, true); {
		case cn == 0 && n > 0:
		case cn != n || cr != r:
			t.Fatalf("Escape(%q, %d) = %q, %d; cut at %d: %q, %d", lit, i, r, n, end, cr, cn)
		}
	})
}

// Number reads a value as gjson reads a number, whatever follows it.
func TestNumberAsGjson(t *testing.T) {
	for _, v := range []string{"0", "7", "-1", "-0", "123456789012345", "1234567890123456", "99999999999999999999",
		"1.5", "0.25", "1e3", "1E-2", "-2.5e+3", `"12"`, "true", "null", "[1]", "{}"} {
		for _, after := range []string{"", "}", ",", " ", "\n", "]"} {
			doc := `[` + v + after
			got, ok := Number(doc, 1)
			r := gjson.Parse(v)
			if want := r.Num; ok != (r.Type == gjson.Number) || ok && got != want {
				t.Errorf("Number(%q, 1) = %v, %v; gjson %v, %v", doc, got, ok, want, r.Type)
			}
		}
	}
}
