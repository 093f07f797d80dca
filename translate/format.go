package translate

import (
	"bytes"
	"strings"
)

// Format is what an upstream reply's body is, by the mode table of SPEC 4:
// the one place that table lives. A protocol is added here (a constant, its
// name, and a line in eventProtocols or jsonProtocols) and in a file of its
// own that reads it.
type Format uint8

const (
	FormatNone        Format = iota // not inspected
	FormatJSON                      // a JSON reply (chat completion, Responses object, Anthropic message)
	FormatSSE                       // OpenAI chat-completion chunks (4.3)
	FormatResponses                 // OpenAI Responses events (4.4)
	FormatAnthropic                 // Anthropic Messages events (4.5)
	FormatDataStream                // Vercel AI SDK data stream v1, converted (5.1)
	FormatUIStream                  // AI SDK UI message stream, converted (5.2)
	FormatOther                     // anything else: passes untouched
	FormatSniffPlain                // text/plain: its first line decides
	FormatSniffEvents               // text/event-stream: its first event with data decides
	NumFormats
)

var formatNames = [NumFormats]string{
	FormatNone:        "none",
	FormatJSON:        "json",
	FormatSSE:         "sse",
	FormatResponses:   "responses",
	FormatAnthropic:   "anthropic",
	FormatDataStream:  "data_stream",
	FormatUIStream:    "ui_stream",
	FormatOther:       "other",
	FormatSniffPlain:  "undecided",
	FormatSniffEvents: "undecided",
}

func (f Format) String() string {
	if f < NumFormats {
		return formatNames[f]
	}
	return "none"
}

// Undecided reports whether the start of the body must still decide.
func (f Format) Undecided() bool { return f == FormatSniffPlain || f == FormatSniffEvents }

// Stream reports whether the reply is read as a stream of events.
func (f Format) Stream() bool {
	switch f {
	case FormatSSE, FormatResponses, FormatAnthropic, FormatDataStream, FormatUIStream:
		return true
	}
	return false
}

// Converted reports whether the stream is converted into chat chunks (SPEC
// 5): it then gets the headers of an event stream of our own.
func (f Format) Converted() bool { return f == FormatDataStream || f == FormatUIStream }

// Chat reports whether the client gets chat-completion chunks: the chat
// stream itself, or a converted one.
func (f Format) Chat() bool { return f == FormatSSE || f.Converted() }

// ReplyHeaders are the response headers the mode table reads.
type ReplyHeaders struct {
	MediaType  string // Content-Type without parameters, lower case
	DataStream string // x-vercel-ai-data-stream
	UIStream   string // x-vercel-ai-ui-message-stream
}

// DetectHeaders reads the format from the headers alone (SPEC 4 table).
// convert is convert_streams: without it the two AI SDK streams are not
// recognised.
func DetectHeaders(h ReplyHeaders, convert bool) Format {
	mt := h.MediaType
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return FormatJSON
	case convert && strings.EqualFold(h.DataStream, "v1"):
		return FormatDataStream
	case mt == "text/event-stream":
		if convert && strings.EqualFold(h.UIStream, "v1") {
			return FormatUIStream
		}
		return FormatSniffEvents
	case mt == "text/plain" && convert:
		return FormatSniffPlain
	}
	return FormatOther
}

// eventProtocols recognise an event stream by the "type" of its first
// event's data (a JSON object), in this order (SPEC 4 table). needsConvert:
// only under convert_streams.
var eventProtocols = [...]struct {
	format       Format
	isType       func(t string) bool
	needsConvert bool
}{
	{FormatUIStream, isUIPartType, true},
	{FormatResponses, isResponsesType, false},
	{FormatAnthropic, isAnthropicType, false},
}

