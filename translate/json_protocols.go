package translate

import "github.com/tidwall/gjson"

// jsonProtocol is a JSON reply protocol that carries the meta as a
// top-level key (the Responses object, the Anthropic message): read reads
// the reply into the record the general way (gjson: its text for run-once,
// keys with escapes); readIndexed reads a forwarded one by the index of the
// pass that validated it. The chat completion (json_reply.go) has rules of
// its own (choices' meta, structured replies).
type jsonProtocol struct {
	name string
	read func(root gjson.Result, rep *Reply, text bool)
	// items is the top-level member whose items name the tools (refs of
	// the index of that kind), toolOf the tool an item's type names (SPEC
	// 4.4, 4.5).
	items  int
	refs   uint8
	toolOf func(t string) (tool string, byName bool)
	usage  *usageReading
}

// jsonProtocols recognise a JSON reply by its top level (SPEC 4): the one
// registration line of each such protocol.
var (
	responsesJSON = &jsonProtocol{"responses", readResponse, topOutput, refOutput, responsesToolOf, &responsesUsageReading}
	anthropicJSON = &jsonProtocol{"anthropic", readMessage, topContent, refContent, anthropicToolOf, &anthropicUsageReading}
)

// jsonProtocolOf returns the protocol of a JSON reply, nil for a chat
// completion: "object":"response" is a Responses object, "type":"message"
// an Anthropic message.
func jsonProtocolOf(root gjson.Result) *jsonProtocol {
	if o := root.Get("object"); o.Type == gjson.String && o.Str == "response" {
		return responsesJSON
	}
	if t := root.Get("type"); t.Type == gjson.String && t.Str == "message" {
		return anthropicJSON
	}
	return nil
}

// protocol is jsonProtocolOf by the index.
func (x *jsonIndex) protocol(s string) *jsonProtocol {
	if o, ok := x.topStr(s, topObject); ok && o == "response" {
		return responsesJSON
	}
	if t, ok := x.topStr(s, topType); ok && t == "message" {
		return anthropicJSON
	}
	return nil
}

// readIndexed reads a reply of the protocol by its index, in the order of
// read (readHead, then the items), without its text: the usage and its
// cost, the reply's own meta, the items' tools.
func (p *jsonProtocol) readIndexed(s string, x *jsonIndex, rep *Reply, opts *JSONOptions) {
	readIDModel(s, x, true, rep, opts)
	rep.readUsageIndexed(s, x, p.usage)
	if v, end, ok := x.value(s, topMeta); ok && s[v] == '{' {
		rep.Meta.mergeResult(gjson.Parse(s[v:end]))
	}
	if x.flags&idxManyTools != 0 {
		if v, ok := x.at(s, p.items); ok {
			walkToolItems(s, v, &rep.Meta, p.toolOf)
		}
		return
	}
	for _, r := range x.refs[:x.nrefs] {
		if r.kind == p.refs {
			name := r.name
			if name == 0 {
				name = -1
			}
			addItemToolAt(s, r.v, name, &rep.Meta, p.toolOf)
		}
	}
}

// JSONReplyText is the run-once reading of a JSON reply (SPEC 6.1, 6.4):
// its text (the record's, for a protocol that collected it; else the edge
// function's field order), and, when no text was found and the reply
// carries a top-level error (an object with a message, or a string), that
// error's message.
func JSONReplyText(body []byte, rep *Reply) (content, errMsg string, isErr bool) {
	s := unsafeString(body)
	root := gjson.Parse(s)
	if jsonProtocolOf(root) != nil {
		content = rep.Content()
		if content != "" {
			return content, "", false
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
