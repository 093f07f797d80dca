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

// Chat reports whether the client gets chat-completion chunks: the chat
// stream itself, or a converted one.
func (f Format) Chat() bool {
	p := protocolOf(f)
	return f == FormatSSE || p != nil && p.convert != nil && p.into == nil
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

// DetectHeaders reads the format of a 2xx reply to a request of kind from
// its headers alone (SPEC 4 table). convert is convert_streams: without it
// the converted streams are not recognised.
func DetectHeaders(kind RequestKind, h ReplyHeaders, convert bool) Format {
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

// DetectStart decides an undecided format from the start of the body held
// so far: the first non-empty line of a text/plain body, the first event
// with data of an event stream. decided is false while more bytes are
// needed; end says the body has ended (decide on what there is). max is
// max_event_bytes: past it, the body is not a protocol's.
func DetectStart(f Format, held []byte, max int, end bool, convert bool) (Format, bool) {
	if line, at, complete := firstLine(held); complete || end {
		// A first line that does not end within max bytes is no part,
		// however the body came in pieces (a start of it past max decides
		// below).
		within := at+len(line) <= max
		if (complete || len(line) > 0) && within {
			if f, ok := recognise(convert, func(p *protocol) bool { return p.startsLine != nil && p.startsLine(line) }); ok {
				return f, true
			}
		}
		if f == FormatSniffPlain && (complete || len(line) > 0) {
			return FormatOther, true
		}
	}
	if f == FormatSniffPlain {
		// A start that can still become a line a protocol claims is held
		// (mayStartLine); a plain-text stream is passed on at once.
		_, may := recognise(convert, func(p *protocol) bool { return p.mayStartLine != nil && p.mayStartLine(held) })
		if end || len(held) > max || !may {
			return FormatOther, true
		}
		return f, false
	}
	data, complete, within := firstEventData(held, max, end)
	if !complete && !end && len(held) <= max {
		return f, false
	}
	if data == nil || !within {
		// No event with data within max bytes: one that ends past them
		// would be too late to decide, whatever pieces it came in.
		return FormatSSE, true
	}
	// A stream whose first event is an error is handled as SSE.
	if ev := readFirstEvent(data); !ev.isErr {
		if f, ok := recognise(convert, func(p *protocol) bool { return p.startsEvents != nil && p.startsEvents(&ev) }); ok {
			return f, true
		}
	}
	return FormatSSE, true
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

// firstEventData returns the data of the first event that has data,
// whether that event is complete (at the end of the body, an unterminated
// last event is), and whether it ends within the first max bytes. Events
// without data before it (comments, a lone retry:) are passed over.
func firstEventData(b []byte, max int, end bool) (data []byte, complete, within bool) {
	g := eventGrab{split: SSESplitter{Max: max + len(b) + 1}}
	g.split.Feed(b, &g)
	if !g.done && end {
		g.split.Close(&g)
	}
	if g.done {
		return g.data, true, g.end <= max
	}
	return nil, false, false
}

// eventGrab keeps the data of the first event that has any, where the
// events without data before it end (lead), and where it ends (end). It
// halts its splitter there: the first write of a stream can hold a few
// hundred events, which the stream's own pipeline splits next.
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
	if bytes.HasPrefix(b, bom) {
		at = len(bom)
	}
	for at < len(b) {
		i := bytes.IndexAny(b[at:], "\r\n")
		if i < 0 {
			return b[at:], at, false
		}
		if i > 0 {
			return b[at : at+i], at, true
		}
		at++
	}
	return nil, at, false
}

// firstEvent is what telling a stream's protocol reads of its first
// event's data: its "type" (hasType: a string), and whether it is an error
// event of SPEC 4.3 (errorEvent's verdict on valid JSON: an object whose
// first "error" is an object or a string, or, without such an error, whose
// first "type" or first "object" is "error").
type firstEvent struct {
	typ            string
	hasType, isErr bool
	// obj is the data, a valid JSON object, white space around it
	// trimmed ("" when the data is none): for a protocol that tells its
	// first event by more than its type.
	obj string
}

// readFirstEvent reads the first event's data of every stream, once, in
// one pass that validates it and one walk over its top level (jsonscan.Iter).
// It was read with gjson's Get, whose code was then one more cold stretch
// on the way to the first event (BENCHMARKS.md, ninth round); it answers as
// gjson's Get would on the valid JSON object the data must be.
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

// HeadersSettled reports whether an undecided reply's headers are already
// the ones the client gets, whatever its start turns out to be: an event
// stream when no conversion can follow (only conversions change headers).
func (f Format) HeadersSettled(convert bool) bool { return f == FormatSniffEvents && !convert }

// LeadingEventsWithoutData returns the length of the complete events
// without data (comments, a lone retry:) at the start of an undecided event
// stream: they do not decide the mode and reach the client at once (SPEC
// 4). For other formats it is 0. One pass over b, however many there are.
func LeadingEventsWithoutData(f Format, b []byte) int {
	if f != FormatSniffEvents {
		return 0
	}
	g := eventGrab{split: SSESplitter{Max: len(b) + 1}}
	g.split.Feed(b, &g)
	return g.lead
}
