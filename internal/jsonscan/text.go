package jsonscan

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// shortEscape is the letter of each control character's short escape.
var shortEscape = [0x20]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// AppendString appends s as a JSON string: no HTML escaping, invalid UTF-8
// replaced by U+FFFD, like encoding/json with SetEscapeHTML(false), but
// for \b and \f spelt \u0008 and \u000c, as encoding/json did before Go
// 1.22.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, false) }

// AppendStringHTML is AppendString as json.Marshal (and so sjson) writes
// a string: < > & escaped, \b and \f short.
func AppendStringHTML(dst []byte, s string) []byte { return appendString(dst, s, true) }

func appendString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if !html && len(s) >= 8 {
			if i = plainRun(s, i); i == len(s) {
				break
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c < 0x20 && shortEscape[c] != 0 && (html || c != '\b' && c != '\f'): // \b \f: json.Marshal's
				dst = append(dst, '\\', shortEscape[c])
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 are valid JSON but break JavaScript string literals.
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// StringLen is the length of what AppendString writes for s.
func StringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// A plain byte tested first: most bytes are.
			switch {
			case c >= 0x20 && c != '"' && c != '\\':
				n++
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			default:
				n += 6
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// plainRun returns the index of the first byte at or after s[i] that a
// JSON string cannot hold as it is (a quote, a backslash, a control
// character) or that may start a multi-byte sequence (0x80 and above),
// looking eight bytes at a time; len(s) >= 8. It returns len(s) only when
// every byte from s[i] on is plain. It may also stop at a plain byte that
// follows one the caller has already handled (in the last word, a stop
// before s[i] can flag the byte after it), so the caller looks at every
// byte it stops at. A reply's text is mostly such bytes: this is what
// keeps a converted stream's deltas from being encoded one byte at a time.
func plainRun(s string, i int) int {
	const hi = 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		if m := stringStops(x) | x&hi; m != 0 { // and the bytes of 0x80 and above
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i == len(s) {
		return i
	}
	// The last few bytes, in the word that ends s (len(s) >= 8): its bytes
	// before i were read above and are left out of the mask. A text delta
	// is a few words long, so this spares most of them a byte loop.
	last := len(s) - 8
	x := load64(s, last)
	if m := (stringStops(x) | x&hi) &^ (1<<(uint(i-last)*8) - 1); m != 0 {
		return last + bits.TrailingZeros64(m)>>3
	}
	return len(s)
}

// AppendUnescaped appends the text of lit, the inside of a valid JSON
// string literal, decoded as encoding/json does (Escape). Bytes that are
// not valid UTF-8 are kept; AppendString replaces them when the text is
// written out again.
func AppendUnescaped(dst []byte, lit string) []byte {
	for i := 0; i < len(lit); {
		j := strings.IndexByte(lit[i:], '\\')
		if j < 0 {
			return append(dst, lit[i:]...)
		}
		dst = append(dst, lit[i:i+j]...)
		i += j
		if i+1 < len(lit) {
			if c := unescaped[lit[i+1]]; c != 0 { // the usual escapes, without a call
				dst = append(dst, c)
				i += 2
				continue
			}
		}
		r, n := Escape(lit, i, false)
		if n <= 0 {
			return dst // cannot happen in a valid literal
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst
}

// Escape decodes the escape at s[i] (its backslash) as encoding/json does:
// the character it stands for and how many bytes it takes. A \u escape of a
// high surrogate takes the low one's that follows it; a surrogate that is
// not part of a pair is U+FFFD. n is 0 when s ends inside the escape, or,
// when s is cut (more text follows it), when it ends where the low half of
// a high surrogate could still come; n is -1 when it is no JSON escape.
func Escape(s string, i int, cut bool) (r rune, n int) {
	if i+1 >= len(s) {
		return 0, 0
	}
	if c := unescaped[s[i+1]]; c != 0 {
		return rune(c), 2
	}
	if s[i+1] != 'u' {
		return 0, -1
	}
	r, n = hex4(s, i+2)
	switch {
	case n <= 0:
		return 0, n
	case !utf16.IsSurrogate(r):
		return r, 6
	case r >= 0xDC00: // a low half first
		return utf8.RuneError, 6
	}
	rest := s[i+6:]
	if cut && (rest == "" || rest == `\`) {
		return 0, 0
	}
	if len(rest) >= 2 && rest[:2] == `\u` {
		lo, m := hex4(rest, 2)
		if m == 0 && cut {
			return 0, 0
		}
		if pair := utf16.DecodeRune(r, lo); m > 0 && pair != utf8.RuneError {
			return pair, 12
		}
	}
	return utf8.RuneError, 6
}

// hex4 reads the four hex digits at s[i:]: n is 4, 0 when s ends before
// them, -1 at a byte that is no hex digit.
func hex4(s string, i int) (r rune, n int) {
	for k := i; k < i+4; k++ {
		if k >= len(s) {
			return 0, 0
		}
		c := s[k]
		if !isHex(c) {
			return 0, -1
		}
		// A digit's value is its low four bits; a letter's (0x41 and up,
		// either case) those plus 9.
		r = r<<4 | rune(c&0xF+9*(c>>6))
	}
	return r, 4
}

// unescaped is the byte each one-byte escape \e of a JSON string stands
// for (\n: a newline), 0 where e makes no such escape (\u is four hex
// digits more).
var unescaped = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// Number reads the value at s[i] of a valid document as gjson reads a
// number (strconv.ParseFloat; a plain integer of up to 15 digits directly,
// read where it is found), ok false when it is not one.
func Number(s string, i int) (float64, bool) {
	if i >= len(s) || s[i] != '-' && (s[i] < '0' || s[i] > '9') {
		return 0, false
	}
	// A digit by one unsigned test: one branch, not two.
	n, j, end := 0, i, min(len(s), i+16)
	for ; j < end && s[j]-'0' <= 9; j++ {
		n = n*10 + int(s[j]-'0')
	}
	if j > i && j-i <= 15 && (j == len(s) || s[j] != '.' && s[j] != 'e' && s[j] != 'E') {
		return float64(n), true
	}
	f, _ := strconv.ParseFloat(s[i:SkipValue(s, i)], 64) // ±Inf at worst, as in gjson
	return f, true
}

// Equal reports whether two JSON texts hold the same value (numbers by
// value, object key order ignored).
func Equal(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	va, okA := decodeByValue(a)
	vb, okB := decodeByValue(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// decodeByValue decodes the JSON text b with each number a float64 when
// it parses as one (compared by value), else a json.Number (compared as
// its text).
func decodeByValue(b []byte) (v any, ok bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil, false
	}
	return numbersByValue(v), true
}

func numbersByValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbersByValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbersByValue(e)
		}
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}
