package translate

import (
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// jsonProtocol is a JSON reply protocol that carries the meta as a
// top-level key (the Responses object, the Anthropic message): read reads
// the reply into the record; the chat completion (json_reply.go) has rules
// of its own (choices' meta, structured replies).
type jsonProtocol struct {
	name string
	read func(root gjson.Result, rep *Reply, text bool)
}

// jsonProtocols recognise a JSON reply by its top level (SPEC 4): the one
// registration line of each such protocol.
var (
	responsesJSON = &jsonProtocol{"responses", readResponse}
	anthropicJSON = &jsonProtocol{"anthropic", readMessage}
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

// rewriteTopLevelMeta reads a reply of such a protocol and gives it the
// merged meta as its top-level "meta" (the reply's own meta, then what the
// module derived); nothing to change → body as it came.
func rewriteTopLevelMeta(body []byte, root gjson.Result, rep *Reply, extra *Meta, p *jsonProtocol, opts JSONOptions) []byte {
	p.read(root, rep, rep.WantContent)
	if opts.BeforeEnd != nil {
		opts.BeforeEnd(rep)
	}
	if extra != nil {
		rep.Meta.Merge(extra)
	}
	rep.Seal()
	top := root.Get("meta")
	if rep.Meta.Empty() {
		if !top.Exists() || (top.IsObject() && len(top.Map()) == 0) {
			return body
		}
		if out, err := sjson.DeleteBytes(copyBytes(body), "meta"); err == nil {
			return out
		}
		return body
	}
	if !top.Exists() {
		return appendMeta(opts.Buf[:0], body, &rep.Meta)
	}
	meta := rep.Meta.JSON()
	if jsonEqual([]byte(top.Raw), meta) {
		return body
	}
	if out, err := sjson.SetRawBytes(copyBytes(body), "meta", meta); err == nil {
		return out
	}
	return body
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
