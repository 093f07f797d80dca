package translate

import "bytes"

// A walk over a JSON document already checked by gjson.Valid: with validity
// known, finding a key or passing over a value needs no parsing, only the
// string and nesting boundaries. It answers the few paths of a JSON reply
// that are looked up on every request (the tool names) in one pass, where
// gjson's Get and ForEach scan each choice again for every path.
//
// Keys are compared as their raw bytes, so the walk is only exact for
// documents without \u escapes (the callers check); other escapes cannot
// spell the keys looked for.

// walkSpace returns the index of the first byte from i that is not JSON
// white space.
func walkSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// walkString returns the index just past the string whose opening quote is
// at b[i].
func walkString(b []byte, i int) int {
	i++
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b) // not reached in a valid document
		}
		q := i + k
		// The quote closes the string unless an odd number of backslashes
		// escapes it.
		n := 0
		for j := q - 1; j >= i && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// walkValue returns the index just past the value that starts at b[i].
func walkValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return walkString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = walkString(b, i)
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
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i
		}
		i++
	}
	return i
}

// walkMembers calls fn with the raw key (without quotes) and the value's
// bounds of each member of the object at b[i] == '{', in order, until fn
// returns false.
func walkMembers(b []byte, i int, fn func(key []byte, v, end int) bool) {
	i = walkSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := walkString(b, i)
		key := b[i+1 : ke-1]
		v := walkSpace(b, ke)
		v = walkSpace(b, v+1) // past ':'
		end := walkValue(b, v)
		if !fn(key, v, end) {
			return
		}
		i = walkSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = walkSpace(b, i+1)
		}
	}
}

// walkElements calls fn with the bounds of each value of the array at
// b[i] == '[', or of each member's value of the object at b[i] == '{' (as
// gjson's ForEach visits both), until fn returns false.
func walkElements(b []byte, i int, fn func(v, end int) bool) {
	if b[i] == '{' {
		walkMembers(b, i, func(_ []byte, v, end int) bool { return fn(v, end) })
		return
	}
	i = walkSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		end := walkValue(b, i)
		if !fn(i, end) {
			return
		}
		i = walkSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = walkSpace(b, i+1)
		}
	}
}

// walkPath returns the bounds of the value at the dotted path (given as its
// keys) from the object at b[i], found as gjson's Get finds it: the members
// named path[0] are tried in order, and the first through which the rest
// of the path leads wins (a repeated key whose first copy lacks the rest
// does not hide the next copy). ok is false when there is none.
func walkPath(b []byte, i int, path []string) (v, end int, ok bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, 0, false
	}
	walkMembers(b, i, func(k []byte, vs, ve int) bool {
		if string(k) != path[0] {
			return true
		}
		if len(path) == 1 {
			v, end, ok = vs, ve, true
		} else {
			v, end, ok = walkPath(b, vs, path[1:])
		}
		return !ok
	})
	return v, end, ok
}

var (
	pathChoices     = []string{"choices"}
	pathToolCalls   = []string{"message", "tool_calls"}
	pathFuncName    = []string{"function", "name"}
	pathFuncCallNam = []string{"message", "function_call", "name"}
)

// walkToolNames calls add with each tool name of a valid JSON reply, in the
// order RewriteJSONReply takes them: for each choice, the names of
// message.tool_calls[*].function.name, then message.function_call.name.
// A name with escapes is decoded by decode.
func walkToolNames(b []byte, calls, funcCall bool, decode func(raw []byte) string, add func(string)) {
	cv, _, ok := walkPath(b, walkSpace(b, 0), pathChoices)
	if !ok || (b[cv] != '[' && b[cv] != '{') {
		return
	}
	name := func(obj int, path []string) {
		if v, end, ok := walkPath(b, obj, path); ok && b[v] == '"' {
			raw := b[v+1 : end-1]
			if bytes.IndexByte(raw, '\\') >= 0 {
				add(decode(b[v:end]))
			} else {
				add(unsafeString(raw))
			}
		}
	}
	walkElements(b, cv, func(c, _ int) bool {
		if calls {
			if tc, _, ok := walkPath(b, c, pathToolCalls); ok && b[tc] == '[' {
				walkElements(b, tc, func(call, _ int) bool {
					name(call, pathFuncName)
					return true
				})
			}
		}
		if funcCall {
			name(c, pathFuncCallNam)
		}
		return true
	})
}
