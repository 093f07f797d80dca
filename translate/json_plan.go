package translate

import (
	"io"
	"slices"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// A rewritten JSON reply is its body as it came with a few cuts: a member
// removed (choices[i].meta, a top-level meta that says nothing), a value
// replaced (the top-level meta, a structured reply's text), the merged meta
// added at the end. The plan lists them against the body; the result is
// then either written out whole (RewriteJSONReply) or handed over as its
// pieces, spans of the body between the few new bytes (JSONReplyParts), so
// that a large reply is never copied to be forwarded.

// jsonCut replaces body[from:to] with add, or with the merged meta (kind).
type jsonCut struct {
	from, to int
	add      []byte
	kind     uint8
}

const (
	cutAdd        = iota // add
	cutMetaValue         // the meta's JSON (a top-level meta replaced)
	cutMetaMember        // "meta":<the meta's JSON>} (the object's end replaced)
	cutMetaComma         // ,"meta":<the meta's JSON>}
)

// jsonPlan is the body and its cuts, in ascending order once sorted. The
// first few cuts are kept in the plan itself, so that a plan on the stack
// allocates nothing for the usual one or two.
type jsonPlan struct {
	body []byte
	few  [4]jsonCut
	n    int       // cuts in few
	more []jsonCut // every cut, once there are more than few holds
	// rebuilt: body is a copy of the body as it came, with a structured
	// reply's text set (the cuts are of that copy).
	rebuilt bool
}

// cuts returns the cuts planned so far.
func (p *jsonPlan) cuts() []jsonCut {
	if p.more != nil {
		return p.more
	}
	return p.few[:p.n]
}

func (p *jsonPlan) cut(from, to int, add []byte, kind uint8) {
	c := jsonCut{from, to, add, kind}
	if p.more == nil && p.n < len(p.few) {
		p.few[p.n] = c
		p.n++
		return
	}
	p.reserve(1)
	p.more = append(p.more, c)
}

// reserve makes room for n more cuts.
func (p *jsonPlan) reserve(n int) {
	switch {
	case p.more != nil:
		p.more = slices.Grow(p.more, n)
	case p.n+n > len(p.few):
		p.more = append(make([]jsonCut, 0, max(p.n+n, 2*len(p.few))), p.few[:p.n]...)
	}
}

// sort puts the cuts in the order of the body. They never overlap. One
// cut, the usual plan, is not handed to the sort: its code, run for
// nothing, would be cold code the reply waits for (bench/HISTORY.md, "the
// JSON gap is cold code").
func (p *jsonPlan) sort() {
	cuts := p.cuts()
	if len(cuts) < 2 {
		return
	}
	slices.SortFunc(cuts, func(a, b jsonCut) int { return a.from - b.from })
}

// appendCut appends what cut c puts in place of its span.
func appendCut(dst []byte, c *jsonCut, m *Meta) []byte {
	switch c.kind {
	case cutAdd:
		return append(dst, c.add...)
	case cutMetaComma:
		dst = append(dst, ',')
	case cutMetaValue:
		return m.AppendJSON(dst)
	}
	dst = append(dst, `"meta":`...)
	return append(m.AppendJSON(dst), '}')
}

// appendTo appends the rewritten reply to dst.
func (p *jsonPlan) appendTo(dst []byte, m *Meta) []byte {
	last := 0
	cuts := p.cuts()
	for i := range cuts {
		c := &cuts[i]
		dst = append(dst, p.body[last:c.from]...)
		dst = appendCut(dst, c, m)
		last = c.to
	}
	return append(dst, p.body[last:]...)
}

// size is the length of the rewritten reply once every cut is of kind
// cutAdd; sizeHint, before, is at least that length.
func (p *jsonPlan) size() int {
	n := len(p.body)
	for _, c := range p.cuts() {
		n += len(c.add) - (c.to - c.from)
	}
	return n
}

func (p *jsonPlan) sizeHint(m *Meta) int {
	n := p.size()
	for _, c := range p.cuts() {
		if c.kind != cutAdd {
			n += len(`,"meta":}`) + m.Size()
		}
	}
	return n
}

// JSONReplyParts is a JSON reply rewritten by RewriteJSONReply's rules,
// held as the pieces it is made of: spans of the reply as it came, in
// order, and between them the few bytes that are new (the meta, a
// structured reply's text). Its new memory is about the size of the meta,
// whatever the size of the reply: a forwarded reply is held once.
//
// A forwarding caller, with the whole body read:
//
//	meta, ok := parts.Rewrite(body, extra, opts)
//	// !ok: body is not a JSON object; forward it untouched.
//	// parts.Changed(): set Content-Length to parts.Len(), drop ETag.
//	parts.WriteTo(w) // or net.Buffers(parts.Pieces(nil)).WriteTo(w)
//	// only now may body's memory go back to a pool.
//
// The zero value is ready for Rewrite; one JSONReplyParts serves one reply
// at a time, and the next one after it (Rewrite starts anew). It refers to
// the body it was given, and to opts.Buf when given (which must not be
// the body's memory), until then: both must stay as they are until the
// pieces are written. It must not be copied once used.
type JSONReplyParts struct {
	plan    jsonPlan
	changed bool
	whole   []byte    // the reply when it goes as one piece (too many cuts)
	add     []byte    // the new bytes the cuts refer to
	small   [256]byte // room for add, for a meta of the usual size
}

// maxPartsCuts bounds the pieces of a reply: past it (a reply with more
// choices carrying a meta than that, which no upstream sends), the reply
// is written out whole, as RewriteJSONReply would.
const maxPartsCuts = 64

// Rewrite reads body as RewriteJSONReply does, with the same arguments
// (opts.Buf, when it has room, holds the new bytes instead of p's own
// room), and makes p the result: p.Len() bytes that p.WriteTo writes, byte
// for byte what RewriteJSONReply returns for the same call. meta and ok
// are RewriteJSONReply's: when ok is false body is not a JSON object, and
// p is body itself, unchanged.
func (p *JSONReplyParts) Rewrite(body []byte, extra *Meta, opts JSONOptions) (meta *Meta, ok bool) {
	p.plan = jsonPlan{body: body}
	p.whole, p.changed = nil, false
	p.add = opts.Buf[:0]
	if cap(p.add) == 0 {
		p.add = p.small[:0]
	}
	if meta, ok = p.plan.rewrite(extra, &opts); !ok {
		return nil, false // nothing planned: p is body itself
	}
	p.changed = p.plan.changed()
	cuts := p.plan.cuts()
	if len(cuts) > maxPartsCuts {
		p.whole = p.plan.appendTo(make([]byte, 0, p.plan.sizeHint(meta)), meta)
		p.plan = jsonPlan{body: body}
		return meta, true
	}
	// The meta's bytes, built once, where the pieces can refer to them.
	for i := range cuts {
		if c := &cuts[i]; c.kind != cutAdd {
			start := len(p.add)
			p.add = appendCut(p.add, c, meta)
			c.kind, c.add = cutAdd, p.add[start:len(p.add):len(p.add)]
		}
	}
	return meta, true
}

// Changed reports whether the rewritten reply differs from the body: when
// it does not, p is the body as it came (SPEC 4.2: byte-identical).
func (p *JSONReplyParts) Changed() bool { return p.changed }

// Len is the length of the rewritten reply, known before it is written
// (Content-Length).
func (p *JSONReplyParts) Len() int {
	if p.whole != nil {
		return len(p.whole)
	}
	return p.plan.size()
}

// Whole returns the rewritten reply when it is one piece of memory (the
// body as it came, or a reply rewritten whole), valid until the next
// Rewrite; ok is false when it is made of pieces.
func (p *JSONReplyParts) Whole() (b []byte, ok bool) {
	if p.whole != nil {
		return p.whole, true
	}
	if len(p.plan.cuts()) == 0 {
		return p.plan.body, true
	}
	return nil, false
}

// Pieces appends the pieces of the rewritten reply to dst, in order (a
// net.Buffers): the body's memory and p's, valid until the next Rewrite.
// Empty pieces are left out.
func (p *JSONReplyParts) Pieces(dst [][]byte) [][]byte {
	if p.whole != nil {
		return append(dst, p.whole)
	}
	last := 0
	body := p.plan.body
	for _, c := range p.plan.cuts() {
		if c.from > last {
			dst = append(dst, body[last:c.from])
		}
		if len(c.add) > 0 {
			dst = append(dst, c.add)
		}
		last = c.to
	}
	if last < len(body) {
		dst = append(dst, body[last:])
	}
	return dst
}

// WriteTo writes the rewritten reply to w, piece by piece, and returns
// the number of bytes written.
func (p *JSONReplyParts) WriteTo(w io.Writer) (int64, error) {
	var buf [2*maxPartsCuts + 1][]byte
	var total int64
	for _, b := range p.Pieces(buf[:0]) {
		n, err := w.Write(b)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// AppendTo appends the rewritten reply to dst.
func (p *JSONReplyParts) AppendTo(dst []byte) []byte {
	if p.whole != nil {
		return append(dst, p.whole...)
	}
	return p.plan.appendTo(dst, nil)
}

// Edits of a valid JSON document are planned as cuts in one pass, where a
// path-based edit per element (sjson) would copy the whole document once
// per element: a reply with a hundred thousand choices, each with its own
// meta (chat.go's cutChoiceMetas), is then a hundred thousand copies.

// cutMember plans the removal of the first member named key of the object
// at s[o], as sjson deletes a member, and returns where the object ends:
// the member goes with the comma before it, or, when it comes first, with
// the white space before it and the comma after it.
func (p *jsonPlan) cutMember(s string, o int, key string) int {
	it := jsonscan.IterAt(s, o)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		if !jsonscan.KeyIs(k, key) {
			continue
		}
		end := jsonscan.SkipValue(s, v)
		q := it.KeyAt() - 1
		for jsonscan.IsSpace(s[q]) {
			q--
		}
		from, to := q, end // after a comma: the comma to the end of the value
		if s[q] == '{' {
			from = q + 1
			if c := jsonscan.Space(s, end); c < len(s) && s[c] == ',' {
				to = c + 1
			}
		}
		p.cut(from, to, nil, cutAdd)
		it.SkipTo(to)
		for _, _, ok := it.Next(); ok; _, _, ok = it.Next() {
		}
		return it.End()
	}
	return it.End()
}
