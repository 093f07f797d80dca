package translate

// StartWatch follows the bytes held while the format of a text/plain or
// text/event-stream body is still unknown (SPEC 4: its first line or event
// decides, DetectStart), and tells the caller when looking at them again
// with DetectStart can give an answer. Looking costs the bytes held, so
// looking at every write that holds a line end would cost the square of
// what is held when an upstream sends its first event a few bytes at a
// time, or a long run of line ends before it: here each write is looked at
// once, and the held bytes a few times in all.
type StartWatch struct {
	seen     int  // bytes held so far
	nonBlank int  // bytes held that are not line ends after the first one that is not
	lineDone bool // a line end came after that first byte: the first line is complete
	prev     byte // the last byte held (a blank line can straddle two writes)
}

// Worth records p, the bytes just held of a body of format f (a sniffed
// one), and reports whether looking at everything held may now decide:
// while the first 8 bytes come (they can rule a data stream out), when the
// first byte that is not a line end comes and the one after it (the same),
// when the first line completes (a data stream is known by it), and, in an
// event stream, when a blank line completes the first event. The limit
// (max_event_bytes) is the caller's to check.
func (w *StartWatch) Worth(p []byte, f Format) bool {
	eventStream := f == FormatSniffEvents
	look := w.seen+len(p) <= 8
	for i, c := range p {
		eol := c == '\r' || c == '\n'
		if pos := w.seen + i; pos < len(bom) && c == bom[pos] && w.nonBlank == 0 {
			continue // a leading BOM is not part of the first line
		}
		switch {
		case !eol:
			look = look || w.nonBlank < 2
			w.nonBlank++
		case w.nonBlank > 0 && !w.lineDone:
			w.lineDone = true
			look = true
		}
		if eventStream && eol {
			before := w.prev
			if i > 0 {
				before = p[i-1]
			} else if w.seen == 0 {
				before = '\n' // a line end first: a blank line
			}
			// Two line ends in a row, unless they are one CRLF.
			if (before == '\r' || before == '\n') && !(before == '\r' && c == '\n') {
				look = true
			}
		}
	}
	w.seen += len(p)
	if len(p) > 0 {
		w.prev = p[len(p)-1]
	}
	return look
}
