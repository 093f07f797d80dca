package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// Edits of a valid JSON document planned in one pass (as cuts of a
// jsonPlan, json_plan.go), where a path-based edit per element (sjson)
// would copy the whole document once per element: a reply with a hundred
// thousand choices, each with its own meta, is then a hundred thousand
// copies.

// cutChoiceMetas plans the removal of the meta of the choices whose indices
// idx lists (ascending) from p.body, a valid JSON object: byte for byte
// what sjson.DeleteBytes(doc, "choices.<i>.meta") makes of it for each i in
// turn, in one pass over it. As in sjson, "choices" is the first member of
// that name; i is the i-th element of an array, or the first member named
// i of an object; meta is the first member of that name of the element,
// when it is an object; the member goes as cutMember says.
func (p *jsonPlan) cutChoiceMetas(idx []int) {
	s := strView(p.body)
	root := jsonscan.Space(s, 0)
	if len(idx) == 0 || root >= len(s) || s[root] != '{' {
		return
	}
	v, _, ok := jsonscan.FindMember(s, root, "choices")
	if !ok || (s[v] != '[' && s[v] != '{') {
		return
	}
	p.reserve(len(idx))
	it := jsonscan.IterAt(s, v)
	if s[v] == '[' {
		n, i := 0, 0
		for _, c, ok := it.Next(); ok && i < len(idx); _, c, ok = it.Next() {
			if n == idx[i] {
				i++
				if s[c] == '{' {
					it.SkipTo(p.cutMember(s, c, "meta"))
				}
			}
			n++
		}
		return
	}
	want := make(map[int]bool, len(idx))
	for _, i := range idx {
		want[i] = true
	}
	for k, c, ok := it.Next(); ok && len(want) > 0; k, c, ok = it.Next() {
		n, isIndex := indexKey(k)
		if !isIndex || !want[n] {
			continue
		}
		delete(want, n) // only the first member of that name
		if s[c] == '{' {
			it.SkipTo(p.cutMember(s, c, "meta"))
		}
	}
}

// cutMember plans the removal of the first member named key of the object
// at s[o], as sjson deletes a member, and returns where the object ends:
// the member goes with the comma before it, or, when it comes first, with
// the white space before it and the comma after it.
func (p *jsonPlan) cutMember(s string, o int, key string) int {
	it := jsonscan.IterAt(s, o)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if !jsonscan.KeyIs(k, key) {
			continue
		}
		end := jsonscan.SkipValue(s, v)
		// The key's opening quote: the last quote before the value that
		// no backslash escapes (keys hold no raw quote).
		ks := v - 1
		for s[ks] != ':' {
			ks--
		}
		ks = lastUnescapedQuote(s, ks)
		q := ks - 1
		for jsonscan.IsSpace(s[q]) {
			q--
		}
		from, to := q, end // after a comma: the comma to the end of the value
		if s[q] == '{' {
			from = q + 1
			if c := jsonscan.Space(s, end); c < len(s) && s[c] == ',' {
				to = c + 1
			}
		}
		p.cut(from, to, nil, cutAdd)
		it.SkipTo(to)
		for _, _, ok := it.Next(); ok; _, _, ok = it.Next() {
		}
		return it.End()
	}
	return it.End()
}

// lastUnescapedQuote returns the index of the opening quote of the key
// whose colon is at s[colon].
func lastUnescapedQuote(s string, colon int) int {
	i := colon - 1
	for s[i] != '"' { // the closing quote
		i--
	}
	for i--; i > 0; i-- {
		if s[i] == '"' && s[i-1] != '\\' {
			return i
		}
	}
	return i
}

// indexKey reads a key as the index i whose path part strconv.Itoa(i) it
// matches (a key with escapes is decoded first, as gjson compares keys).
func indexKey(k string) (int, bool) {
	if strings.IndexByte(k, '\\') >= 0 {
		k = decodeJSONString(`"` + k + `"`)
	}
	if k == "" || len(k) > 9 || (k[0] == '0' && len(k) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// sameMeta reports whether meta, the merged meta (at most max_meta_bytes),
// says what top, the reply's own top-level meta, says, so that the reply
// can go as it came. Equal bytes, or equal once white space is taken out,
// answer at once; otherwise the two are decoded and compared as values,
// but only when top is not far larger than meta: a top-level meta of
// megabytes decoded into maps would take several times its size (SPEC 8.1),
// and one that large cannot say the same as a bounded meta unless it
// repeats its keys, which the rewritten meta then says once.
func sameMeta(top string, meta []byte) bool {
	if top == string(meta) {
		return true
	}
	c := compactJSON(bytesView(top))
	if string(c) == string(meta) {
		return true
	}
	if len(c) > 4*len(meta)+4096 {
		return false
	}
	return jsonscan.Equal(c, meta)
}
