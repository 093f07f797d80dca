package translate

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// unsafeString views b as a string without copying. The string must not
// outlive b or be kept past the next change of b: it is only for gjson
// look-ups whose results are used at once.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func jsonCompact(dst *bytes.Buffer, src []byte) error { return json.Compact(dst, src) }

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: no HTML escaping, invalid
// UTF-8 replaced by U+FFFD, like encoding/json with SetEscapeHTML(false).
func appendJSONString(dst []byte, s string) []byte { return appendJSONStr(dst, s, false) }

// appendJSONStr is appendJSONString; with html set it writes what
// json.Marshal (and so sjson) writes: < > & escaped, \b and \f short.
func appendJSONStr(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if !html && len(s) >= 8 {
			if i = plainJSONRun(s, i); i == len(s) {
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
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b', '\f':
				switch {
				case html && c == '\b': // json.Marshal's short forms
					dst = append(dst, '\\', 'b')
				case html:
					dst = append(dst, '\\', 'f')
				default:
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				}
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
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

// plainJSONRun returns the index of the first byte at or after s[i] that a
// JSON string cannot hold as it is (a quote, a backslash, a control
// character) or that may start a multi-byte sequence (0x80 and above),
// looking eight bytes at a time; len(s) >= 8. It returns len(s) only when
// every byte from s[i] on is plain. It may also stop at a plain byte that
// follows one the caller has already handled (in the last word, a stop
// before s[i] can flag the byte after it), so the caller looks at every
// byte it stops at. A reply's text is mostly such bytes: this is what
// keeps a converted stream's deltas from being encoded one byte at a time.
func plainJSONRun(s string, i int) int {
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

// JSONString returns s encoded as a JSON string.
func JSONString(s string) []byte { return appendJSONString(nil, s) }

// valueAsString is the text form SPEC 4.1 gives a structured_result value:
// strings as they are, numbers and booleans as their JSON text, null as "",
// objects and arrays as compact JSON.
func valueAsString(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Null:
		return ""
	case gjson.JSON:
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(v.Raw)); err == nil {
			return b.String()
		}
		return v.Raw
	default:
		return v.Raw
	}
}

// StringifyStructuredResult makes the values of a structured_result that a
// UI renders as text into strings (SPEC 4.1): the items of a list, the
// headers and cells of a table, each entry's key and value of a key_value.
// It returns raw itself when nothing needs to change (or raw is not valid
// JSON).
func StringifyStructuredResult(raw []byte) []byte {
	if out, changed := appendStructuredResult(nil, raw); changed {
		return out
	}
	return raw
}

// appendStructuredResult appends raw with its text values made strings, in
// one pass over it whatever the number of values (each is written where it
// lies, not looked up again from the start). changed is false, and nothing
// is appended, when there is nothing to change or raw is not valid JSON.
// The arrays are found as gjson's Get finds them: the first member of each
// name.
func appendStructuredResult(dst, raw []byte) (out []byte, changed bool) {
	s := unsafeString(raw)
	i := walkSpace(s, 0)
	if i >= len(s) || s[i] != '{' || !ValidJSON(s) {
		return dst, false
	}
	typ := ""
	if v, end, ok := walkMember(s, i, "type"); ok && s[v] == '"' {
		typ = decodeJSONString(s[v:end])
	}
	w := srWriter{s: s, dst: dst}
	var seen [2]bool // the first member of each name is the one read
	first := func(k, name string, slot int) bool {
		if seen[slot] || !keyIs(k, name) {
			return false
		}
		seen[slot] = true
		return true
	}
	it := iterAt(s, i)
	for k, v, ok := it.next(); ok; k, v, ok = it.next() {
		switch {
		case typ == "list" && first(k, "items", 0) && s[v] == '[':
			it.skipTo(w.eachValue(v, (*srWriter).stringify))
		case typ == "table" && first(k, "headers", 0) && s[v] == '[':
			it.skipTo(w.eachValue(v, (*srWriter).stringify))
		case typ == "table" && first(k, "rows", 1) && s[v] == '[':
			it.skipTo(w.eachValue(v, (*srWriter).row))
		case typ == "key_value" && first(k, "entries", 0) && s[v] == '[':
			it.skipTo(w.eachValue(v, (*srWriter).entry))
		}
	}
	if !w.changed {
		return dst, false
	}
	return append(w.dst, s[w.last:]...), true
}

// srWriter copies a structured_result, replacing values as it goes: dst
// holds s up to last, with the replacements made so far.
type srWriter struct {
	s       string
	dst     []byte
	last    int
	changed bool
}

// eachValue calls fn with the bounds of each value of the array at a and
// returns where the array ends.
func (w *srWriter) eachValue(a int, fn func(w *srWriter, v, end int)) int {
	ai := iterAt(w.s, a)
	for _, v, ok := ai.next(); ok; _, v, ok = ai.next() {
		end := walkValue(w.s, v)
		fn(w, v, end)
		ai.skipTo(end)
	}
	return ai.i
}

// stringify replaces the value at s[v:end], unless it is a string, by its
// text (SPEC 4.1), written the way sjson writes a string.
func (w *srWriter) stringify(v, end int) {
	if w.s[v] == '"' {
		return
	}
	w.dst = append(w.dst, w.s[w.last:v]...)
	w.dst = appendSJSONString(w.dst, valueAsString(gjson.Parse(w.s[v:end])))
	w.last, w.changed = end, true
}

// row stringifies the cells of a table row, when it is an array.
func (w *srWriter) row(v, _ int) {
	if w.s[v] == '[' {
		w.eachValue(v, (*srWriter).stringify)
	}
}

// entry stringifies the key and value of a key_value entry, when it is an
// object: the first member of each name.
func (w *srWriter) entry(v, _ int) {
	if w.s[v] != '{' {
		return
	}
	var seenKey, seenValue bool
	it := iterAt(w.s, v)
	for k, m, ok := it.next(); ok; k, m, ok = it.next() {
		switch {
		case !seenKey && keyIs(k, "key"):
			seenKey = true
		case !seenValue && keyIs(k, "value"):
			seenValue = true
		default:
			continue
		}
		end := walkValue(w.s, m)
		w.stringify(m, end)
		it.skipTo(end)
	}
}

// keyIs reports whether the raw key k (as it lies between its quotes)
// names key.
func keyIs(k, key string) bool {
	if strings.IndexByte(k, '\\') < 0 {
		return k == key
	}
	return decodeJSONString(`"`+k+`"`) == key
}

// walkMember returns the bounds of the value of the first member named key
// of the object at s[i], in a valid document.
func walkMember(s string, i int, key string) (v, end int, ok bool) {
	it := iterAt(s, i)
	for k, v, more := it.next(); more; k, v, more = it.next() {
		if keyIs(k, key) {
			return v, walkValue(s, v), true
		}
	}
	return 0, 0, false
}

// jsonEqual reports whether two JSON texts hold the same value (numbers by
// value, object key order ignored).
func jsonEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	return equalValues(va, vb)
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalValues(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, e1 := x.Float64()
		fy, e2 := y.Float64()
		return e1 == nil && e2 == nil && fx == fy
	default:
		return a == b
	}
}

// jsonObject parses s when it is valid JSON whose value is an object.
func jsonObject(s string) (gjson.Result, bool) {
	if !ValidJSON(s) {
		return gjson.Result{}, false
	}
	root := gjson.Parse(s)
	return root, root.IsObject()
}

// eventType is gjson.Get(s, "type").Str for an event's JSON object, read
// directly when "type" is the object's first key and its value a string
// without escapes, as Responses and Anthropic events are sent: there the
// generic look-up cost as much as the rest of a pass-through event.
func eventType(s string) string {
	const head = `{"type":"`
	if strings.HasPrefix(s, head) {
		v := s[len(head):]
		if j := strings.IndexByte(v, '"'); j >= 0 && strings.IndexByte(v[:j], '\\') < 0 {
			return v[:j]
		}
	}
	return gjson.Get(s, "type").Str
}

// unsafeBytes views s as bytes without copying; the bytes must not be changed.
func unsafeBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func trimJSONSpace(s string) string {
	for len(s) > 0 && isJSONSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isJSONSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// appendUnescaped appends the text of lit, the inside of a valid JSON string
// literal, decoded as encoding/json does: a \u escape of a surrogate that is
// not part of a pair becomes U+FFFD. Bytes that are not valid UTF-8 are kept;
// appendJSONString replaces them when the text is written out again.
func appendUnescaped(dst []byte, lit string) []byte {
	for i := 0; i < len(lit); {
		j := strings.IndexByte(lit[i:], '\\')
		if j < 0 {
			return append(dst, lit[i:]...)
		}
		dst = append(dst, lit[i:i+j]...)
		i += j
		if i+1 >= len(lit) {
			return dst // cannot happen in a valid literal
		}
		e := lit[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(lit, i)
			if !ok {
				return dst
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 <= len(lit) && lit[i] == '\\' && lit[i+1] == 'u' {
					r2, ok = hex4(lit, i+2)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// objectValue returns the raw JSON value of key at the top level of obj, a
// valid JSON object, or "" when obj has no such key. Unlike gjson it never
// decodes the strings it passes over, so it costs no allocation.
func objectValue(obj, key string) string {
	i := walkSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ""
	}
	i++
	for {
		i = walkSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return ""
		}
		kEnd := walkString(obj, i)
		k := obj[i+1 : kEnd-1]
		i = walkSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return ""
		}
		i = walkSpace(obj, i+1)
		vEnd := walkValue(obj, i)
		if k == key || strings.IndexByte(k, '\\') >= 0 && string(appendUnescaped(nil, k)) == key {
			return obj[i:vEnd]
		}
		i = walkSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return ""
		}
		i++
	}
}
