package translate

import (
	"bytes"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// Format is what an upstream reply's body is, by the mode table of SPEC 4,
// which lives here and in the registration table (protocols.go): the
// formats below are the table's own; every registered protocol has one
// more, numbered at registration (FormatSSE, FormatResponses, …, declared
// in the protocols' files).
type Format uint8

const (
	FormatNone        Format = iota // not inspected
	FormatJSON                      // a JSON reply (read by the protocol its top level names)
	FormatOther                     // anything else: passes untouched
	FormatSniffPlain                // text/plain: its first line decides
	FormatSniffEvents               // text/event-stream: its first event with data decides
	// NumFormats bounds the formats, the protocols' included.
	NumFormats Format = 32
)

func (f Format) String() string {
	switch p := protocolOf(f); {
	case p != nil:
		return p.name
	case f == FormatJSON:
		return "json"
	case f == FormatOther:
		return "other"
	case f.Undecided():
		return "undecided"
	}
	return "none"
}

// Undecided reports whether the start of the body must still decide.
func (f Format) Undecided() bool { return f == FormatSniffPlain || f == FormatSniffEvents }

// Stream reports whether the reply is read as a stream of events.
func (f Format) Stream() bool {
	p := protocolOf(f)
	return p != nil && (p.stream != nil || p.convert != nil)
}

// Converted reports whether the stream is converted into chat chunks (SPEC
// 5): it then gets the headers of an event stream of our own.
func (f Format) Converted() bool {
	p := protocolOf(f)
	return p != nil && p.convert != nil
}

// ReplyHeaders are the response headers the mode table reads.
type ReplyHeaders struct {
	MediaType string // Content-Type without parameters, lower case
	Header    Header // every header field, under canonical keys
	// What a request protocol's replyFormat may also read: the request's
	// path (without the query), and whether the reply is held whole
	// whatever its format (run-once, the edge endpoint: SPEC 6).
	Path string
	Held bool
}

// Detector decides the format of a 2xx reply once, by SPEC 4's mode table:
// from its headers and, when they leave it open, from the start of its
// body. Each Answer says all the caller does next. It follows the bytes
// shown (startWatch): a first event sent a few bytes at a time is looked
// at a few times in all, not once per write.
type Detector struct {
	f             Format // from the headers; FormatSniffPlain or FormatSniffEvents while the body decides
	convert, held bool   // convert_streams; ReplyHeaders.Held: nothing goes out before the format is known
	max           int    // max_event_bytes: a start that decides nothing within it is no protocol's
	watch         startWatch
}

// Answer is what a Detector knows of a reply so far: its Format once
// decided (FormatOther: it passes untouched), a sniffed one while more
// bytes must come. Early: the headers go to the client now, then the first
// Lead bytes shown, an event stream's events without data before its first
// with data (they do not decide the format and are not held back, SPEC 4);
// with Lead 0, the headers are the client's whatever the format (an event
// stream no conversion can follow).
type Answer struct {
	Format Format
	Early  bool
	Lead   int
}

// Decided reports whether the answer names the reply's format.
func (a Answer) Decided() bool { return !a.Format.Undecided() }

// Headers decides from the headers of a reply to a request of kind, when
// they are enough. convert is convert_streams, max max_event_bytes.
func (d *Detector) Headers(kind RequestKind, h ReplyHeaders, convert bool, max int) Answer {
	*d = Detector{f: formatOfHeaders(kind, h, convert), convert: convert, held: h.Held, max: max}
	return Answer{Format: d.f, Early: d.f == FormatSniffEvents && !convert && !h.Held}
}

// Body decides from held, the start of the body not yet passed on, whose
// last fresh bytes have just come; end: the body has ended, decide on what
// there is. The caller writes the Lead bytes out and, while the format is
// undecided, holds the rest and shows it again with the next bytes.
func (d *Detector) Body(held []byte, fresh int, end bool) Answer {
	events := d.f == FormatSniffEvents
	if fresh == len(held) && !end { // nothing held before: a first write usually decides alone
		a := d.look(held, false, false)
		if !a.Decided() {
			d.watch.worth(held, events)
		}
		return a
	}
	if !d.watch.worth(held[len(held)-fresh:], events) && !end && len(held) <= d.max {
		return Answer{Format: d.f}
	}
	return d.look(held, end, true)
}

// look decides from b, the bytes held, and finds the events without data
// at its start, which go out unless the reply is held. leadFirst: they go
// before deciding and do not count against max; else they count, and go
// only when b decides nothing (b is then handled whole).
func (d *Detector) look(b []byte, end, leadFirst bool) (a Answer) {
	a.Format = d.f
	var g eventGrab // one split finds the events without data and the first with data
	if d.f == FormatSniffEvents {
		g.split.Max = len(b) + 1
		g.split.Feed(b, &g)
		if !d.held {
			a.Lead = g.lead // an unterminated last event closed at the end is no lead
		}
		if !g.done && end {
			g.split.Close(&g)
		}
	}
	from := 0
	if leadFirst {
		from = a.Lead
	}
	b = b[from:]
	// A first line or event that does not end within max bytes is no
	// protocol's, whatever pieces the body came in.
	if line, at, complete := firstLine(b); (complete || end && len(line) > 0) && at+len(line) <= d.max {
		if f, ok := recognise(d.convert, func(p *protocol) bool { return p.startsLine != nil && p.startsLine(line) }); ok {
			a.Format = f
		} else if d.f == FormatSniffPlain {
			a.Format = FormatOther
		}
	}
	switch {
	case a.Decided():
	case d.f == FormatSniffPlain:
		// A start that can still become a line a protocol claims is held;
		// a plain-text stream goes on at once.
		_, may := recognise(d.convert, func(p *protocol) bool { return p.mayStartLine != nil && p.mayStartLine(b) })
		if end || len(b) > d.max || !may {
			a.Format = FormatOther
		}
	case !g.done && !end && len(b) <= d.max:
	case !g.done || g.data == nil || g.end-from > d.max:
		a.Format = FormatSSE
	default:
		a.Format = FormatSSE // also when the first event is an error
		if ev := readFirstEvent(g.data); !ev.isErr {
			if f, ok := recognise(d.convert, func(p *protocol) bool { return p.startsEvents != nil && p.startsEvents(&ev) }); ok {
				a.Format = f
			}
		}
	}
	if a.Decided() && !leadFirst {
		a.Lead = 0
	}
	a.Early = a.Lead > 0
	return a
}

// formatOfHeaders reads the format of a 2xx reply to a request of kind
// from its headers alone (SPEC 4 table); the sniffed formats leave it to
// the body.
func formatOfHeaders(kind RequestKind, h ReplyHeaders, convert bool) Format {
	if p := kind.p; p != nil && p.replyFormat != nil {
		if f, ok := p.replyFormat(h); ok {
			return f
		}
	}
	mt := h.MediaType
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return FormatJSON
	}
	if f, ok := recognise(convert, func(p *protocol) bool { return p.byHeaders != nil && p.byHeaders(h) }); ok {
		return f
	}
	switch {
	case mt == "text/event-stream":
		return FormatSniffEvents
	case mt == "text/plain" && convert:
		return FormatSniffPlain
	}
	return FormatOther
}

