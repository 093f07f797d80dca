package translate

import "strings"

// jsonIndex is what the pass that validates a JSON reply (scanJSON) learns
// of it on the way, so that reading the reply needs no second pass over
// the whole of it: where the top-level members that the protocols read
// begin, and whether the keys and item types that call for a closer look
// occur anywhere.
//
// Keys are compared as their raw bytes. A key written with an escape
// could spell any of them, so one is only flagged (idxEscapedKey), and the
// reply is then read the general way (gjson), as before this index.
type jsonIndex struct {
	// top holds, for each topKey, where the value of the first top-level
	// member of that name starts (just past its colon); 0: none.
	top   [topKeys]int
	flags uint8
	// wantType: the member just read is a "type" at the depth of the items
	// of a top-level array (output[i].type, content[i].type): its string
	// value is looked at (typeValue).
	wantType bool
}

// The top-level members a JSON reply is read by.
const (
	topID = iota
	topModel
	topObject
	topType
	topChoices
	topMeta
	topUsage
	topOutput
	topContent
	topKeys
)

// jsonIndex flags.
const (
	idxEscapedKey = 1 << iota // a key holds an escape: raw comparisons do not apply
	idxNestedMeta             // a "meta" member below the top level (choices[i].meta)
	idxToolCalls              // a "tool_calls" member
	idxFuncCall               // a "function_call" member
	idxToolType               // an item "type" that may name a tool (…_call, …tool_use)
)

// member records the key (quotes included) of a member at depth (1: the
// top level) whose value starts at v or after white space.
func (x *jsonIndex) member(key string, v, depth int, esc bool) {
	x.wantType = false
	if esc {
		x.flags |= idxEscapedKey
		return
	}
	k := key[1 : len(key)-1]
	if depth == 1 {
		if t := topKeyOf(k); t >= 0 && x.top[t] == 0 {
			x.top[t] = v
		}
		return
	}
	switch len(k) {
	case 4:
		if k == "meta" {
			x.flags |= idxNestedMeta
		} else if k == "type" && depth == 3 {
			x.wantType = true
		}
	case 10:
		if k == "tool_calls" {
			x.flags |= idxToolCalls
		}
	case 13:
		if k == "function_call" {
			x.flags |= idxFuncCall
		}
	}
}

// typeValue looks at the string value (quotes included) of an item's
// "type": a Responses tool item's type ends in _call (SPEC 4.4), an
// Anthropic tool block's in tool_use (4.5); one with an escape may spell
// either.
func (x *jsonIndex) typeValue(v string) {
	if strings.HasSuffix(v, `_call"`) || strings.HasSuffix(v, `tool_use"`) || strings.IndexByte(v, '\\') >= 0 {
		x.flags |= idxToolType
	}
}

// topKeyOf is the topKey named k, or -1.
func topKeyOf(k string) int {
	switch len(k) {
	case 2:
		if k == "id" {
			return topID
		}
	case 4:
		switch k {
		case "type":
			return topType
		case "meta":
			return topMeta
		}
	case 5:
		switch k {
		case "model":
			return topModel
		case "usage":
			return topUsage
		}
	case 6:
		switch k {
		case "object":
			return topObject
		case "output":
			return topOutput
		}
	case 7:
		switch k {
		case "choices":
			return topChoices
		case "content":
			return topContent
		}
	}
	return -1
}

// at returns where the value of top-level member t starts, ok false when
// there is none.
func (x *jsonIndex) at(s string, t int) (v int, ok bool) {
	if x.top[t] == 0 {
		return 0, false
	}
	return walkSpace(s, x.top[t]), true
}

// value returns the bounds of the value of top-level member t.
func (x *jsonIndex) value(s string, t int) (v, end int, ok bool) {
	if v, ok = x.at(s, t); !ok {
		return 0, 0, false
	}
	return v, walkValue(s, v), true
}

// str returns the value of top-level member t when it is a string.
func (x *jsonIndex) str(s string, t int) (string, bool) {
	v, end, ok := x.value(s, t)
	if !ok || s[v] != '"' {
		return "", false
	}
	return jsonStr(s[v:end]), true
}

// jsonStr is the text of a JSON string literal of a valid document
// (quotes included): its inside as it is, decoded only when it holds an
// escape.
func jsonStr(raw string) string {
	in := raw[1 : len(raw)-1]
	if strings.IndexByte(in, '\\') < 0 {
		return in
	}
	return decodeJSONString(raw)
}
