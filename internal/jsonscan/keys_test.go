package jsonscan

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"
)

// testKeys are a chat stream's keys, as its protocol asks for them.
var testKeys = NewKeys("meta", "error", "tool_calls", "function_call", "name", "usage")

// scanKeys is the key scan of data with no event held before.
func scanKeys(t *Keys, data []byte) KeySet { return (&KeyScanner{Table: t}).Scan(data) }

// containsKeys is the key scan as bytes.Contains of each key, quoted,
// finds it.
func containsKeys(data []byte) (set KeySet) {
	for _, k := range testKeys.keys {
		if bytes.Contains(data, []byte(`"`+k.quoted)) {
			set |= k.flag
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
		if got, want := scanKeys(testKeys, []byte(c)), containsKeys([]byte(c)); got != want {
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
		if got, want := scanKeys(testKeys, b), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	}
}

func FuzzScanKeys(f *testing.F) {
	f.Add([]byte(`{"meta":{"tools_used":["x"]},"error":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanKeys(testKeys, b), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	})
}

// A KeyScanner finds what scanKeys finds in every event, whatever the event
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
		k := KeyScanner{Table: testKeys}
		for n := 0; n < 50; n++ {
			// A shape, or a shape with a tail of its own.
			ev := append([]byte(nil), shapes[rng.Intn(len(shapes))]...)
			if rng.Intn(2) == 0 {
				for j := rng.Intn(4); j > 0; j-- {
					ev = append(ev, words[rng.Intn(len(words))]...)
				}
			}
			if len(k.held) > 0 && CommonPrefix(ev, k.held) > testKeys.span {
				skipped++
			}
			if got, want := k.Scan(ev), scanKeys(testKeys, ev); got != want {
				t.Fatalf("after %q: scan(%q) = %b, scanKeys %b", k.held, ev, got, want)
			}
			if rng.Intn(3) > 0 {
				if held := k.Hold(ev); !bytes.Equal(held, ev) {
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
	k := KeyScanner{Table: testKeys}
	k.Scan(a)
	k.Hold(a)
	// The scan trusts what it found in the chunk it holds: its head held no
	// key, so it does not look at the head of the next. A key planted in
	// both heads after the fact is therefore not seen.
	planted := append([]byte(nil), b...)
	copy(planted[1:], `"meta"`)
	copy(k.held[1:], `"meta"`)
	if got := k.Scan(planted); got&1 != 0 {
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
		if got := CommonPrefix(a, b); got != want {
			t.Fatalf("CommonPrefix(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}

// Offer holds small events as Hold does, and no copy of a large one: the
// scan stays right after either, and what a stream keeps stays small.
func TestKeyScannerOffer(t *testing.T) {
	small := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`)
	large := []byte(`{"type":"message_stop","x":"` + strings.Repeat("a", maxOffer) + `","meta":{}}`)
	k := KeyScanner{Table: testKeys}
	for _, ev := range [][]byte{small, small, large, small, large, large, small} {
		if got, want := k.Scan(ev), scanKeys(testKeys, ev); got != want {
			t.Fatalf("scan(%.40q…) = %b, scanKeys %b", ev, got, want)
		}
		k.Offer(ev)
		if len(ev) <= maxOffer && !bytes.Equal(k.held, ev) {
			t.Fatalf("a small event is not held")
		}
		if cap(k.held) > maxOffer {
			t.Fatalf("a copy of %d bytes is kept", cap(k.held))
		}
	}
}
