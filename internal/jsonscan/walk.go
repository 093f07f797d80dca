package jsonscan

import (
	"math/bits"
	"strings"
)

// Walks over a document already checked by Valid: with validity known,
// finding a key or passing over a value needs no parsing, only the string
// and nesting boundaries. The document is a string the caller does not
// change while it walks. A function that looks for a key compares it as
// its text (KeyIs): a key spelt with escapes is decoded. Iter hands over
// the raw key.

// IsSpace reports JSON's insignificant white space.
func IsSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// Space returns the index of the first byte from i that is not JSON white
// space.
func Space(s string, i int) int {
	// Most calls find no space at all: one comparison tells (every JSON
	// space is at most ' ').
	for i < len(s) && s[i] <= ' ' && IsSpace(s[i]) {
		i++
	}
	return i
}

// TrimSpace returns s without the JSON white space around it.
func TrimSpace(s string) string {
	for len(s) > 0 && IsSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && IsSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// SkipString returns the index just past the string whose opening quote
// is at s[i]. Its bytes are passed over eight at a time up to the next
// quote or backslash (as validString does), with no call: short strings
// and strings dense with escapes (tool arguments) go fastest that way.
// After 32 bytes with neither (a reply's text), skipLongString takes over.
func SkipString(s string, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i++
	for {
		n := 0
		for ; i+8 <= len(s); n++ {
			if n == 4 {
				return skipLongString(s, i)
			}
			x := load64(s, i)
			q := x ^ (lo * '"')
			b := x ^ (lo * '\\')
			// The mask flags its lowest matching byte exactly.
			if m := ((q-lo)&^q | (b-lo)&^b) & hi; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
			i += 8
		}
		for i < len(s) && s[i] != '"' && s[i] != '\\' {
			i++
		}
		if i >= len(s) {
			return len(s) // not reached in a valid document
		}
	found:
		if s[i] == '"' {
			return i + 1
		}
		i += 2 // a backslash and the byte it escapes
	}
}

// skipLongString is SkipString from s[i], inside a string and not just
// after a backslash: the next quote is found by IndexByte, which is
// vectorised, and an escaped one is told by the backslashes before it.
func skipLongString(s string, i int) int {
	for {
		k := strings.IndexByte(s[i:], '"')
		if k < 0 {
			return len(s) // not reached in a valid document
		}
		q := i + k
		// The quote closes the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for j := q - 1; j >= i && s[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// SkipValue returns the index just past the value that starts at s[i].
func SkipValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return SkipString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = SkipString(s, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// A number, true, false or null: up to the next delimiter.
	for i < len(s) {
		switch s[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i
		}
		i++
	}
	return i
}

// Iter reads the members of an object, or the values of an array, of a
// valid document one at a time. A value the caller does not read is passed
// over when it asks for the next one; a value it read itself (with another
// Iter, to its end) is not read again (SkipTo).
type Iter struct {
	s   string
	i   int // where to look for the next member, once the current value is passed
	k   int // start of the current member's key (its quote)
	v   int // start of the current value; -1 once passed
	obj bool
}

// IterAt starts reading the object or array at s[i].
func IterAt(s string, i int) Iter { return Iter{s: s, i: i + 1, v: -1, obj: s[i] == '{'} }

// Next moves to the next member: its raw key ("" in an array; as it lies
// between its quotes) and where its value starts. At the end ok is false
// and End says where the container ends.
func (it *Iter) Next() (key string, v int, ok bool) {
	s, i := it.s, it.i
	if it.v >= 0 {
		i = SkipValue(s, it.v)
		it.v = -1
	}
	i = Space(s, i)
	if i < len(s) && s[i] == ',' {
		i = Space(s, i+1)
	}
	if i >= len(s) || s[i] == '}' || s[i] == ']' {
		it.i = i + 1
		return "", 0, false
	}
	if it.obj {
		it.k = i
		ke := SkipString(s, i)
		key = s[i+1 : ke-1]
		i = Space(s, Space(s, ke)+1) // past ':'
	}
	it.v = i
	return key, i, true
}

// KeyAt is where the current member's key starts: its opening quote.
func (it *Iter) KeyAt() int { return it.k }

// SkipTo says that the current value ends at end: the caller read it.
func (it *Iter) SkipTo(end int) { it.i, it.v = end, -1 }

// End is, once Next said there is no more, the index just past the
// container.
func (it *Iter) End() int { return it.i }

// KeyIs reports whether the raw key k (as it lies between its quotes)
// names key.
func KeyIs(k, key string) bool {
	if strings.IndexByte(k, '\\') < 0 {
		return k == key
	}
	if len(k) > 6*len(key) { // an escape spells at least one byte in six
		return false
	}
	var buf [64]byte
	return string(AppendUnescaped(buf[:0], k)) == key
}

// FindMember returns the bounds of the value of the first member named key of
// the object at s[i], in a valid document.
func FindMember(s string, i int, key string) (v, end int, ok bool) {
	it := IterAt(s, i)
	for k, v, more := it.Next(); more; k, v, more = it.Next() {
		if KeyIs(k, key) {
			return v, SkipValue(s, v), true
		}
	}
	return 0, 0, false
}

// ObjectValue returns the raw value of key at the top level of obj, a
// valid JSON object (white space around it allowed), or "" when obj has
// no such key.
func ObjectValue(obj, key string) string {
	i := Space(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ""
	}
	if v, end, ok := FindMember(obj, i, key); ok {
		return obj[v:end]
	}
	return ""
}