// DetectStart decides an undecided format from the start of the body held
// so far: the first non-empty line of a text/plain body, the first event
// with data of an event stream. decided is false while more bytes are
// needed; end says the body has ended (decide on what there is). max is
// max_event_bytes: past it, the body is not a protocol's.
func DetectStart(f Format, held []byte, max int, end bool, convert bool) (Format, bool) {
	if convert {
		if line, complete := firstLine(held); complete || end {
			// A first line that does not end within max bytes is no part,
			// however the body came in pieces (a start of it past max
			// decides below).
			within := offsetIn(held, line)+len(line) <= max
			if (complete || len(line) > 0) && within && IsDataStreamLine(line) {
				return FormatDataStream, true
			}
			if f == FormatSniffPlain && (complete || len(line) > 0) {
				return FormatOther, true
			}
		}
	}
	if f == FormatSniffPlain {
		if end || len(held) > max || !mayBeDataStream(held) {
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
	ev := readFirstEvent(data)
	if ev.isErr {
		// A stream whose first event is an error is handled as SSE.
		return FormatSSE, true
	}
	for _, p := range eventProtocols {
		if (!p.needsConvert || convert) && ev.hasType && p.isType(ev.typ) {
			return p.format, true
		}
	}
	return FormatSSE, true
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

// mayBeDataStream reports whether the start of a text/plain body can still
// be a data-stream part (^[0-9a-z]: after a BOM and blank lines), so that a
// plain-text stream is passed on at once rather than held until its first
// line ends.
func mayBeDataStream(b []byte) bool {
	if len(b) < len(bom) && string(bom[:len(b)]) == string(b) {
		return true // part of a BOM so far
	}
	b = bytes.TrimLeft(bytes.TrimPrefix(b, bom), "\r\n")
	if len(b) == 0 {
		return true
	}
	if c := b[0]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
		return false
	}
	return len(b) < 2 || b[1] == ':'
}

// firstLine returns the first non-empty line and whether it is complete.
func firstLine(b []byte) ([]byte, bool) {
	b = bytes.TrimPrefix(b, bom)
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			return b, false
		}
		if i > 0 {
			return b[:i], true
		}
		b = b[1:]
	}
	return nil, false
}

// firstEvent is what telling a stream's protocol reads of its first
// event's data: its "type" (hasType: a string), and whether it is an error
// event of SPEC 4.3 (errorEvent's verdict on valid JSON: an object whose
// first "error" is an object or a string, or, without such an error, whose
// first "type" or first "object" is "error").
type firstEvent struct {
	typ            string
	hasType, isErr bool
}

// readFirstEvent reads the first event's data of every stream, once, in
// one pass that validates it and one walk over its top level (json_walk.go).
// It was read with gjson's Get, whose code was then one more cold stretch
// on the way to the first event (BENCHMARKS.md, ninth round); it answers as
// gjson's Get would on the valid JSON object the data must be.
func readFirstEvent(data []byte) (ev firstEvent) {
	trimmed := bytes.TrimSpace(data)
	s := unsafeString(trimmed)
	if len(trimmed) == 0 || trimmed[0] != '{' || !ValidJSON(s) {
		return ev
	}
	errV, typV, objV := -1, -1, -1
	it := iterAt(s, 0)
	for k, v, ok := it.next(); ok; k, v, ok = it.next() {
		switch {
		case errV < 0 && keyIs(k, "error"):
			errV = v
		case typV < 0 && keyIs(k, "type"):
			typV = v
		case objV < 0 && keyIs(k, "object"):
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
		ev.isErr = ValidJSON(unsafeString(data))
	}
	return ev
}

// typeOf returns the string "type" of an event's JSON object data.
func typeOf(data []byte) (string, bool) {
	ev := readFirstEvent(data)
	return ev.typ, ev.hasType
}

// IsResponsesEvent reports whether an event's data is an OpenAI Responses
// event: a JSON object whose type starts with "response." (SPEC 4).
func IsResponsesEvent(data []byte) bool {
	t, ok := typeOf(data)
	return ok && isResponsesType(t)
}

func isResponsesType(t string) bool { return strings.HasPrefix(t, "response.") }

// IsAnthropicEvent reports whether an event's data starts an Anthropic
// Messages stream: a JSON object of type message_start (SPEC 4).
func IsAnthropicEvent(data []byte) bool {
	t, ok := typeOf(data)
	return ok && isAnthropicType(t)
}

func isAnthropicType(t string) bool { return t == "message_start" }

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
