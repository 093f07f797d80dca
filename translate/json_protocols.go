package translate

import (
	"github.com/tidwall/gjson"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// jsonProtocol is the reading of a protocol's JSON replies, declared in the
// protocol's file: is recognises one by its top level (nil for chat, which
// takes what no other protocol claims), asked only of a reply that has
// one of its top-level paths at least; read reads the reply into the
// record the general way (gjson: its text for run-once, keys with
// escapes). A protocol with tools and a usage reading is also read by the
// index of the pass that validated the reply (readIndexed), which records
// what its paths and tools name (json_index.go).
type jsonProtocol struct {
	proto *protocol // set at registration

	// paths are the members its reading asks the index for: the top-level
	// members is reads, and others it reads itself (nodes: where the
	// index found each, registration).
	paths []string
	nodes []jsonscan.Node
	tops  []string // its top-level paths, which is reads, and their top slots
	slots []int
	is    func(t jsonTop) bool
	read  func(root gjson.Result, rep *Reply, text bool)

	// tools are the paths of the elements that name its tools (SPEC 4.2,
	// 4.4, 4.5): of each element, the first path leads to its key, the
	// second, if any, to its name. An element whose key is a string that
	// mayBeTool (its JSON text, quotes included; nil: any) names the tool
	// toolOf says (nil: the key is the tool), or, byName, its name.
	tools     []string
	mayBeTool func(rawKey string) bool
	toolOf    func(key string) (tool string, byName bool)

	elems uint64 // the index's nodes of its tools' elements (registration)
}

// registerJSON puts what a protocol's JSON reading asks for in the index's
// tree: its tools first (an element's key is its first path), then its
// paths.
func registerJSON(j *jsonProtocol) {
	for _, path := range j.tools {
		if e := replyPaths.ElementOf(replyPaths.Add(path, j.mayBeTool)); e != 0 {
			j.elems |= 1 << e
		}
	}
	for _, path := range j.paths {
		n := replyPaths.Add(path, nil)
		j.nodes = append(j.nodes, n)
		if slot, top := replyPaths.Slot(n); top {
			j.tops, j.slots = append(j.tops, path), append(j.slots, slot)
		}
	}
	if len(j.tops) > len(jsonTop{}.v) {
		panic("translate: more top-level paths in a JSON protocol than jsonTop holds")
	}
	if j.is != nil {
		jsonIs = append(jsonIs, j)
	}
}

// jsonTop is a JSON reply's top level as a protocol's (j) is reads it:
// where the index found its tops (v: three at most), a copy, not the
// index: is is called through a func value, and a pointer handed to one
// would move the index to the heap.
type jsonTop struct {
	s string
	j *jsonProtocol
	v [3]int
}

// at returns where the value of the first top-level member key, one of
// the protocol's paths, starts: found among its few paths, which is
// cheaper than a walk of the index's tree.
func (t *jsonTop) at(key string) (int, bool) {
	for i, path := range t.j.tops {
		if path == key && t.v[i] != 0 {
			return jsonscan.Space(t.s, t.v[i]), true
		}
	}
	return 0, false
}

// strIs reports whether the value of the first top-level member key is
// the string want (no quote or backslash in it): compared as it is
// written, decoded only when an escape comes before its first difference.
// key must be one of the protocol's paths.
func (t *jsonTop) strIs(key, want string) bool {
	v, ok := t.at(key)
	if !ok || t.s[v] != '"' {
		return false
	}
	raw := t.s[v+1:] // the document is valid: the string closes in it
	if len(raw) > len(want) && raw[len(want)] == '"' && raw[:len(want)] == want {
		return true
	}
	for i := 0; i < len(raw); i++ {
		switch {
		case raw[i] == '\\':
			str, _ := strAt(t.s, v)
			return str == want
		case i == len(want) || raw[i] != want[i]:
			return false
		}
	}
	return false
}

// kind returns the first byte of the value of the first top-level member
// key ('{', '[', '"', 't', …), 0 when there is none. key must be one of
// the protocol's paths.
func (t *jsonTop) kind(key string) byte {
	if v, ok := t.at(key); ok {
		return t.s[v]
	}
	return 0
}

// jsonProtocolOf returns the protocol of a JSON reply s whose top-level
// members start at top, nil for a chat completion (SPEC 4 table: the
// protocols in registration order).
func jsonProtocolOf(s string, top *[jsonscan.MaxTops]int) *jsonProtocol {
	for _, j := range jsonIs {
		t := jsonTop{s: s, j: j}
		some := 0
		for i, slot := range j.slots {
			t.v[i] = top[slot]
			some |= t.v[i]
		}
		if some != 0 && j.is(t) {
			return j
		}
	}
	return nil
}

// jsonIs is the JSON protocols with an is, in registration order.
var jsonIs []*jsonProtocol

// readIndexed reads a reply of the protocol by its index, without its
// text: its id (only for who reads it: the end hook, OpenClaw's run id) and
// model (SPEC 9.2, 11.2), its own meta, its tools, its usage and cost.
func (p *jsonProtocol) readIndexed(s string, x *jsonIndex, rep *Reply, opts *JSONOptions) {
	if opts.BeforeEnd != nil {
		id, _ := x.topStr(s, topID)
		rep.setID(id)
	}
	model, _ := x.topStr(s, topModel)
	rep.setModel(model)
	if v, end, ok := x.value(s, topMeta); ok && s[v] == '{' {
		rep.Meta.mergeResult(gjson.Parse(s[v:end]))
	}
	for _, r := range x.Refs() {
		if p.elems&(1<<r.Elem) != 0 {
			p.addTool(s, r.Key, r.Name, &rep.Meta)
		}
	}
	if n := p.proto.usage; n != nil && x.Top[topUsage] != 0 {
		var c [maxUsageCounts]usageCount
		k := len(n.slots) - 1
		for i := 0; i < k; i++ {
			if f, ok := x.number(s, n.slots[i]); ok {
				c[i].n, c[i].ok = countOf(f)
			}
		}
		rep.Usage.applyAs(n, c[:k])
		if f, ok := x.number(s, n.slots[k]); ok {
			rep.setRankedCost(f, costUsage) // usage.cost, as setCostFrom
		}
	}
}

// number reads the value in slot i as gjson reads a number, ok false when
// it is not one.
func (x *jsonIndex) number(s string, i int) (float64, bool) {
	if x.Vals[i] == 0 {
		return 0, false
	}
	return jsonscan.Number(s, jsonscan.Space(s, x.Vals[i]))
}

// addTool adds the tool of an element whose key's and name's values start
// at key and name (0: none there).
func (p *jsonProtocol) addTool(s string, key, name int, m *Meta) {
	k, isStr := strAt(s, key)
	if !isStr {
		return
	}
	if p.toolOf == nil {
		m.AddTool(k)
		return
	}
	tool, byName := p.toolOf(k)
	if !byName {
		m.AddTool(tool) // "" adds nothing
		return
	}
	if name != 0 {
		if n, ok := strAt(s, name); ok {
			m.AddTool(n)
		}
	}
}

// JSONReplyText is the run-once reading of a JSON reply (SPEC 6.1, 6.4),
// body being what RewriteJSONReply returned for the record rep: its text
// (the record's, for a protocol that read it; else the edge function's
// field order), and, when no text was found, the error its
// protocol read, else the reply's top-level error (an object with a
// message, or a string): that error's message.
func JSONReplyText(body []byte, rep *Reply) (content, errMsg string, isErr bool) {
	s := strView(body)
	root := gjson.Parse(s)
	if rep.jsonProtocol {
		content = rep.Content()
		if content != "" {
			return content, "", false
		}
		// A reply its protocol read as an error (a blocked Gemini prompt,
		// SPEC 4.6) answers as an error event does.
		if msg, bad := rep.Err(); bad {
			return "", msg, true
		}
	} else if t, found := replyText(root); found {
		return t, "", false
	}
	if msg, ok := errorMessage(root); ok {
		return "", msg, true
	}
	return NoResponse, "", false
}
