package translate

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// scanKeys must find exactly what the six bytes.Contains it replaces find.
func containsKeys(data []byte) (set keySet) {
	for bit, k := range map[keySet]string{keyMeta: `"meta"`, hasToolCall: `"tool_calls"`, hasFuncCall: `"function_call"`, keyError: `"error"`, hasName: `"name"`, hasUsage: `"usage"`} {
		if bytes.Contains(data, []byte(k)) {
			set |= bit
		}
	}
	return set
}

func TestScanKeys(t *testing.T) {
	cases := []string{
		``, `"`, `"meta`, `"meta"`, `{"meta":{}}`, `x"error"`, `"tool_calls"`, `"function_call"`,
		`{"content":"\"meta\""}`, `""""""""meta"`, `"tool_call"`, `"function_calls"`,
		`{"id":"c","choices":[{"delta":{"tool_calls":[{"function":{"name":"f"}}]}}],"meta":{},"error":{}}`,
		`{"usage":{}}`, `"usage`, `"usag"`,
	}
	for _, c := range cases {
		if got, want := scanKeys([]byte(c), &chatProtocol.keyTable), containsKeys([]byte(c)); got != want {
			t.Errorf("scanKeys(%q) = %b, want %b", c, got, want)
		}
	}
	rng := rand.New(rand.NewSource(2))
	words := []string{`"`, `meta`, `name`, `tool_calls`, `function_call`, `error`, `usage`, `x`, `\`, `{`, `:`, ` `}
	for n := 0; n < 50000; n++ {
		var b []byte
		for k := rng.Intn(12); k > 0; k-- {
			b = append(b, words[rng.Intn(len(words))]...)
		}
		if got, want := scanKeys(b, &chatProtocol.keyTable), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	}
}

func FuzzScanKeys(f *testing.F) {
	f.Add([]byte(`{"meta":{"tools_used":["x"]},"error":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanKeys(b, &chatProtocol.keyTable), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	})
}

func TestStartsObject(t *testing.T) {
	for s, want := range map[string]bool{``: false, `{`: true, " \t\r\n{": true, ` [`: false, `x{`: false, "\v{": false} {
		if got := startsObject([]byte(s)); got != want {
			t.Errorf("startsObject(%q) = %v", s, got)
		}
	}
}

// deltaToolNames, behind the scanKeys look-up, must find what the two #
// queries it replaces found behind bytes.Contains("tool_calls") and
// bytes.Contains("function_call"). (Keys spelt with \u escapes are not
// looked for, before or after.)
func refToolNames(s string) []string {
	var names []string
	add := func(_, n gjson.Result) bool {
		if n.Type == gjson.String {
			names = append(names, n.Str)
		}
		return true
	}
	if strings.Contains(s, `"tool_calls"`) {
		gjson.Get(s, "choices.#.delta.tool_calls.#.function.name").ForEach(func(_, ns gjson.Result) bool {
			ns.ForEach(add)
			return true
		})
	}
	if strings.Contains(s, `"function_call"`) {
		gjson.Get(s, "choices.#.delta.function_call.name").ForEach(add)
	}
	return names
}

func newToolNames(s string) []string {
	var names []string
	keys := scanKeys([]byte(s), &chatProtocol.keyTable)
	if keys&(hasToolCall|hasFuncCall) != 0 && keys&hasName != 0 {
		deltaToolNames(s, keys, func(n string) { names = append(names, n) })
	}
	return names
}

var toolNameSeeds = []string{
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"get_weather","arguments":""}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"name\":1}"}}]}}]}`,
	`{"choices":[{"delta":{"function_call":{"name":"legacy"}}},{"delta":{"tool_calls":[{"function":{"name":"b"}},{"function":{"name":"c"}}]}}]}`,
	`{"choices":{"a":{"delta":{"tool_calls":[{"function":{"name":"obj"}}]}}}}`,
	`{"choices":[{"delta":{"tool_calls":{"function":{"name":"notarray"}}}}]}`,
	`{"choices":[{"delta":{"tool_calls":[1,{"function":[{"name":"x"}]},{"function":{"name":7}},{"function":{"name":"ok"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a"}}],"function_call":{"name":"z"}}}]}`,
}

func TestDeltaToolNames(t *testing.T) {
	for _, s := range toolNameSeeds {
		if got, want := newToolNames(s), refToolNames(s); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", s, got, want)
		}
	}
}

func FuzzDeltaToolNames(f *testing.F) {
	for _, s := range toolNameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, `\u`) || !gjson.Valid(s) {
			// Escaped keys are not looked for either way (but gjson may see
			// them); on invalid JSON what gjson finds is unspecified.
			return
		}
		if got, want := newToolNames(s), refToolNames(s); !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %q\nwant %q", s, got, want)
		}
	})
}

// A keyScanner finds what scanKeys finds in every event, whatever the event
// it compares with shares with it: events made of a few shapes, so that
// they share long beginnings, with keys at any place, some of them as
// the place where the two part.
func TestKeyScannerSameAsScanKeys(t *testing.T) {
	words := []string{`{"id":"chatcmpl-1","object":"chat.completion.chunk",`, `"choices":[{"delta":{"content":"`,
		`"meta"`, `"name"`, `"tool_calls"`, `"function_call"`, `"error"`, `"usage"`, `"`, `m`, `x`, `xxxxxxxx`, `:`,
		`"meta`, `"function_call`, `"function_cal`, `"tool_calls`, `"usag`} // keys cut short: they may end where two events part
	rng := rand.New(rand.NewSource(9))
	var shapes [][]byte
	for n := 0; n < 6; n++ {
		var b []byte
		for k := rng.Intn(10); k > 0; k-- {
			b = append(b, words[rng.Intn(len(words))]...)
		}
		shapes = append(shapes, b)
	}
	skipped := 0
	for run := 0; run < 200; run++ {
		k := keyScanner{table: &chatProtocol.keyTable}
		for n := 0; n < 50; n++ {
			// A shape, or a shape with a tail of its own.
			ev := append([]byte(nil), shapes[rng.Intn(len(shapes))]...)
			if rng.Intn(2) == 0 {
				for j := rng.Intn(4); j > 0; j-- {
					ev = append(ev, words[rng.Intn(len(words))]...)
				}
			}
			if len(k.held) > 0 && commonPrefix(ev, k.held) > chatProtocol.keyTable.span {
				skipped++
			}
			if got, want := k.scan(ev), scanKeys(ev, &chatProtocol.keyTable); got != want {
				t.Fatalf("after %q: scan(%q) = %b, scanKeys %b", k.held, ev, got, want)
			}
			if rng.Intn(3) > 0 {
				if held := k.hold(ev); !bytes.Equal(held, ev) {
					t.Fatalf("hold(%q) = %q", ev, held)
				}
			}
		}
	}
	if skipped < 500 {
		t.Errorf("only %d events shared enough with the one held to be skipped in part", skipped)
	}
}

// The key scan skips the head a chunk repeats: what it looks at of a
// stream's second chunk starts near where the two chunks part.
func TestKeyScannerSkipsRepeatedHead(t *testing.T) {
	a := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"delta":{"content":"Hi"}}]}`)
	b := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"m","choices":[{"delta":{"content":"there"}}]}`)
	k := keyScanner{table: &chatProtocol.keyTable}
	k.scan(a)
	k.hold(a)
	// The scan trusts what it found in the chunk it holds: its head held no
	// key, so it does not look at the head of the next. A key planted in
	// both heads after the fact is therefore not seen.
	planted := append([]byte(nil), b...)
	copy(planted[1:], `"meta"`)
	copy(k.held[1:], `"meta"`)
	if got := k.scan(planted); got&keyMeta != 0 {
		t.Errorf("a key in the repeated head was looked at again (%b): the head is not skipped", got)
	}
}

