package translate

import "github.com/llm-meta/llm_meta/internal/jsonscan"

// jsonIndex is what the pass that validates a JSON reply (replyPaths.Scan)
// learns of it on the way, so that reading the reply needs no second pass
// over it: what the protocols ask for, each as paths in its own file
// (jsonProtocol's paths and tools, the usage names of usage.go), put in
// replyPaths at registration (jsonscan.Paths says how each is found, as
// gjson would find it; FuzzRewriteJSONReplyEquiv holds it to gjson).
type jsonIndex struct{ jsonscan.Index }

// replyPaths is the tree of every path a JSON reply is read by.
var replyPaths jsonscan.Paths

// The top-level members every JSON reply is read by (SPEC 4.1, 9.1, 9.2).
var topID, topModel, topMeta, topUsage = addTopKey("id"), addTopKey("model"), addTopKey("meta"), addTopKey("usage")

// addTopKey gives k a top slot, when it has none, and returns it.
func addTopKey(k string) int {
	slot, _ := replyPaths.Slot(replyPaths.Add(k, nil))
	return slot
}

// value returns the bounds of the value of top-level member t.
func (x *jsonIndex) value(s string, t int) (v, end int, ok bool) {
	if x.Top[t] == 0 {
		return 0, 0, false
	}
	v = jsonscan.Space(s, x.Top[t])
	return v, jsonscan.SkipValue(s, v), true
}

// topStr returns the value of top-level member t when it is a string.
func (x *jsonIndex) topStr(s string, t int) (string, bool) {
	if x.Top[t] == 0 {
		return "", false
	}
	return strAt(s, x.Top[t])
}

// strAt returns the string whose value starts at or after v (white space
// before it), ok false when the value there is not a string. Its end and
// whether it holds an escape are found in one pass (ValidString), a short
// name's only pass.
func strAt(s string, v int) (string, bool) {
	v = jsonscan.Space(s, v)
	if v >= len(s) || s[v] != '"' {
		return "", false
	}
	end, esc, ok := jsonscan.ValidString(s, v+1)
	if !ok {
		return "", false
	}
	if !esc {
		return s[v+1 : end-1], true
	}
	return decodeJSONString(s[v:end]), true
}
