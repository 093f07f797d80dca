package translate

import "bytes"

// lineSplitter cuts a body into lines, the units of the NDJSON framing
// (SPEC 4.7) and the data stream's parts (SPEC 5.1): a line ends at LF, a
// CR just before it part of its ending (a lone CR ends nothing), and a BOM
// before the first line is no part of it. A line longer than max (its
// ending and that BOM excluded) is not held: it goes to the sink in pieces
// as they arrive. It holds at most one line's start, bounded by max.
type lineSplitter struct {
	max   int
	buf   []byte // the line so far, when it began in an earlier write
	over  bool   // the current line outgrew max: it goes on in pieces
	begun bool   // a line was read: a BOM is only looked for on the first
}

// lineSink takes what a lineSplitter cuts. raw is a line's bytes, its
// ending included when it came, data the line without its ending (nor the
// first line's BOM), at where raw starts in the write (-1: in a buffer
// reused right after). longLine takes the pieces of a line too long to
// hold, first its first.
type lineSink interface {
	line(raw, data []byte, at int)
	longLine(p []byte, at int, first bool)
}

func (s *lineSplitter) feed(p []byte, k lineSink) {
	for start := 0; start < len(p); {
		end := len(p)
		if j := bytes.IndexByte(p[start:], '\n'); j >= 0 {
			end = start + j + 1
		}
		if line := p[start:end]; end-start <= s.max && s.begun && !s.over && len(s.buf) == 0 && line[len(line)-1] == '\n' {
			k.line(line, lineData(line, false), start) // the usual line: short, whole in p
		} else {
			s.piece(line, start, k)
		}
		start = end
	}
}

// piece takes the bytes of a line up to its LF or the write's end, at
// where they start in the write. A line's start is held up to max, room
// for a CR that may be its ending's, and on the first line a BOM.
func (s *lineSplitter) piece(b []byte, at int, k lineSink) {
	ended := b[len(b)-1] == '\n'
	limit := s.max + 1
	if !s.begun {
		limit += len(bom)
	}
	n := len(s.buf) + len(b)
	if ended {
		n-- // the LF
	}
	switch {
	case s.over:
		k.longLine(b, at, false)
	case n > limit:
		s.over, s.begun = true, true
		k.longLine(s.buf, -1, true)
		k.longLine(b, at, false)
		s.buf = s.buf[:0]
	case !ended:
		s.buf = appendBounded(s.buf, b, limit)
	case len(s.buf) > 0:
		s.buf = appendBounded(s.buf, b, limit+1)
		s.line(s.buf, -1, k, false)
		s.buf = s.buf[:0]
	default:
		s.line(b, at, k, false)
	}
	s.over = s.over && !ended
}

// line hands on one line, its ending included when it came; crEnds: a
// last CR ends it even without an LF (the data stream's, at the end).
func (s *lineSplitter) line(raw []byte, at int, k lineSink, crEnds bool) {
	data := lineData(raw, crEnds)
	if !s.begun {
		s.begun = true
		data = bytes.TrimPrefix(data, bom)
	}
	if len(data) > s.max {
		k.longLine(raw, at, true)
		return
	}
	k.line(raw, data, at)
}

// lineData is a line without its LF and a CR just before it (or, with
// crEnds, a last CR).
func lineData(raw []byte, crEnds bool) []byte {
	if n := len(raw); n > 0 && raw[n-1] == '\n' {
		raw, crEnds = raw[:n-1], true
	}
	if n := len(raw); crEnds && n > 0 && raw[n-1] == '\r' {
		raw = raw[:n-1]
	}
	return raw
}

// close hands on a last line without an LF.
func (s *lineSplitter) close(k lineSink, crEnds bool) {
	if !s.over && len(s.buf) > 0 {
		s.line(s.buf, -1, k, crEnds)
	}
	s.buf, s.over = s.buf[:0], false
}

// The NDJSON framing (SPEC 4.7): a unit is a line, one JSON object; it
// goes out as soon as its LF is read. A line longer than MaxEvent passes
// as it arrives, unread. What the module writes ends with LF, is never a
// blank line, and has U+0085, U+2028 and U+2029 escaped (clients split
// lines on them).
type ndjsonFraming struct {
	r     *Rewriter
	split lineSplitter
}

func newNDJSONFraming(r *Rewriter) framing {
	return &ndjsonFraming{r: r, split: lineSplitter{max: r.opts.MaxEvent}}
}

func (f *ndjsonFraming) feed(p []byte) { f.split.feed(p, f) }
func (f *ndjsonFraming) close()        { f.split.close(f, false) }

func (f *ndjsonFraming) line(raw, data []byte, at int) { f.r.unit(raw, data, at) }

// longLine passes on a line too long to read: the stream can then not
// tell whether it was cut short.
func (f *ndjsonFraming) longLine(p []byte, at int, first bool) {
	if first {
		f.r.blind = true
		f.r.oversize()
	}
	f.r.emitAt(p, at)
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
	data := lineData(term, false)
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
