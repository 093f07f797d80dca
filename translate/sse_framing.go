package translate

import (
	"bytes"
	"slices"
)

// The SSE framing (SPEC 4.3): units are events, cut by an SSESplitter;
// their data is what their data lines hold.
//
// The events the module writes into a stream it passes on have each of
// their lines and their blank line in the stream's line ending, that of
// its first line (SPEC 8.1); never between a CR and its LF; always after a
// blank line that ends what the upstream sent before.
//
// What comes out must not depend on how the upstream's writes cut its
// bytes: a CR that ends a write may be the first half of a CRLF. So a CR
// that ends an event is treated alike whether its next byte came with it
// or not: when the module writes right after it (an event of its own), or
// the stream's line ending is CRLF, the module writes its LF at once and
// drops the upstream's LF if that is what comes next (dropLF, EventTail).
type sseFraming struct {
	r       *Rewriter
	split   SSESplitter
	scratch []byte // joined data of multi-line events

	// dropLF is set when the LF completing the last event's CRLF, should
	// it start the next write, is not to follow it (EventTail): the event
	// was withheld or replaced, or the module wrote that LF itself.
	dropLF bool

	// The stream's line ending, that of its first line: the events the
	// module writes use it.
	eol lineEnd
}

func newSSEFraming(r *Rewriter) framing {
	return &sseFraming{r: r, split: SSESplitter{Max: r.opts.MaxEvent}}
}

func (f *sseFraming) feed(p []byte) {
	if f.eol == eolUnknown || f.eol == eolCRAtEnd {
		f.learnEOL(p)
	}
	f.split.Feed(p, f)
}

func (f *sseFraming) close() {
	if f.eol == eolCRAtEnd { // the first line's CR ended the stream: no LF follows it
		f.eol = eolCR
	}
	f.split.Close(f)
}

// Event implements SSEHandler.
func (f *sseFraming) Event(raw []byte) {
	f.dropLF = true // unless it goes out as it came
	data, ok, known := f.split.Data()
	if !known && !f.r.done {
		data, ok, f.scratch = EventData(raw, f.scratch)
	}
	if !ok {
		data = nil // (an empty data line's nil passes unread as well)
	}
	if f.r.unit(raw, data, f.split.at) {
		f.passed(raw)
	}
}

// EventTail implements SSETailHandler: the LF of the last event's CRLF,
// which came in this write. It follows the event when the event went out
// as it came; it goes with the event when the event was withheld or
// replaced, or when the module already completed the CRLF.
func (f *sseFraming) EventTail(lf []byte) {
	if !f.dropLF {
		f.r.emitAt(lf, 0) // the first byte of the write
	}
}

// Oversize implements SSEHandler: a huge event passes as it arrives.
func (f *sseFraming) Oversize(p []byte, first bool) {
	if first {
		f.r.oversize()
	}
	f.dropLF = false
	f.r.emitCopy(p)
}

// passed follows an event that went out as it came: the LF of its CRLF
// follows it, and in a CRLF stream a last CR gets its LF (completeCR).
func (f *sseFraming) passed(raw []byte) {
	f.dropLF = false
	f.completeCR(raw)
}

// passHeld writes now an event of the upstream's that was held (its
// terminal event), as it came.
func (f *sseFraming) passHeld(raw []byte) {
	f.r.emitCopy(raw)
	f.passed(raw)
}

// own writes an event the module built with LF line ends, once the output
// so far ends with a blank line, so that it never runs into the
// upstream's, in the stream's line ending. It returns b's buffer for reuse.
func (f *sseFraming) own(b []byte) []byte {
	f.endOutput()
	b = f.inEOL(b)
	f.r.write(b)
	return b
}

