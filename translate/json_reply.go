package translate

import (
	"slices"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// JSONOptions configure RewriteJSONReply.
type JSONOptions struct {
	// Structured splits a structured reply (SPEC 7).
	Structured bool
	// Warn, when set, is told of each fallback by a short reason code.
	Warn func(reason string)
	// Buf, when it has room, is where a rewritten reply is built (from
	// Buf[:0]), so that a caller can use a buffer again; out then shares
	// its memory.
	Buf []byte
	// BeforeEnd, when set, is called once the reply has been read into the
	// record, before its meta is completed and written (the OpenClaw
	// look-up).
	BeforeEnd func(*Reply)
	// Reply, when set, is the empty record the reply is read into (its
	// meta is the one returned, its usage, cost, id and model are the
	// reply's), so that a caller can keep it where it likes (a new one
	// otherwise). Its id and model are read only for who reads them: the
	// end hook (OpenClaw's run id) and the prices table.
	Reply *Reply
}

// RewriteJSONReply applies SPEC 4.2 to a whole JSON reply: meta from every
// choices[i].meta, then the top-level meta, then the tool_calls names, then
// extra (what the module derived from the request), all merged by SPEC 4.1;
// the result becomes the top-level meta and every choices[i].meta goes. A
// Responses object (4.4) and an Anthropic message (4.5) get their own
// reading, the meta as their top-level "meta" too.
//
// ok is false when body is not a JSON object; then nothing is done. When
// nothing changes, out is body itself, byte-identical. JSONReplyParts.
// Rewrite gives the same result as pieces, without a second copy.
func RewriteJSONReply(body []byte, extra *Meta, opts JSONOptions) (out []byte, meta *Meta, ok bool) {
	p := jsonPlan{body: body}
	if meta, ok = p.rewrite(extra, &opts); !ok {
		return body, nil, false
	}
	if !p.changed() {
		return body, meta, true
	}
	if p.n == 0 && p.more == nil {
		return p.body, meta, true // rebuilt (a structured reply), nothing else
	}
	return p.appendTo(slices.Grow(opts.Buf[:0], p.sizeHint(meta)), meta), meta, true
}

// rewrite reads p.body into the record and plans the cuts that make the
// reply's meta its top-level "meta" (SPEC 4.2, 4.4, 4.5). It reports false,
// planning nothing, when the body is not a JSON object.
func (p *jsonPlan) rewrite(extra *Meta, opts *JSONOptions) (*Meta, bool) {
	s := strView(p.body)
	var x jsonIndex
	if !replyPaths.Scan(s, &x.Index) || s[jsonscan.Space(s, 0)] != '{' {
		return nil, false
	}
	rep := opts.newReply()
	rep.Meta.useStore(&rep.store)
	rep.Terminal = true
	meta := &rep.Meta
	proto, choiceMeta := readJSONReply(s, &x, rep, opts)
	if rep.ToolArguments {
		readJSONToolCalls(s, proto, rep)
	}
	if opts.BeforeEnd != nil {
		opts.BeforeEnd(rep)
	}
	if extra != nil {
		meta.Merge(extra)
	}
	if proto == nil && opts.Structured {
		p.structured(meta, opts.Warn)
	}
	rep.Seal()
	// A rebuilt body is not the one the index's places are of.
	p.planMeta(&x, !p.rebuilt, meta, choiceMeta, proto != nil)
	p.sort()
	return meta, true
}

// readJSONReply reads the JSON reply s into the record by its index: its
// protocol (nil: a chat completion), and, for a chat completion, the
// indices of the choices with a meta.
func readJSONReply(s string, x *jsonIndex, rep *Reply, opts *JSONOptions) (proto *jsonProtocol, choiceMeta []int) {
	proto = jsonProtocolOf(s, &x.Top)
	rep.jsonProtocol = proto != nil
	switch {
	case proto != nil && !rep.WantContent && proto.tools != nil:
		// The index recorded its tools, and all else readIndexed reads.
		proto.readIndexed(s, x, rep, opts)
	case proto != nil:
		proto.read(gjson.Parse(s), rep, rep.WantContent)
	default:
		choiceMeta = readChat(s, x, rep, opts)
	}
	return proto, choiceMeta
}

// planMeta plans the cuts that give p.body meta as its top-level "meta":
// the choices' meta removed; the reply's own top-level meta kept when it
// says the same and nothing else changes, else replaced, or removed when
// the meta is empty; else the meta added at the end. proto: a Responses
// object or an Anthropic message, whose own meta is compared by value.
func (p *jsonPlan) planMeta(x *jsonIndex, indexed bool, meta *Meta, choiceMeta []int, proto bool) {
	s := strView(p.body)
	root := jsonscan.Space(s, 0)
	// The reply's own top-level meta, as gjson's Get finds it.
	var top, topEnd int
	var hasTop bool
	if indexed {
		top, topEnd, hasTop = x.value(s, topMeta)
	} else {
		top, topEnd, hasTop = jsonscan.FindMember(s, root, "meta")
	}
	p.cutChoiceMetas(choiceMeta) // one pass, however many choices
	changed := len(choiceMeta) > 0 || p.changed()
	switch {
	case meta.Empty():
		if hasTop && (changed || !emptyObject(s, top)) {
			p.cutMember(s, root, "meta")
		}
	case !hasTop:
		// Added at the end, as sjson adds a member: the object from its
		// '{' to its last '}', white space around it dropped; a comma when
		// it has members.
		end := len(s) - 1
		for s[end] != '}' {
			end--
		}
		if root > 0 {
			p.cut(0, root, nil, cutAdd)
		}
		kind := uint8(cutMetaMember)
		if jsonscan.Space(s, root+1) < end {
			kind = cutMetaComma
		}
		p.cut(end, len(s), nil, kind)
	case changed || !sameTopMeta(s[top:topEnd], meta, proto):
		p.cut(top, topEnd, nil, cutMetaValue)
	}
}

// changed reports whether the plan changes the body: a cut, or a body
// rebuilt.
func (p *jsonPlan) changed() bool {
	return p.n > 0 || p.more != nil || p.rebuilt
}

// emptyObject reports whether the value at s[v] is an object without
// members.
func emptyObject(s string, v int) bool {
	return s[v] == '{' && s[jsonscan.Space(s, v+1)] == '}'
}

// sameTopMeta reports whether meta, the merged meta (at most
// max_meta_bytes), says what top, the reply's own top-level meta, says, so
// that the reply can go as it came. A Responses object or an Anthropic
// message (proto) compare the two as values. For a chat completion, equal
// bytes, or equal once white space is taken out, answer at once; otherwise
// the two are decoded and compared as values. Either is decoded only when
// top is not far larger than meta: a top-level meta of megabytes decoded
// into maps would take several times its size (SPEC 8.1), and one that
// large cannot say the same as a bounded meta unless it repeats its keys
// (or pads them with white space), which the rewritten meta then says
// once.
func sameTopMeta(top string, meta *Meta, proto bool) bool {
	m := meta.JSON()
	if !proto {
		if top == string(m) {
			return true
		}
		c := compactJSON(bytesView(top))
		if string(c) == string(m) {
			return true
		}
		top = strView(c)
	}
	if len(top) > 4*len(m)+4096 {
		return false
	}
	return jsonscan.Equal(bytesView(top), m)
}

var unicodeEscape = []byte(`\u`)

// decodeJSONString decodes a JSON string literal (quotes included).
func decodeJSONString(raw string) string { return gjson.Parse(raw).Str }

func copyBytes(b []byte) []byte { return append([]byte(nil), b...) }

// newReply is the record a reply is read into.
func (o *JSONOptions) newReply() *Reply {
	if o.Reply != nil {
		return o.Reply
	}
	return new(Reply)
}
