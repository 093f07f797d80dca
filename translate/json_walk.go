package translate

import "github.com/llm-meta/llm_meta/internal/jsonscan"

// The tool names of a chat completion with more of them than the index of
// json_index.go holds, found by a walk over the valid reply
// (jsonscan.Iter): where gjson's Get and ForEach would scan each choice
// again for every path, each byte of choices is read about once.

// toolWalk finds the tool names of a valid JSON reply in one pass over it
// (see walkToolNames).
type toolWalk struct {
	s              string
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
func walkToolNames(s string, v int, meta *Meta) {
	w := toolWalk{s: s, meta: meta}
	if s[v] == '[' || s[v] == '{' { // gjson's ForEach visits an object's values too
		ci := jsonscan.IterAt(s, v)
		for _, c, ok := ci.Next(); ok; _, c, ok = ci.Next() {
			if s[c] == '{' {
				ci.SkipTo(w.choice(c))
			}
		}
	}
}

// choice reads the choice object at c and returns where it ends.
func (w *toolWalk) choice(c int) int {
	s := w.s
	w.tcDone, w.fcDone, w.fcV = false, false, -1
	it := jsonscan.IterAt(s, c)
	for k, m, ok := it.Next(); ok; k, m, ok = it.Next() {
		if jsonscan.KeyIs(k, "message") && s[m] == '{' && !(w.tcDone && w.fcDone) {
			it.SkipTo(w.message(m))
		}
	}
	if w.fcV >= 0 {
		w.name(w.fcV, w.fcEnd)
	}
	return it.End()
}

// message reads a message object and returns where it ends.
func (w *toolWalk) message(m int) int {
	s := w.s
	it := jsonscan.IterAt(s, m)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		switch {
		case !w.tcDone && jsonscan.KeyIs(k, "tool_calls"):
			w.tcDone = true
			if s[v] == '[' {
				it.SkipTo(w.toolCalls(v))
			}
		case !w.fcDone && jsonscan.KeyIs(k, "function_call") && s[v] == '{':
			// Rare: the name is found by a look-up in this copy.
			if nv, ne, ok := jsonscan.FindMember(s, v, "name"); ok {
				w.fcDone, w.fcV, w.fcEnd = true, nv, ne
			}
		}
	}
	return it.End()
}

// toolCalls reads a tool_calls array, adding each function.name, and
// returns where it ends.
func (w *toolWalk) toolCalls(a int) int {
	s := w.s
	ai := jsonscan.IterAt(s, a)
	for _, call, ok := ai.Next(); ok; _, call, ok = ai.Next() {
		if s[call] != '{' {
			continue
		}
		found := false
		it := jsonscan.IterAt(s, call)
		for k, f, ok := it.Next(); ok; k, f, ok = it.Next() {
			if found || !jsonscan.KeyIs(k, "function") || s[f] != '{' {
				continue
			}
			fi := jsonscan.IterAt(s, f)
			for k, n, ok := fi.Next(); ok; k, n, ok = fi.Next() {
				if !found && jsonscan.KeyIs(k, "name") {
					found = true
					end := jsonscan.SkipValue(s, n)
					w.name(n, end)
					fi.SkipTo(end)
				}
			}
			it.SkipTo(fi.End())
		}
		ai.SkipTo(it.End())
	}
	return ai.End()
}

// name adds the name whose value lies at s[v:end] when it is a string.
func (w *toolWalk) name(v, end int) {
	if w.s[v] == '"' {
		w.meta.AddTool(jsonStr(w.s[v:end])) // AddTool keeps a copy
	}
}
