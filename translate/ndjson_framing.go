package translate

import "bytes"

// The NDJSON framing (SPEC 4.7): a unit is a line, one JSON object. A line
// ends at LF, a CR just before it part of its ending (a lone CR ends
// nothing); it goes out as soon as its LF is read. A line longer than
// MaxEvent (its ending excluded) passes as it arrives, unread. What the
// module writes ends with LF, is never a blank line, and has U+0085,
// U+2028 and U+2029 escaped (clients split lines on them).
type ndjsonFraming struct {
	r     *Rewriter
	buf   []byte // the line so far, when it began in an earlier write
	at    int    // where the line being read starts in the write, -1 in buf
	over  bool   // the current line outgrew MaxEvent: it passes as it arrives
	begun bool   // a line was read: a BOM is only looked for on the first
}

func newNDJSONFraming(r *Rewriter) framing { return &ndjsonFraming{r: r} }

func (f *ndjsonFraming) feed(p []byte) {
	start := 0
	for start < len(p) {
		j := bytes.IndexByte(p[start:], '\n')
		if j < 0 {
			f.keep(p[start:], start)
			return
		}
		end := start + j + 1
		switch {
		case f.over:
			f.r.emitAt(p[start:end], start)
			f.over = false
		case len(f.buf) > 0:
			f.buf = append(f.buf, p[start:end]...)
			f.at = -1
			f.line(f.buf)
			f.buf = f.buf[:0]
		default:
			f.at = start
			f.line(p[start:end])
		}
		start = end
	}
}

// keep holds the start of a line (no LF), or passes it on once the line
// is too long to hold (a CR it ends with may be its ending's, a first
// line's BOM is not counted).
func (f *ndjsonFraming) keep(rest []byte, at int) {
	limit := f.r.opts.MaxEvent + 1
	if !f.begun {
		limit += len(bom)
	}
	if !f.over && len(f.buf)+len(rest) > limit {
		f.overflow(f.buf)
		f.buf = f.buf[:0]
	}
	if f.over {
		f.r.emitAt(rest, at)
		return
	}
	f.buf = append(f.buf, rest...)
}

// overflow starts passing on a line too long to read, with what was held
// of it. The stream can then not tell whether it was cut short.
func (f *ndjsonFraming) overflow(held []byte) {
	f.over, f.r.blind, f.begun = true, true, true
	f.r.oversize()
	f.r.emitCopy(held)
}

// line reads one line, its ending included when it came.
func (f *ndjsonFraming) line(raw []byte) {
	data := dropLineEnd(raw)
	if !f.begun {
		f.begun = true
		data = bytes.TrimPrefix(data, bom)
	}
	if len(data) > f.r.opts.MaxEvent {
		f.overflow(raw)
		f.over = false
		return
	}
	f.r.unit(raw, data, f.at)
}

// dropLineEnd is a line without its LF and the CR before it.
func dropLineEnd(raw []byte) []byte {
	if n := len(raw); n > 0 && raw[n-1] == '\n' {
		raw = raw[:n-1]
		if n > 1 && raw[n-2] == '\r' {
			raw = raw[:n-2]
		}
	}
	return raw
}

func (f *ndjsonFraming) close() {
	if !f.over && len(f.buf) > 0 {
		f.at = -1
		f.line(f.buf)
	}
	f.buf, f.over = f.buf[:0], false
}

func (f *ndjsonFraming) passed([]byte)       {}
func (f *ndjsonFraming) passHeld(raw []byte) { f.r.emitCopy(raw) }

// own writes a line the module built, ended with LF, after an LF that
// ends the upstream's last line.
func (f *ndjsonFraming) own(b []byte) []byte {
	f.endLine()
	r := f.r
	r.wbuf = appendLineSafe(r.wbuf[:0], b)
	r.write(r.wbuf)
	return b
}

// splice writes the terminal line with "meta" set in the object at path
// of its data, every other byte as it came, and an LF when it had none.
func (f *ndjsonFraming) splice(term []byte, path string, meta []byte) {
	r := f.r
	data := dropLineEnd(term)
	cut := 0
	if bytes.HasPrefix(data, bom) {
		cut = len(bom)
	}
	r.wbuf = appendLineSafe(r.wbuf[:0], meta)
	r.flushPending()
	for _, piece := range spliced(term, cut, data[cut:], path, r.wbuf) {
		r.write(piece)
	}
	f.endLine()
}

// endLine ends the output's last line when the upstream's had no LF.
func (f *ndjsonFraming) endLine() {
	f.r.flushPending()
	if f.r.tail[2] != '\n' {
		f.r.write(lf)
	}
}

// appendLineSafe appends b with U+0085, U+2028 and U+2029, which only a
// JSON string can hold, escaped.
func appendLineSafe(dst, b []byte) []byte {
	for {
		i := bytes.IndexAny(b, "\u0085\u2028\u2029")
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		switch {
		case b[i] == 0xC2:
			dst = append(dst, `\u0085`...)
			b = b[i+2:]
		case b[i+2] == 0xA8:
			dst = append(dst, `\u2028`...)
			b = b[i+3:]
		default:
			dst = append(dst, `\u2029`...)
			b = b[i+3:]
		}
	}
}
