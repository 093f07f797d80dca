package translate

import (
	"bytes"
	"slices"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// JSONOptions configure RewriteJSONReply.
type JSONOptions struct {
	// Structured splits a structured reply (SPEC 7).
	Structured bool
	// Warn, when set, is told of each fallback by a short reason code.
	Warn func(reason string)
	// ForwardOnly: the caller forwards the body and reads nothing else of
	// it. When nothing in the body can change (no meta, no tool calls, no
	// extra meta, not structured), it is then returned as it came without
	// being validated, with ok true: an invalid body would be forwarded
	// untouched all the same. Run-once callers, which read an invalid body
	// as text, leave it off.
	ForwardOnly bool
	// Buf, when it has room, is where a rewritten reply is built (from
	// Buf[:0]), so that a caller can use a buffer again; out then shares
	// its memory.
	Buf []byte
	// BeforeEnd, when set, is called once the reply has been read into the
	// record, before its meta is completed and written (the OpenClaw
	// look-up). A reply it is given is always read: ForwardOnly does not
	// skip it.
	BeforeEnd func(*Reply)
	// Reply, when set, is the empty record the reply is read into (its
	// meta is the one returned, its usage, cost, id and model are the
	// reply's), so that a caller can keep it where it likes (a new one
	// otherwise).
	Reply *Reply
}

// RewriteJSONReply applies SPEC 4.2 to a whole JSON reply: meta from every
// choices[i].meta, then the top-level meta, then the tool_calls names, then
// extra (what the module derived from the request), all merged by SPEC 4.1;
// the result becomes the top-level meta and every choices[i].meta goes.
//
// ok is false when body is not a JSON object (unless opts.ForwardOnly let it
// go unread); then nothing is done. When
// nothing changes, out is body itself, byte-identical.
func RewriteJSONReply(body []byte, extra *Meta, opts JSONOptions) (out []byte, meta *Meta, ok bool) {
	// Most replies have no meta and no tool calls: look for the keys first
	// (one pass over the bytes) and leave gjson out when none is there. A
	// key can be spelt with \u escapes; then every look-up is made.
	keys := scanKeys(body)
	escaped := bytes.Contains(body, unicodeEscape)
	if escaped {
		keys = hasMeta | hasToolCall | hasFuncCall | hasUsage
	}
	rep := opts.newReply()
	if opts.ForwardOnly && opts.BeforeEnd == nil && keys&(hasMeta|hasToolCall|hasFuncCall|hasUsage) == 0 && !opts.Structured &&
		(extra == nil || extra.Empty()) && !rep.HasCost && !rep.Timing && !mayHoldToolItems(body) {
		// Nothing can change: valid or not, the body goes as it came.
		return body, &rep.Meta, true
	}
	s := unsafeString(body)
	root, isObj := jsonObject(s)
	if !isObj {
		return body, nil, false
	}
	rep.Terminal = true
	if p := jsonProtocolOf(root); p != nil {
		return rewriteTopLevelMeta(body, root, rep, extra, p, opts), &rep.Meta, true
	}
	// The id and model, only for who reads them: the end hook (OpenClaw's
	// run id) and the prices table.
	if opts.BeforeEnd != nil {
		rep.setID(root.Get("id").Str)
	}
	if len(rep.Prices) > 0 {
		rep.setModel(root.Get("model").Str)
	}
	meta = &rep.Meta
	var choices, top gjson.Result
	var choiceMeta []int
	if keys&hasMeta != 0 {
		choices = root.Get("choices")
		i := 0
		choices.ForEach(func(_, c gjson.Result) bool {
			if m := c.Get("meta"); m.Exists() {
				choiceMeta = append(choiceMeta, i)
				if m.IsObject() {
					meta.mergeResult(m)
				}
			}
			i++
			return true
		})
		top = root.Get("meta")
		if top.IsObject() {
			meta.mergeResult(top) // a scalar would come back as one value with key ""
		}
	}
	if calls, fc := keys&hasToolCall != 0, keys&hasFuncCall != 0; (calls || fc) && !escaped {
		// The common case, in one walk over the reply (json_walk.go).
		walkToolNames(s, calls, fc, meta)
	} else if calls || fc {
		if !choices.Exists() {
			choices = root.Get("choices")
		}
		choices.ForEach(func(_, c gjson.Result) bool {
			if calls {
				if tc := c.Get("message.tool_calls"); tc.IsArray() {
					tc.ForEach(func(_, call gjson.Result) bool {
						if n := call.Get("function.name"); n.Type == gjson.String {
							meta.AddTool(n.Str)
						}
						return true
					})
				}
			}
			if fc {
				if n := c.Get("message.function_call.name"); n.Type == gjson.String {
					meta.AddTool(n.Str)
				}
			}
			return true
		})
	}
	if keys&hasUsage != 0 {
		if u := root.Get("usage"); u.IsObject() {
			rep.Usage.ReadChat(u)
			rep.setCostFrom(u)
		}
	}
	if opts.BeforeEnd != nil {
		opts.BeforeEnd(rep)
	}
	if extra != nil {
		meta.Merge(extra)
	}

	out = body
	changed := len(choiceMeta) > 0
	if opts.Structured {
		path := "choices.0.message.content"
		c := root.Get(path)
		if c.Type != gjson.String {
			path = "content"
			c = root.Get(path)
		}
		if c.Type == gjson.String {
			if reply, md, split := SplitStructuredReply(c.Str); split {
				if next, err := sjson.SetBytes(copyBytes(out), path, reply); err == nil {
					out = next
					meta.Set(KeyStructuredMetadata, md)
					changed = true
				}
			} else if opts.Warn != nil {
				opts.Warn(ReasonStructuredUnparsed)
			}
		}
	}

	rep.Seal()
	hasMeta := !meta.Empty()
	if hasMeta && len(choiceMeta) == 0 && !top.Exists() {
		// Only a top-level meta to add (the usual change): build the result
		// in one go, the meta written straight into it.
		return appendMeta(opts.Buf[:0], out, meta), meta, true
	}
	var metaJSON []byte
	if hasMeta {
		metaJSON = meta.JSON()
	}
	switch {
	case metaJSON == nil:
		changed = changed || (top.Exists() && !(top.IsObject() && len(top.Map()) == 0))
	case !top.Exists():
		changed = true
	default:
		changed = changed || !sameMeta(top.Raw, metaJSON)
	}
	if !changed {
		return body, meta, true
	}
	if &out[0] == &body[0] {
		out = copyBytes(body)
	}
	out = deleteChoiceMetas(out, choiceMeta) // one pass, however many choices
	var err error
	if metaJSON != nil {
		out, err = sjson.SetRawBytes(out, "meta", metaJSON)
	} else if top.Exists() {
		out, err = sjson.DeleteBytes(out, "meta")
	}
	if err != nil {
		return body, meta, true
	}
	return out, meta, true
}

var unicodeEscape = []byte(`\u`)

// mayHoldToolItems reports whether a body can hold a tool of a Responses
// reply (an item type ending in _call) or of an Anthropic message (a
// *tool_use block): without those, usage and meta, neither has anything to
// change.
func mayHoldToolItems(body []byte) bool {
	return bytes.Contains(body, []byte("_call")) || bytes.Contains(body, []byte("tool_use"))
}

// decodeJSONString decodes a JSON string literal (quotes included).
func decodeJSONString(raw string) string { return gjson.Parse(raw).Str }

// appendMeta appends to dst a copy of the JSON object doc with the member
// "meta": m added at its end, byte for byte what sjson.SetRawBytes makes of
// an object that has no such key (the object from its '{' to its last '}',
// white space around it dropped; a comma when it has members), without
// sjson's look-up of the key, its second copy, or m's JSON made apart.
func appendMeta(dst, doc []byte, m *Meta) []byte {
	i := 0
	for i < len(doc) && doc[i] <= ' ' {
		i++
	}
	end := len(doc) - 1
	for end > i && doc[end] != '}' {
		end--
	}
	obj := doc[i:end] // '{' and the members, without the last '}'
	comma := false
	for _, c := range obj[1:] {
		if c > ' ' {
			comma = true
			break
		}
	}
	out := slices.Grow(dst, len(obj)+m.sizeHint()+10)
	out = append(out, obj...)
	if comma {
		out = append(out, ',')
	}
	out = append(out, `"meta":`...)
	out = m.AppendJSON(out)
	return append(out, '}')
}

func copyBytes(b []byte) []byte { return append([]byte(nil), b...) }

// newReply is the record a reply is read into.
func (o *JSONOptions) newReply() *Reply {
	if o.Reply != nil {
		return o.Reply
	}
	return new(Reply)
}
