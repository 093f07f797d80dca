package translate

import (
	"bytes"
	"slices"
)

// Line endings of the events the module writes into a stream it passes on
// (SPEC 4.3, 8.1): each of their lines and their blank line in the
// stream's line ending, that of its first line; never between a CR and its
// LF; always after a blank line that ends what the upstream sent before.
//
// What comes out must not depend on how the upstream's writes cut its
// bytes: a CR that ends a write may be the first half of a CRLF. So a CR
// that ends an event is treated alike whether its next byte came with it
// or not: when the module writes right after it (an event of its own), or
// the stream's line ending is CRLF, the module writes its LF at once and
// drops the upstream's LF if that is what comes next (dropLF, EventTail).

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
func (r *SSERewriter) learnEOL(p []byte) {
	switch {
	case len(p) == 0:
	case r.eol == eolCRAtEnd: // does that CR's LF start this write?
		r.eol = eolCR
		if p[0] == '\n' {
			r.eol = eolCRLF
		}
	default:
		r.eol = firstLineEnd(p)
	}
}

// completeCR follows an event that went out as it came, in a stream whose
// line ending is CRLF, with the LF of its last CR (SPEC 8.1): the client
// gets the event's line break whole at once, even when the upstream's LF
// comes in a later write (and is then dropped).
func (r *SSERewriter) completeCR(raw []byte) {
	if r.eol == eolCRLF && len(raw) > 0 && raw[len(raw)-1] == '\r' {
		r.writeLF()
	}
}

// writeLF writes the LF completing the CR an event that went out ended in
// (apart from completeCR, which is inlined where every event goes out).
func (r *SSERewriter) writeLF() {
	r.flushPending()
	r.write(lf)
	r.dropLF = true
}

var lf = []byte{'\n'}

// endOutput makes the output, pending output included, end with a blank
// line: when it does not (an unterminated last event at Close, or one that
// ended in a CR whose LF has not come), it writes the line ends it lacks. A
// CR last written gets its LF first, whatever comes next from the upstream.
func (r *SSERewriter) endOutput() {
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
		r.dropLF = true
	case last != '\n':
		blank = false // inside a line: it ends first
		b = append(b, eolText[r.eol]...)
	}
	if !blank {
		b = append(b, eolText[r.eol]...)
	}
	r.wbuf = b[:0]
	r.write(b)
}

// inEOL returns b, an event the module built with LF line ends, in the
// stream's line ending. Its JSON holds no raw line break: every LF there
// ends a line.
func (r *SSERewriter) inEOL(b []byte) []byte {
	switch r.eol {
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