// recognise returns the format of the first protocol that knows the reply
// by knows, ok false when none does. A protocol that needsConvert is
// recognised only under convert_streams (convert).
func recognise(convert bool, knows func(p *protocol) bool) (Format, bool) {
	for _, p := range protocols {
		if (convert || !p.needsConvert) && knows(p) {
			return *p.format, true
		}
	}
	return 0, false
}

// eventGrab keeps the data of the first event that has any, where the
// events without data before it end (lead), and where it ends (end), and
// halts its splitter there: a stream's first write can hold hundreds of
// events, which the stream's pipeline splits next.
type eventGrab struct {
	data  []byte
	lead  int // bytes of the complete events before it (all of them, until it comes)
	end   int // bytes of the events up to and including it
	done  bool
	split SSESplitter // the splitter feeding it (one allocation for both), halted once done
}

func (g *eventGrab) Event(raw []byte) {
	if g.done {
		return
	}
	g.end += len(raw)
	// One Feed (and Close) on a fresh splitter: an event it completes lies
	// in the fed bytes or in the splitter's buffer, which nothing reuses,
	// so data stays valid after the call.
	if data, ok, _ := EventData(raw, nil); ok {
		g.data, g.done = data, true
		g.split.halted = true
		return
	}
	g.lead = g.end
}
func (g *eventGrab) Oversize([]byte, bool) {}