func TestCommonPrefix(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for n := 0; n < 20000; n++ {
		a := make([]byte, rng.Intn(40))
		rng.Read(a)
		b := append([]byte(nil), a[:rng.Intn(len(a)+1)]...)
		if rng.Intn(2) == 0 {
			b = append(b, byte(rng.Intn(4)))
		}
		want := 0
		for want < min(len(a), len(b)) && a[want] == b[want] {
			want++
		}
		if got := commonPrefix(a, b); got != want {
			t.Fatalf("commonPrefix(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}

// offer holds small events as hold does, and no copy of a large one: the
// scan stays right after either, and what a stream keeps stays small.
func TestKeyScannerOffer(t *testing.T) {
	small := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)
	large := []byte(`{"type":"message_stop","x":"` + strings.Repeat("a", maxOffer) + `","meta":{}}`)
	k := keyScanner{table: &chatProtocol.keyTable}
	for _, ev := range [][]byte{small, small, large, small, large, large, small} {
		if got, want := k.scan(ev), scanKeys(ev, &chatProtocol.keyTable); got != want {
			t.Fatalf("scan(%.40q…) = %b, scanKeys %b", ev, got, want)
		}
		k.offer(ev)
		if len(ev) <= maxOffer && !bytes.Equal(k.held, ev) {
			t.Fatalf("a small event is not held")
		}
		if cap(k.held) > maxOffer {
			t.Fatalf("a copy of %d bytes is kept", cap(k.held))
		}
	}
}
