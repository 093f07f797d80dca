package translate

import (
	"math/bits"
	"strings"
)

// A walk over a JSON document already checked by ValidJSON: with validity
// known, finding a key or passing over a value needs no parsing, only the
// string and nesting boundaries. It answers a few paths of a JSON reply in
// one pass, where gjson's Get and ForEach scan each choice again for every
// path: the tool names of a reply with more of them than the index of
// json_index.go holds, the edits of json_edit.go, the events of streams.
//
// The document is a string (unsafeString of the caller's bytes: nothing is
// kept). Keys are compared as their raw bytes, so the walk is only exact for
// documents without \u escapes (the callers check); other escapes cannot
// spell the keys looked for.

// isJSONSpace reports JSON's insignificant white space.
func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// walkSpace returns the index of the first byte from i that is not JSON
// white space.
func walkSpace(s string, i int) int {
	// Most calls find no space at all: one comparison tells (every JSON
	// space is at most ' ').
	for i < len(s) && s[i] <= ' ' && isJSONSpace(s[i]) {
		i++
	}
	return i
}

// walkString returns the index just past the string whose opening quote is
// at s[i]. Its bytes are passed over eight at a time up to the next quote
// or backslash (as validString does), with no call: short strings and
// strings dense with escapes (tool arguments) go fastest that way. After 32
// bytes with neither (a reply's text), walkLongString takes over.
func walkString(s string, i int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i++
	for {
		n := 0
		for ; i+8 <= len(s); n++ {
			if n == 4 {
				return walkLongString(s, i)
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

// walkLongString is walkString from s[i], inside a string and not just
// after a backslash: the next quote is found by IndexByte, which is
// vectorised, and an escaped one is told by the backslashes before it.
func walkLongString(s string, i int) int {
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

// walkValue returns the index just past the value that starts at s[i].
func walkValue(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '"':
		return walkString(s, i)
	case '{', '[':
		depth := 0
		for i < len(s) {
			switch s[i] {
			case '"':
				i = walkString(s, i)
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

// jsonIter reads the members of an object, or the values of an array, of a
// valid document one at a time. A value the caller does not read is passed
// over when it asks for the next one; a value it read itself (with another
// jsonIter, to its end) is not read again (skipTo).
type jsonIter struct {
	s   string
	i   int // where to look for the next member, once the current value is passed
	v   int // start of the current value; -1 once passed
	obj bool
}

// iterAt starts reading the object or array at s[i].
func iterAt(s string, i int) jsonIter { return jsonIter{s: s, i: i + 1, v: -1, obj: s[i] == '{'} }

// next moves to the next member: its raw key ("" in an array) and where its
// value starts. At the end ok is false and it.i is just past the closing
// bracket.
func (it *jsonIter) next() (key string, v int, ok bool) {
	s, i := it.s, it.i
	if it.v >= 0 {
		i = walkValue(s, it.v)
		it.v = -1
	}
	i = walkSpace(s, i)
	if i < len(s) && s[i] == ',' {
		i = walkSpace(s, i+1)
	}
	if i >= len(s) || s[i] == '}' || s[i] == ']' {
		it.i = i + 1
		return "", 0, false
	}
	if it.obj {
		ke := walkString(s, i)
		key = s[i+1 : ke-1]
		i = walkSpace(s, walkSpace(s, ke)+1) // past ':'
	}
	it.v = i
	return key, i, true
}

// skipTo says that the current value ends at end: the caller read it.
func (it *jsonIter) skipTo(end int) { it.i, it.v = end, -1 }

// walkPath returns the bounds of the value at the dotted path (given as its
// keys) from the object at s[i], found as gjson's Get finds it: the members
// named path[0] are tried in order, and the first through which the rest
// of the path leads wins (a repeated key whose first copy lacks the rest
// does not hide the next copy). ok is false when there is none.
func walkPath(s string, i int, path []string) (v, end int, ok bool) {
	if i >= len(s) || s[i] != '{' {
		return 0, 0, false
	}
	it := iterAt(s, i)
	for k, vs, more := it.next(); more; k, vs, more = it.next() {
		if k != path[0] {
			continue
		}
		if len(path) == 1 {
			return vs, walkValue(s, vs), true
		}
		if v, end, ok = walkPath(s, vs, path[1:]); ok {
			return v, end, true
		}
	}
	return 0, 0, false
}

var pathName = []string{"name"}

// toolWalk finds the tool names of a valid JSON reply in one pass over it
// (see walkToolNames).
type toolWalk struct {
	s              string
	calls, funcs   bool
	meta           *Meta // gains the names
	tcDone, fcDone bool  // this choice's tool_calls and function_call.name found
	fcV, fcEnd     int   // bounds of this choice's function_call.name
}

// walkToolNames adds to meta each tool name of a valid JSON reply whose
// first top-level "choices" has its value at s[v], in the order
// RewriteJSONReply takes them (as the index finds them while it validates
// a reply with fewer): for each choice, the names of
// message.tool_calls[*].function.name, then message.function_call.name,
// each found as gjson's Get finds it (the first tool_calls member of the
// message copies in document order; the first function copy with a name).
// Each byte of choices is read about once.
func walkToolNames(s string, v int, calls, funcCall bool, meta *Meta) {
	w := toolWalk{s: s, calls: calls, funcs: funcCall, meta: meta}
	if s[v] == '[' || s[v] == '{' { // gjson's ForEach visits an object's values too
		ci := iterAt(s, v)
		for _, c, ok := ci.next(); ok; _, c, ok = ci.next() {
			if s[c] == '{' {
				ci.skipTo(w.choice(c))
			}
		}
	}
}

// choice reads the choice object at c and returns where it ends.
func (w *toolWalk) choice(c int) int {
	s := w.s
	w.tcDone, w.fcDone, w.fcV = !w.calls, !w.funcs, -1
	it := iterAt(s, c)
	for k, m, ok := it.next(); ok; k, m, ok = it.next() {
		if k == "message" && s[m] == '{' && !(w.tcDone && w.fcDone) {
			it.skipTo(w.message(m))
		}
	}
	if w.fcV >= 0 {
		w.name(w.fcV, w.fcEnd)
	}
	return it.i
}

// message reads a message object and returns where it ends.
func (w *toolWalk) message(m int) int {
	s := w.s
	it := iterAt(s, m)
	for k, v, ok := it.next(); ok; k, v, ok = it.next() {
		switch {
		case !w.tcDone && k == "tool_calls":
			w.tcDone = true
			if s[v] == '[' {
				it.skipTo(w.toolCalls(v))
			}
		case !w.fcDone && k == "function_call":
			// Rare: the name is found by path, from this copy.
			if nv, ne, ok := walkPath(s, v, pathName); ok {
				w.fcDone, w.fcV, w.fcEnd = true, nv, ne
			}
		}
	}
	return it.i
}

// toolCalls reads a tool_calls array, adding each function.name, and
// returns where it ends.
func (w *toolWalk) toolCalls(a int) int {
	s := w.s
	ai := iterAt(s, a)
	for _, call, ok := ai.next(); ok; _, call, ok = ai.next() {
		if s[call] != '{' {
			continue
		}
		found := false
		it := iterAt(s, call)
		for k, f, ok := it.next(); ok; k, f, ok = it.next() {
			if found || k != "function" || s[f] != '{' {
				continue
			}
			fi := iterAt(s, f)
			for k, n, ok := fi.next(); ok; k, n, ok = fi.next() {
				if !found && k == "name" {
					found = true
					end := walkValue(s, n)
					w.name(n, end)
					fi.skipTo(end)
				}
			}
			it.skipTo(fi.i)
		}
		ai.skipTo(it.i)
	}
	return ai.i
}

// name adds the name whose value lies at s[v:end] when it is a string.
func (w *toolWalk) name(v, end int) {
	s := w.s
	if s[v] != '"' {
		return
	}
	raw := s[v+1 : end-1]
	if strings.IndexByte(raw, '\\') >= 0 {
		w.meta.AddTool(decodeJSONString(s[v:end]))
	} else {
		w.meta.AddTool(raw) // AddTool keeps a copy
	}
}
