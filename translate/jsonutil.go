package translate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
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
// It returns raw itself when nothing needs to change.
func StringifyStructuredResult(raw []byte) []byte {
	sr := gjson.ParseBytes(raw)
	if !sr.IsObject() {
		return raw
	}
	var paths []string
	var vals []gjson.Result
	collect := func(path string, v gjson.Result) {
		if v.Exists() && v.Type != gjson.String {
			paths = append(paths, path)
			vals = append(vals, v)
		}
	}
	eachIndex := func(arr gjson.Result, fn func(i int, v gjson.Result)) {
		i := 0
		arr.ForEach(func(_, v gjson.Result) bool {
			fn(i, v)
			i++
			return true
		})
	}
	switch sr.Get("type").Str {
	case "list":
		if items := sr.Get("items"); items.IsArray() {
			eachIndex(items, func(i int, v gjson.Result) { collect("items."+strconv.Itoa(i), v) })
		}
	case "table":
		if h := sr.Get("headers"); h.IsArray() {
			eachIndex(h, func(i int, v gjson.Result) { collect("headers."+strconv.Itoa(i), v) })
		}
		if rows := sr.Get("rows"); rows.IsArray() {
			eachIndex(rows, func(i int, row gjson.Result) {
				if row.IsArray() {
					eachIndex(row, func(j int, v gjson.Result) {
						collect("rows."+strconv.Itoa(i)+"."+strconv.Itoa(j), v)
					})
				}
			})
		}
	case "key_value":
		if entries := sr.Get("entries"); entries.IsArray() {
			eachIndex(entries, func(i int, e gjson.Result) {
				if e.IsObject() {
					p := "entries." + strconv.Itoa(i) + "."
					collect(p+"key", e.Get("key"))
					collect(p+"value", e.Get("value"))
				}
			})
		}
	}
	if len(paths) == 0 {
		return raw
	}
	out := append([]byte(nil), raw...)
	for i, p := range paths {
		next, err := sjson.SetBytes(out, p, valueAsString(vals[i]))
		if err != nil {
			return raw
		}
		out = next
	}
	return out
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
