package translate

import (
	"bytes"
	"strings"

	"github.com/tidwall/gjson"
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
		if r.opts.Warn != nil {
			r.opts.Warn(ReasonNoTerminalEvent)
		}
		return
	}
	if !r.opts.FinalMeta || r.reply.Meta.Empty() {
		r.emitCopy(term)
		return
	}
	var data []byte
	data, _, r.scratch = EventData(term, r.scratch)
	buf := r.ownBuf()
	meta := r.reply.Meta.JSON()
	if within(term, data) {
		// One data line, as every real stream sends: splice in place.
		off := offsetIn(term, data)
		buf = append(buf, term[:off]...)
		buf = appendSplicedMeta(buf, data, path, meta)
		buf = append(buf, term[off+len(data):]...)
	} else {
		// Several data lines: the other lines as they came, the data as one.
		buf = appendNonDataLines(buf, term)
		buf = append(buf, "data: "...)
		buf = appendSplicedMeta(buf, data, path, meta)
		buf = append(buf, "\n\n"...)
	}
	if r.opts.Stats != nil {
		r.opts.Stats.FinalMeta++
	}
	r.emitOwn(buf)
}

// offsetIn returns where b starts inside outer's memory, or -1.
func offsetIn(outer, b []byte) int {
	if !within(outer, b) {
		return -1
	}
	return cap(outer) - cap(b)
}

// appendSplicedMeta appends the JSON object data with "meta": meta set in
// the object at path ("" data itself): an existing meta's value replaced,
// else the member added at the object's end.
func appendSplicedMeta(dst, data []byte, path string, meta []byte) []byte {
	s := unsafeString(data)
	objStart, obj := 0, gjson.Parse(s)
	if path != "" {
		obj = gjson.Get(s, path)
		objStart = obj.Index
	}
	if !obj.IsObject() || objStart < 0 || objStart+len(obj.Raw) > len(s) || s[objStart:objStart+len(obj.Raw)] != obj.Raw {
		return append(dst, data...) // nowhere to put it: as it came
	}
	if old := gjson.Get(obj.Raw, "meta"); old.Exists() && old.Index > 0 {
		at := objStart + old.Index
		dst = append(dst, data[:at]...)
		dst = append(dst, meta...)
		return append(dst, data[at+len(old.Raw):]...)
	}
	end := objStart + len(obj.Raw) - 1 // its closing '}'
	dst = append(dst, data[:end]...)
	if bytes.ContainsFunc(data[objStart+1:end], func(r rune) bool { return !isJSONSpace(byte(r)) }) {
		dst = append(dst, ',')
	}
	dst = append(dst, `"meta":`...)
	dst = append(dst, meta...)
	return append(dst, data[end:]...)
}

// appendNonDataLines appends the lines of an event that are not data lines
// (event:, id:, comments), each with a LF.
func appendNonDataLines(dst, raw []byte) []byte {
	for _, line := range strings.FieldsFunc(string(raw), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line == "data" || len(line) >= 5 && line[:5] == "data:" {
			continue
		}
		dst = append(dst, line...)
		dst = append(dst, '\n')
	}
	return dst
}
