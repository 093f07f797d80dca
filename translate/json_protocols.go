package translate

import (
	"github.com/tidwall/gjson"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// jsonProtocol is the reading of a protocol's JSON replies that carry the
// meta as a top-level key (the Responses object, the Anthropic message):
// is recognises one by its top level; read reads the reply into the record
// the general way (gjson: its text for run-once, keys with escapes). A
// protocol that names items (items, mayBeTool, toolOf) and a usage reading
// is also read by the index of the pass that validated the reply
// (readIndexed). The chat completion, which no protocol claims, has rules
// of its own (json_reply.go: choices' meta, structured replies).
type jsonProtocol struct {
	proto *protocol // set at registration

	// topKeys are the top-level members is reads: the index records them.
	topKeys []string
	is      func(t jsonTop) bool
	read    func(root gjson.Result, rep *Reply, text bool)

	// items is the top-level member whose items name the tools (SPEC 4.4,
	// 4.5): the index records, of each item whose type's JSON text (quotes
	// included) mayBeTool, where its type and name are; toolOf says the
	// tool an item's type names. Without items the reply is read by read.
	items     string
	mayBeTool func(rawType string) bool
	toolOf    func(t string) (tool string, byName bool)

	itemsTop int // the top slot of items (registration)
}

// jsonTop is a JSON reply's top level as a protocol's is reads it: where
// the index found its top-level members. It holds a copy of the index's
// places, not the index: is is called through a func value, and a
// pointer handed to one would move the index to the heap.
type jsonTop struct {
	s   string
	top [maxTopKeys]int
}

// topOf is the top level of s as the index x found it.
func topOf(s string, x *jsonIndex) jsonTop { return jsonTop{s, x.top} }

// at returns where the value of the first top-level member key starts.
func (t *jsonTop) at(key string) (int, bool) {
	i := topSlotOf(key)
	if i < 0 || t.top[i] == 0 {
		return 0, false
	}
	return jsonscan.Space(t.s, t.top[i]), true
}

// str returns the value of the first top-level member key when it is a
// string. key must be one of the protocol's topKeys.
func (t jsonTop) str(key string) (string, bool) {
	v, ok := t.at(key)
	if !ok {
		return "", false
	}
	return strAt(t.s, v)
}

// kind returns the first byte of the value of the first top-level member
// key ('{', '[', '"', 't', …), 0 when there is none. key must be one of
// the protocol's topKeys.
func (t jsonTop) kind(key string) byte {
	v, ok := t.at(key)
	if !ok {
		return 0
	}
	return t.s[v]
}

// jsonProtocolOf returns the protocol of a JSON reply, nil for a chat
// completion (SPEC 4 table: the protocols in registration order).
func jsonProtocolOf(t jsonTop) *jsonProtocol {
	for _, p := range protocols {
		if j := p.json; j != nil && j.is(t) {
			return j
		}
	}
	return nil
}

// indexable reports whether the index records what readIndexed reads.
func (p *jsonProtocol) indexable() bool { return p.items != "" && p.proto.usage != nil }

// readIndexed reads a reply of the protocol by its index, in the order of
// read (readHead, then the items), without its text: the usage and its
// cost, the reply's own meta, the items' tools.
func (p *jsonProtocol) readIndexed(s string, x *jsonIndex, rep *Reply, opts *JSONOptions) {
	readIDModel(s, x, rep, opts)
	rep.readUsageIndexed(s, x, p.proto.usage)
	if v, end, ok := x.value(s, topMeta); ok && s[v] == '{' {
		rep.Meta.mergeResult(gjson.Parse(s[v:end]))
	}
	if x.flags&idxManyTools != 0 {
		if v, ok := x.at(s, p.itemsTop); ok {
			walkToolItems(s, v, &rep.Meta, p.toolOf)
		}
		return
	}
	for _, r := range x.refs[:x.nrefs] {
		if int(r.kind) == p.itemsTop {
			name := r.name
			if name == 0 {
				name = -1
			}
			addItemToolAt(s, r.v, name, &rep.Meta, p.toolOf)
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
	if e := root.Get("error"); e.Exists() {
		if m := e.Get("message"); e.IsObject() && m.Type == gjson.String && m.Str != "" {
			return "", m.Str, true
		}
		if e.Type == gjson.String && e.Str != "" {
			return "", e.Str, true
		}
	}
	return NoResponse, "", false
}
