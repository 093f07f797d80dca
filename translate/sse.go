package translate

import "bytes"

// SSEHandler receives what an SSESplitter cuts out of a stream.
type SSEHandler interface {
	// Event gets one complete event: its original bytes, from the first byte
	// after the previous event up to and including the blank line that ends
	// it. raw is only valid during the call.
	Event(raw []byte)
	// Oversize gets the bytes of an event larger than the splitter's limit, as
	// they arrive, uninspected. first is true for the first piece of such an
	// event. p is only valid during the call.
	Oversize(p []byte, first bool)
}

// SSETailHandler is an SSEHandler that also takes the LF of a CRLF whose CR
// ended an event at the end of one Feed and whose LF starts the next (SPEC
// 8.1, "line endings stay whole"): it belongs to the event before, and
// EventTail gets it as soon as it arrives. A handler without EventTail
// gets it at the front of the next event's bytes.
type SSETailHandler interface {
	SSEHandler
	EventTail(lf []byte)
}

// SSESplitter cuts a text/event-stream body into events by the WHATWG rules:
// lines end in CRLF, LF or CR (a CRLF split across two writes included), and
// a blank line ends an event. It keeps each event's bytes exactly and carries
// a partial event from one Feed to the next. Memory stays bounded by max: an
// event that grows past it is handed on piece by piece as it arrives.
//
// The zero value is not usable; set Max.
type SSESplitter struct {
	Max int

	buf      []byte // bytes of the event being read
	lineLen  int    // bytes of the current line so far, terminator excluded
	skipLF   bool   // the last byte was CR: a LF right after it is part of it
	oversize bool   // the current event outgrew Max and is being passed on
	// eventCR: that CR ended the last event handed on (or being handed
	// on), and a LF that starts the next Feed is that event's tail.
	eventCR bool

	// What the current event's lines say of its data, read as the lines
	// are found (EventData's reading), so that the handler need not look
	// for them again: how many data lines, the value of the last one (a
	// slice of the Feed's input, never kept past the Feed), and whether a
	// line began with a byte-order mark (left to EventData). Handed on
	// (Data) only with an event that lies wholly in one Feed's input.
	dataLines int
	data      []byte
	dataBOM   bool
	hinted    bool // Event is being given such an event

	// at is where the event being handed to Event starts in the Feed's
	// input, -1 when it was carried over from an earlier Feed (it is then
	// in the splitter's buffer, reused after the call): a handler that
	// keeps a slice of the input till the Feed's end knows by it what it
	// holds, without comparing addresses.
	at int

	// halted is set by a handler that has what it wanted (eventGrab):
	// Feed returns after the event it was given, so that the rest of a
	// large write is not split for nothing. A halted splitter is not fed
	// again.
	halted bool
}

// Feed splits p, calling h for every event it completes. Events that lie
// wholly inside p are handed over without a copy.
func (s *SSESplitter) Feed(p []byte, h SSEHandler) {
	if len(p) == 0 {
		return // an empty write changes nothing (a LF may still come)
	}
	start := 0 // first byte of p not yet handed on or buffered
	i := 0
	if s.eventCR {
		s.eventCR = false
		if th, ok := h.(SSETailHandler); ok && p[0] == '\n' {
			s.skipLF = false
			th.EventTail(p[:1])
			start, i = 1, 1
		}
	}
	eol := eolFinder{b: p, nl: -2}
	for i < len(p) {
		if s.skipLF {
			s.skipLF = false
			if p[i] == '\n' {
				i++
				continue
			}
		}
		end := i // an empty line (an event's blank line) ends here: no search
		if c := p[i]; c != '\n' && c != '\r' {
			end = eol.next(i)
		}
		if end < 0 {
			s.lineLen += len(p) - i
			break
		}
		if s.lineLen == 0 && end > i { // a line that starts here: is it data?
			if value, ok := dataField(p[i:end]); ok {
				s.dataLines++
				s.data = value
			} else if p[i] == bom[0] {
				s.dataBOM = true // left to EventData
			}
		}
		s.lineLen += end - i
		blank := s.lineLen == 0
		s.lineLen = 0
		i = end + 1
		if p[end] == '\r' {
			if i == len(p) {
				s.skipLF = true
			} else if p[i] == '\n' {
				i++
			}
		}
		if !blank {
			continue
		}
		// A blank line: the event is complete. Its size leaves out the LF
		// of a CRLF that ends it, which may come in the next write: an
		// event is as large however the writes cut it.
		s.eventCR = s.skipLF // it ended on a CR that ends p: its LF may follow
		size := i - start
		if i-end == 2 {
			size--
		}
		switch {
		case s.oversize || len(s.buf)+size > s.Max:
			s.overflow(p[start:i], h)
			s.oversize = false
		case len(s.buf) == 0:
			s.hinted = s.dataLines <= 1 && !s.dataBOM
			s.at = start
			h.Event(p[start:i])
			s.hinted, s.at = false, -1
		default:
			s.buf = appendBounded(s.buf, p[start:i], s.Max)
			s.at = -1
			h.Event(s.buf)
			s.buf = s.buf[:0]
		}
		start = i
		s.dataLines, s.data, s.dataBOM = 0, nil, false
		if s.halted {
			return
		}
	}
	s.data = nil // the event goes on in the next Feed: Data will not be asked
	if start < len(p) {
		s.keep(p[start:], h)
	}
}

