package jsonscan

import (
	"math/bits"
	"math/rand"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// validJSONSeeds cover the grammar at each point where a validator can go
// wrong: white space, empty and nested containers, every escape, strings
// around the eight-byte steps, numbers, literals cut short, trailing bytes.
var validJSONSeeds = []string{
	``, ` `, `{}`, `[]`, ` { } `, "\t[\r\n]\n", `{`, `}`, `[`, `]`, `{]`, `[}`, `[[]`, `[]]`,
	`1`, `-`, `-0`, `-01`, `01`, `0.`, `0.5`, `.5`, `1e`, `1e+`, `1E-7`, `1.5e10`, `-1.0E+2`, `1 2`, `1x`,
	`true`, `tru`, `truex`, `false`, `fals`, `null`, `nul`, `nullnull`, `True`,
	`""`, `"`, `"abc`, `"a\"b"`, `"\\"`, `"\/\b\f\n\r\t"`, `"\x"`, `"\u00e9"`, `"\u00E9"`, `"\u00g9"`, `"\u12"`, `"\`,
	"\"a\tb\"", "\"a\x01b\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é — ☃\"",
	`"1234567"`, `"12345678"`, `"123456789"`, `"1234567\"90abcdef"`, `"12345678901234\\"`, `"123456789012345\\"`,
	"\"12345678901234\x00\"", "\"1234567 !#\x1f\"", "\"  !!##  \x20\x21\x23\x5b\x5d\"", "\"\x02\x22", `"abcdefghijklmnopqrstuvwxyz\u0041BCDEFGHIJKLMNOP"`,
	`{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1,"b":[1,2,{"c":null}]}`,
	`[1,]`, `[,1]`, `[1,,2]`, `[1 2]`, `[1,2]`, ` [ 1 , 2 ] `, `{"a":[{"b":[{"c":{}}]}]}`, `{"":""}`,
	`{"choices":[{"message":{"tool_calls":[{"function":{"name":"x","arguments":"{\"q\":1}"}}]}}]}`,
	`{"a":1}x`, `{"a":1} `, `{"a":1}}`, `[]{}`,
}

func TestValidMatchesGJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		if got, want := Valid(s), gjson.Valid(s); got != want {
			t.Errorf("Valid(%q) = %v, gjson.Valid says %v", s, got, want)
		}
	}
}

// TestValidDeepNesting: nesting is kept on a slice, not the stack, so a
// body of nothing but brackets is read to its end and answered.
func TestValidDeepNesting(t *testing.T) {
	const depth = 1 << 20
	if Valid(strings.Repeat("[", depth)) {
		t.Fatal("unclosed brackets are valid")
	}
	if !Valid(strings.Repeat("[", depth) + strings.Repeat("]", depth)) {
		t.Fatal("balanced brackets are not valid")
	}
	if !Valid(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)) {
		t.Fatal("nested objects are not valid")
	}
	if Valid(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("]", depth)) {
		t.Fatal("objects closed by ] are valid")
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Valid(s), gjson.Valid(s); got != want {
			t.Fatalf("Valid(%q) = %v, gjson.Valid says %v", s, got, want)
		}
	})
}

// BenchmarkValid: a JSON reply with tool calls and one with 4 KB of
// content, against gjson.Valid.
func BenchmarkValid(b *testing.B) {
	tools := `{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_Qx1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris, France\",\"unit\":\"c\"}"}},` +
		`{"id":"call_Qx2","type":"function","function":{"name":"get_markets","arguments":"{\"limit\":5,\"sort\":\"volume\"}"}}]},` +
		`"logprobs":null,"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120},"system_fingerprint":"fp_0ba0d124f1"}`
	text := `{"id":"chatcmpl-1","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat(`The hottest markets right now are the 2028 election (62% for the favourite), \"the Fed cut\" and more.\n`, 40) +
		`"},"finish_reason":"stop"}],"usage":{"prompt_tokens":48,"completion_tokens":800,"total_tokens":848}}`
	for _, c := range []struct{ name, doc string }{{"tool_calls", tools}, {"text_4k", text}} {
		if !Valid(c.doc) || !gjson.Valid(c.doc) {
			b.Fatalf("%s: not valid", c.name)
		}
		b.Run(c.name+"/Valid", func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			for b.Loop() {
				Valid(c.doc)
			}
		})
		b.Run(c.name+"/gjson.Valid", func(b *testing.B) {
			b.SetBytes(int64(len(c.doc)))
			for b.Loop() {
				gjson.Valid(c.doc)
			}
		})
	}
}

// TestStringStopsFirstByte: the lowest byte stringStops flags in a word is
// the first quote, backslash or control character, whatever the other
// bytes are (below 0x20, 0x20–0x22, 0x5c, 0x80 and above, the bytes around
// each), and a word with none of them is not flagged at all. Every byte
// value at every offset, among several fillers, then words drawn at random
// from the bytes near the edges of each test.
func TestStringStopsFirstByte(t *testing.T) {
	first := func(w []byte) int {
		for i, c := range w {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return 8
	}
	check := func(w []byte) {
		t.Helper()
		got := 8
		if m := stringStops(load64(string(w), 0)); m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := first(w); got != want {
			t.Fatalf("stringStops(% x): first stop at %d, want %d", w, got, want)
		}
	}
	fillers := []byte{'a', ' ', '!', '#', '[', ']', 0x7f, 0x80, 0xa1, 0xdc, 0xff}
	w := make([]byte, 8)
	for _, f := range fillers {
		for pos := range 8 {
			for b := range 256 {
				for i := range w {
					w[i] = f
				}
				w[pos] = byte(b)
				check(w)
			}
		}
	}
	edges := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7f, 0x80, 0x81, 0x9f, 0xa0, 0xa1, 0xa2, 0xa3, 0xdc, 0xfe, 0xff, 'a'}
	rng := rand.New(rand.NewSource(9))
	for range 200000 {
		for i := range w {
			w[i] = edges[rng.Intn(len(edges))]
		}
		check(w)
	}
}
