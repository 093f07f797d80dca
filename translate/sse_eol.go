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
)

// eolText is each line ending's text ("\n" until the stream's is known).
var eolText = [...]string{eolUnknown: "\n", eolLF: "\n", eolCRLF: "\r\n", eolCR: "\r"}

// learnEOL reads the line ending of the stream's first line from the next
// bytes it sent.
func (r *SSERewriter) learnEOL(p []byte) {
	if len(p) == 0 {
		return
	}
	if r.eolCR {
		r.eolCR = false
		r.eol = eolCR
		if p[0] == '\n' {
			r.eol = eolCRLF
		}
		return
	}
	i := bytes.IndexAny(p, "\r\n")
	switch {
	case i < 0:
	case p[i] == '\n':
		r.eol = eolLF
	case i+1 == len(p):
		r.eolCR = true // its LF, if any, comes in the next write
	case p[i+1] == '\n':
		r.eol = eolCRLF
	default:
		r.eol = eolCR
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

// writeLF writes the LF completing the CR an event that went out ended in.
func (r *SSERewriter) writeLF() {
	r.flushPending()
	r.write(lf)
	r.dropLF = r.split.eventCR
}

var lf = []byte{'\n'}

// eventEnd returns the line ends that make the output written so far end
// with a blank line: "" when it does (or nothing was written). A CR last
// written gets its LF first, whatever comes next from the upstream.
func (r *SSERewriter) eventEnd() string {
	t := r.tail[3-r.ntail:]
	n := len(t)
	if n == 0 {
		return ""
	}
	eol := eolText[r.eol]
	last := t[n-1]
	if last != '\n' && last != '\r' {
		return eol + eol // inside a line
	}
	k := n - 1 // start of the last line end
	if last == '\n' && k > 0 && t[k-1] == '\r' {
		k--
	}
	blank := k == 0 || t[k-1] == '\n' || t[k-1] == '\r'
	if last == '\r' && r.lastRaw && r.split.eventCR {
		r.dropLF = true // the upstream may still send the LF written here
	}
	switch {
	case last == '\r' && blank:
		return "\n" // the blank line's CR, completed
	case last == '\r':
		return "\n" + eol // the line's CR completed, then a blank line
	case blank:
		return ""
	}
	return eol
}

// inEOL returns b with the LF line ends of b[from:], an event the module
// built, in the stream's line ending. Its JSON holds no raw line break:
// every LF there ends a line.
func (r *SSERewriter) inEOL(b []byte, from int) []byte {
	switch r.eol {
	case eolCR:
		for i := from; i < len(b); i++ {
			if b[i] == '\n' {
				b[i] = '\r'
			}
		}
	case eolCRLF:
		n := bytes.Count(b[from:], lf)
		if n == 0 {
			return b
		}
		out := slices.Grow(r.eolBuf[:0], len(b)+n)
		out = append(out, b[:from]...)
		for _, c := range b[from:] {
			if c == '\n' {
				out = append(out, '\r')
			}
			out = append(out, c)
		}
		r.eolBuf = out[:0]
		return out
	}
	return b
}
