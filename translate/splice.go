package translate

import (
	"bytes"
	"slices"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// ReasonNoTerminalEvent is the fallback of a Responses or Anthropic stream
// that ended without its terminal event: it gets no meta (SPEC 4.4, 4.5).
const ReasonNoTerminalEvent = "no_terminal_event"

// endSpliced is the ending of the protocols that carry meta in their
// terminal event: the event goes out with "meta" set in the object at path
// of its data ("" the data object itself), every other byte as it came. A
// stream that ended without a terminal event gets no meta.
func (r *SSERewriter) endSpliced(term []byte, path string) {
	if term == nil {
		r.reply.Cut = true
		if r.opts.Warn != nil {
			r.opts.Warn(ReasonNoTerminalEvent)
		}
		return
	}
	if !r.opts.FinalMeta || r.reply.Meta.Empty() {
		r.emitEvent(term)
		return
	}
	var data []byte
	var cut int
	data, cut, _, r.scratch = eventData(term, r.scratch)
	meta := r.reply.Meta.JSON()
	if cut >= 0 {
		// One data line, as every real stream sends (data is term[cut:]
		// up to its line end): the event goes out in pieces around the
		// meta, never copied whole (it carries the whole reply again).
		r.endOutput()
		for _, piece := range spliced(term, cut, data, path, meta) {
			r.write(piece)
		}
	} else {
		// Several data lines: the other lines as they came, then the data
		// in as many data lines as it came in (joined, it holds a "\n"
		// where each line ended: one line would cut the object short).
		r.write(appendEventLines(r.ownBuf(), term, spliced(data, 0, data, path, meta)))
	}
	if r.opts.Stats != nil {
		r.opts.Stats.FinalMeta++
	}
	// It ends as the upstream's event ended, and always with a blank line
	// (SPEC 4.3): an event cut short by the end of the stream is one no
	// client would dispatch. Its ending went out as it came: the LF of a
	// CRLF it ended with follows it, unless endOutput completes the CR.
	r.dropLF = false
	r.endOutput()
}

// spliced is b, whose bytes from cut on are the JSON object data, in the
// pieces it goes out in with "meta": meta set in the object at path of data
// ("" data itself); b as it came when data has no such object (see
// splicePoint).
func spliced(b []byte, cut int, data []byte, path string, meta []byte) [4][]byte {
	at, skip, prefix, ok := splicePoint(data, path)
	if !ok {
		return [4][]byte{b}
	}
	at += cut
	return [4][]byte{b[:at], prefix, meta, b[at+skip:]}
}

var (
	metaMember      = []byte(`"meta":`)
	metaAfterMember = []byte(`,"meta":`)
)

// splicePoint says where "meta" goes in the JSON object data, in the object
// at path ("" data itself): the meta's value goes at data[at], after
// prefix, in place of the skip bytes there (an existing meta's value is
// replaced; else the member is added at the object's end). ok is false when
// data is not valid JSON or has no object there: not ours to mend.
func splicePoint(data []byte, path string) (at, skip int, prefix []byte, ok bool) {
	s := strView(data)
	obj := jsonscan.Space(s, 0)
	if !jsonscan.Valid(s) || s[obj] != '{' {
		return 0, 0, nil, false
	}
	if path != "" {
		v, _, found := jsonscan.FindMember(s, obj, path)
		if !found || s[v] != '{' {
			return 0, 0, nil, false
		}
		obj = v
	}
	if v, end, found := jsonscan.FindMember(s, obj, "meta"); found {
		return v, end - v, nil, true
	}
	end := jsonscan.SkipValue(s, obj) - 1 // its closing '}'
	if jsonscan.Space(s, obj+1) < end {
		return end, 0, metaAfterMember, true
	}
	return end, 0, metaMember, true
}

// appendEventLines appends the event raw again with data (its pieces, in
// order) as its data: its lines that are not data lines as they came, then
// one data: line for each line of data, each line ended as raw's first line
// is, and raw's own ending (its last line end and blank line, as far as
// they came) last, so that a CRLF whose LF comes in the next write still
// completes it. The pieces are not joined first: the event may carry the
// whole reply.
func appendEventLines(dst, raw []byte, data [4][]byte) []byte {
	body := bytes.TrimRight(raw, "\r\n")
	eol := eolText[firstLineEnd(raw)]
	for _, line := range bytes.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if _, isData := dataField(line); !isData {
			dst = append(append(dst, line...), eol...)
		}
	}
	// Each data line of raw is at least "data:" and a line end, and gains at
	// most a space: room for raw, the meta, and that space, at once.
	dst = slices.Grow(dst, len(raw)+len(raw)/6+len(data[1])+len(data[2]))
	dst = append(dst, "data: "...)
	for _, piece := range data {
		for more := true; more; {
			var line []byte
			line, piece, more = bytes.Cut(piece, lf)
			dst = append(dst, line...)
			if more {
				dst = append(append(dst, eol...), "data: "...)
			}
		}
	}
	return append(dst, raw[len(body):]...)
}
