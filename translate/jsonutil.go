package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

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
		return string(compactJSON(bytesView(v.Raw)))
	default:
		return v.Raw
	}
}

// appendStructuredResult appends raw with its text values made strings, in
// one pass over it whatever the number of values (each is written where it
// lies, not looked up again from the start). changed is false, and nothing
// is appended, when there is nothing to change or raw is not valid JSON.
// The arrays are found as gjson's Get finds them: the first member of each
// name.
func appendStructuredResult(dst, raw []byte) (out []byte, changed bool) {
	s := strView(raw)
	i := jsonscan.Space(s, 0)
	if i >= len(s) || s[i] != '{' || !jsonscan.Valid(s) {
		return dst, false
	}
	typ := gjson.Get(s, "type").Str // as fast as a walk, even past a long array
	w := srWriter{s: s, dst: dst}
	var first firstOf
	it := jsonscan.IterAt(s, i)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		switch {
		case (typ == "list" && first.is(k, "items", 0) || typ == "table" && first.is(k, "headers", 0)) && s[v] == '[':
			it.SkipTo(w.eachValue(v, (*srWriter).stringify))
		case typ == "table" && first.is(k, "rows", 1) && s[v] == '[':
			it.SkipTo(w.eachValue(v, (*srWriter).row))
		case typ == "key_value" && first.is(k, "entries", 0) && s[v] == '[':
			it.SkipTo(w.eachValue(v, (*srWriter).entry))
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
	ai := jsonscan.IterAt(w.s, a)
	for _, v, ok := ai.Next(); ok; _, v, ok = ai.Next() {
		end := jsonscan.SkipValue(w.s, v)
		fn(w, v, end)
		ai.SkipTo(end)
	}
	return ai.End()
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
	var first firstOf
	it := jsonscan.IterAt(w.s, v)
	for k, m, ok := it.Next(); ok; k, m, ok = it.Next() {
		if first.is(k, "key", 0) || first.is(k, "value", 1) {
			end := jsonscan.SkipValue(w.s, m)
			w.stringify(m, end)
			it.SkipTo(end)
		}
	}
}

// firstOf tells, of the members of one object, which is the first of its
// name, the one gjson's Get reads: slot i for the i-th name looked for.
type firstOf [2]bool

// is reports whether the raw key k names name and is the first to.
func (f *firstOf) is(k, name string, slot int) bool {
	if f[slot] || !jsonscan.KeyIs(k, name) {
		return false
	}
	f[slot] = true
	return true
}

// jsonObject parses s when it is valid JSON whose value is an object.
func jsonObject(s string) (gjson.Result, bool) {
	if !jsonscan.Valid(s) {
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