// splice writes the terminal event with "meta" set in the object at path
// of its data, every other byte as it came.
func (f *sseFraming) splice(term []byte, path string, meta []byte) {
	r := f.r
	var data []byte
	var cut int
	data, cut, _, f.scratch = eventData(term, f.scratch)
	if cut >= 0 {
		// One data line, as every real stream sends (data is term[cut:]
		// up to its line end): the event goes out in pieces around the
		// meta, never copied whole (it carries the whole reply again).
		f.endOutput()
		for _, piece := range spliced(term, cut, data, path, meta) {
			r.write(piece)
		}
	} else {
		// Several data lines: the other lines as they came, then the data
		// in as many data lines as it came in (joined, it holds a "\n"
		// where each line ended: one line would cut the object short).
		f.endOutput()
		r.wbuf = appendEventLines(r.wbuf[:0], term, spliced(data, 0, data, path, meta))
		r.write(r.wbuf)
	}
	// It ends as the upstream's event ended, and always with a blank line
	// (SPEC 4.3): an event cut short by the end of the stream is one no
	// client would dispatch. Its ending went out as it came: the LF of a
	// CRLF it ended with follows it, unless endOutput completes the CR.
	f.dropLF = false
	f.endOutput()
}

// lineEnd is a stream's line ending.
type lineEnd uint8

const (
	eolUnknown lineEnd = iota // no line has ended yet
	eolLF
	eolCRLF
	eolCR
	eolCRAtEnd // a CR that ended a write: its LF may start the next
)

// eolText is each line ending's text ("\n" until the stream's is known).
var eolText = [...]string{eolUnknown: "\n", eolLF: "\n", eolCRLF: "\r\n", eolCR: "\r", eolCRAtEnd: "\r"}

// firstLineEnd is the line ending of p's first line.
func firstLineEnd(p []byte) lineEnd {
	i := bytes.IndexAny(p, "\r\n")
	switch {
	case i < 0:
		return eolUnknown
	case p[i] == '\n':
		return eolLF
	case i+1 == len(p):
		return eolCRAtEnd
	case p[i+1] == '\n':
		return eolCRLF
	}
	return eolCR
}

// learnEOL reads the line ending of the stream's first line from the next
// bytes it sent.
func (f *sseFraming) learnEOL(p []byte) {
	switch {
	case len(p) == 0:
	case f.eol == eolCRAtEnd: // does that CR's LF start this write?
		f.eol = eolCR
		if p[0] == '\n' {
			f.eol = eolCRLF
		}
	default:
		f.eol = firstLineEnd(p)
	}
}

// completeCR follows an event that went out as it came, in a stream whose
// line ending is CRLF, with the LF of its last CR (SPEC 8.1): the client
// gets the event's line break whole at once, even when the upstream's LF
// comes in a later write (and is then dropped).
func (f *sseFraming) completeCR(raw []byte) {
	if f.eol == eolCRLF && len(raw) > 0 && raw[len(raw)-1] == '\r' {
		f.r.flushPending()
		f.r.write(lf)
		f.dropLF = true
	}
}

var lf = []byte{'\n'}

// endOutput makes the output, pending output included, end with a blank
// line: when it does not (an unterminated last event at Close, or one that
// ended in a CR whose LF has not come), it writes the line ends it lacks. A
// CR last written gets its LF first, whatever comes next from the upstream.
func (f *sseFraming) endOutput() {
	r := f.r
	r.flushPending()
	t := r.tail
	last := t[2]
	k := 2 // start of the last line end
	if last == '\n' && t[1] == '\r' {
		k = 1
	}
	blank := t[k-1] == '\n' || t[k-1] == '\r'
	b := r.wbuf[:0]
	switch {
	case last == '\r':
		b = append(b, '\n') // the CR completed: the upstream's LF, should it come next, is dropped
		f.dropLF = true
	case last != '\n':
		blank = false // inside a line: it ends first
		b = append(b, eolText[f.eol]...)
	}
	if !blank {
		b = append(b, eolText[f.eol]...)
	}
	r.wbuf = b[:0]
	r.write(b)
}

// inEOL returns b, an event the module built with LF line ends, in the
// stream's line ending. Its JSON holds no raw line break: every LF there
// ends a line.
func (f *sseFraming) inEOL(b []byte) []byte {
	switch f.eol {
	case eolCR:
		for i, c := range b {
			if c == '\n' {
				b[i] = '\r'
			}
		}
	case eolCRLF:
		// In place, from the end: each byte moves up by the number of
		// LFs up to it, and each LF gets its CR.
		n := bytes.Count(b, lf)
		b = slices.Grow(b, n)[:len(b)+n]
		for i := len(b) - n - 1; n > 0; i-- {
			b[i+n] = b[i]
			if b[i] == '\n' {
				n--
				b[i+n] = '\r'
			}
		}
	}
	return b
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