// firstLine returns the first non-empty line, where it starts in b, and
// whether it is complete.
func firstLine(b []byte) (line []byte, at int, complete bool) {
	rest := bytes.TrimLeft(bytes.TrimPrefix(b, bom), "\r\n")
	at = len(b) - len(rest)
	if i := bytes.IndexAny(rest, "\r\n"); i >= 0 {
		return rest[:i], at, true
	}
	return rest, at, false
}

// startWatch follows the bytes shown while a body's start is undecided,
// and tells when looking at all of them again can decide. Looking costs
// the bytes held: looking at every write that holds a line end would cost
// the square of a first event sent a few bytes at a time.
type startWatch struct {
	seen     int  // bytes shown so far
	nonBlank int  // bytes shown that are not line ends after the first one that is not
	lineDone bool // a line end came after that first byte: the first line is complete
	prev     byte // the last byte shown (a blank line can straddle two writes)
}

// worth records p, the bytes just shown, and reports whether looking at
// everything held may now decide: within the first 8 bytes and the first
// two that are not line ends (they can rule a data stream out), when the
// first line completes (it can be a data stream's), and in an event stream
// (events) when a blank line completes an event. max is the caller's.
func (w *startWatch) worth(p []byte, events bool) bool {
	look := w.seen+len(p) <= 8
	prev := w.prev
	if w.seen == 0 {
		prev = '\n' // a line end first: a blank line
	}
	for i, c := range p {
		eol := c == '\r' || c == '\n'
		switch {
		case w.seen+i < len(bom) && c == bom[w.seen+i] && w.nonBlank == 0:
			// a leading BOM is not part of the first line
		case !eol:
			look = look || w.nonBlank < 2
			w.nonBlank++
		case w.nonBlank > 0 && !w.lineDone:
			w.lineDone = true
			look = true
		}
		// Two line ends in a row, unless they are one CRLF.
		if events && eol && (prev == '\r' || prev == '\n') && !(prev == '\r' && c == '\n') {
			look = true
		}
		prev = c
	}
	w.seen += len(p)
	w.prev = prev
	return look
}

// firstEvent is what telling a stream's protocol reads of its first
// event's data: its "type" (hasType: a string), and whether it is an error
// event of SPEC 4.3 (errorEvent's verdict on valid JSON: an object whose
// first "error" is an object or a string, or, without such an error, whose
// first "type" or first "object" is "error").
type firstEvent struct {
	typ            string
	hasType, isErr bool
	obj            string // the data, a valid JSON object trimmed ("" when none): for a protocol that reads more than its type
}

// readFirstEvent reads the first event's data of every stream once, in one
// pass that validates it and one walk over its top level (jsonscan.Iter):
// gjson's code would be one more cold stretch on the way to the first
// event. It answers as gjson's Get would on the valid JSON object.
func readFirstEvent(data []byte) (ev firstEvent) {
	trimmed := bytes.TrimSpace(data)
	s := strView(trimmed)
	if len(trimmed) == 0 || trimmed[0] != '{' || !jsonscan.Valid(s) {
		return ev
	}
	ev.obj = s
	errV, typV, objV := -1, -1, -1
	it := jsonscan.IterAt(s, 0)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		switch {
		case errV < 0 && jsonscan.KeyIs(k, "error"):
			errV = v
		case typV < 0 && jsonscan.KeyIs(k, "type"):
			typV = v
		case objV < 0 && jsonscan.KeyIs(k, "object"):
			objV = v
		}
	}
	if typV >= 0 {
		ev.typ, ev.hasType = strAt(s, typV)
	}
	ev.isErr = errV >= 0 && (s[errV] == '{' || s[errV] == '"') || ev.hasType && ev.typ == "error"
	if !ev.isErr && objV >= 0 {
		obj, ok := strAt(s, objV)
		ev.isErr = ok && obj == "error"
	}
	if ev.isErr && len(trimmed) < len(data) {
		// What TrimSpace took must be JSON's white space for the data to
		// be an error event (a \v or U+00A0 around it is not).
		ev.isErr = jsonscan.Valid(strView(data))
	}
	return ev
}