// dataField reports whether line (without its terminator) is a data field
// by the WHATWG rules ("data", or "data:" and a value, one leading space
// removed; not a field such as "datax"), and returns its value.
func dataField(line []byte) (value []byte, ok bool) {
	if len(line) < 4 || line[0] != 'd' || string(line[:4]) != "data" {
		return nil, false
	}
	switch {
	case len(line) == 4:
		return nil, true
	case line[4] == ':':
		value = line[5:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		return value, true
	}
	return nil, false
}

// Data returns, during a call of Event, what EventData would find in the
// event, when the splitter read it on the way: known is false when it did
// not (the event came in pieces, or has several data lines), and the
// handler reads it itself.
func (s *SSESplitter) Data() (data []byte, ok, known bool) {
	if !s.hinted {
		return nil, false, false
	}
	return s.data, s.dataLines == 1, true
}

// keep holds the unfinished tail of an event (not empty), or passes it on
// once the event is too large to hold.
func (s *SSESplitter) keep(rest []byte, h SSEHandler) {
	if s.oversize || len(s.buf)+len(rest) > s.Max {
		s.overflow(rest, h)
		s.oversize = true
		return
	}
	s.buf = appendBounded(s.buf, rest, s.Max)
}

// overflow hands on piece of an event too large to hold, after what was
// held of it; the first piece of such an event says so.
func (s *SSESplitter) overflow(piece []byte, h SSEHandler) {
	first := !s.oversize
	if len(s.buf) > 0 {
		h.Oversize(s.buf, true)
		s.buf, first = s.buf[:0], false
	}
	h.Oversize(piece, first)
}

// Close ends the stream: an unterminated last event is handed on as an event
// (the end of the stream ends it), and the splitter is ready for another.
func (s *SSESplitter) Close(h SSEHandler) {
	if !s.oversize && len(s.buf) > 0 {
		s.at = -1
		h.Event(s.buf)
	}
	*s = SSESplitter{Max: s.Max, buf: s.buf[:0]}
}

var bom = []byte("\xEF\xBB\xBF")

// eolFinder finds line ends (CR or LF) in one buffer with two vectorised
// IndexByte scans instead of a byte-at-a-time IndexAny. It remembers where
// the next LF is, so that lines ended by CR alone are not rescanned for an
// LF each time: every byte is looked at a bounded number of times.
type eolFinder struct {
	b  []byte
	nl int // index of the next LF at or after the last search; -1: none left; -2: not searched yet
}

// next returns the index of the first CR or LF at or after i, or -1.
func (f *eolFinder) next(i int) int {
	if f.nl != -1 && f.nl < i {
		if j := bytes.IndexByte(f.b[i:], '\n'); j >= 0 {
			f.nl = i + j
		} else {
			f.nl = -1
		}
	}
	end := f.nl
	if end < 0 {
		end = len(f.b)
	}
	if j := bytes.IndexByte(f.b[i:end], '\r'); j >= 0 {
		return i + j
	}
	return f.nl
}

// EventData returns the data of an event by the WHATWG field rules: the
// values of its "data" lines (one leading space removed) joined with "\n".
// Comment lines (starting with ':') and other fields are skipped. ok is false
// when the event has no data line. When there is a single data line the
// result aliases raw; otherwise it is built in scratch, which is returned
// for reuse.
func EventData(raw, scratch []byte) (data []byte, ok bool, scratchOut []byte) {
	data, _, ok, scratchOut = eventData(raw, scratch)
	return data, ok, scratchOut
}

// eventData is EventData, and also where a single data line's value
// starts in raw (at; -1 when the data was joined in scratch).
func eventData(raw, scratch []byte) (data []byte, at int, ok bool, scratchOut []byte) {
	skip := len(raw)
	raw = bytes.TrimPrefix(raw, bom)
	skip -= len(raw)
	lines := 0
	eol := eolFinder{b: raw, nl: -2}
	for i := 0; i < len(raw); {
		j := eol.next(i) // where the line ends
		if j < 0 {
			j = len(raw)
		}
		line := raw[i:j]
		i = j + 1
		if i < len(raw) && raw[j] == '\r' && raw[i] == '\n' {
			i++
		}
		value, isData := dataField(line)
		if !isData {
			continue
		}
		switch lines {
		case 0:
			data = value
			at = skip + j - len(value) // the value ends its line
		case 1:
			if cap(scratch) < len(raw) {
				// The joined data is never longer than the event: room
				// for all of it at once, and no more.
				scratch = make([]byte, 0, len(raw))
			}
			scratch = append(append(append(scratch[:0], data...), '\n'), value...)
			data, at = scratch, -1
		default:
			scratch = append(append(scratch, '\n'), value...)
			data = scratch
		}
		lines++
	}
	if lines == 0 {
		at = -1
	}
	return data, at, lines > 0, scratch
}
