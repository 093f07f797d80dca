package translate

import (
	"bytes"
	"io"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// FormatUIStream is an AI SDK UI message stream, converted (SPEC 5.2;
// numbered at registration).
var FormatUIStream Format

var uiStreamProtocol = protocol{
	name:   "ui_stream",
	format: &FormatUIStream,
	// Under convert_streams: an event stream with
	// x-vercel-ai-ui-message-stream: v1, or whose first event is a part.
	needsConvert: true,
	byHeaders: func(h ReplyHeaders) bool {
		return h.MediaType == "text/event-stream" && strings.EqualFold(header(h.Header, "X-Vercel-Ai-Ui-Message-Stream"), "v1")
	},
	startsEvents: func(ev *firstEvent) bool { return ev.hasType && isUIPartType(ev.typ) },
	convert: func(w *Rewriter, opts ConvertOptions) io.WriteCloser {
		return NewUIStreamConverter(w, opts)
	},
}

// isUIPartType reports whether t is a part type of the UI message stream
// (SPEC 5.2), those of AI SDK 6 and 7 included.
func isUIPartType(t string) bool {
	switch t {
	case "start", "start-step", "text-start", "text-delta", "text-end",
		"file", "error", "finish", "finish-step", "abort", "message-metadata",
		"custom", "steering-message", "reset-step":
		return true
	}
	for _, p := range [...]string{"reasoning-", "tool-", "data-", "source-"} {
		if len(t) > len(p) && strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// UIStreamConverter turns an AI SDK UI message stream v1 (SPEC 5.2: SSE
// events whose data is a {"type":...} object) into OpenAI
// chat-completion-chunk SSE events, as convCore says. The upstream's
// data: [DONE] ends the stream as Close does; anything after it is ignored.
//
// Counting (ConvertOptions.Stats): Events counts the events with data
// ([DONE] included), Skipped those that are not a JSON object with a string
// type of the UI message stream, and those longer than MaxLine, which are
// also counted in Oversize.
type UIStreamConverter struct {
	convCore
	split       SSESplitter
	dataScratch []byte
	aborted     bool // abort came: later parts are ignored
}

// NewUIStreamConverter returns a converter writing to out.
func NewUIStreamConverter(out io.Writer, opts ConvertOptions) *UIStreamConverter {
	c := &UIStreamConverter{}
	c.init(out, opts)
	c.split.Max = c.maxLine
	return c
}

// Write converts every event p completes.
func (c *UIStreamConverter) Write(p []byte) (int, error) {
	return c.write(p, func(p []byte) { c.split.Feed(p, (*uiHandler)(c)) })
}

// Close converts an unterminated last event and ends the stream, when the
// upstream's [DONE] has not.
func (c *UIStreamConverter) Close() error {
	return c.close(func() { c.split.Close((*uiHandler)(c)) })
}

// uiHandler is the converter seen as the splitter's SSEHandler, so that
// Event and Oversize stay out of the converter's API.
type uiHandler UIStreamConverter

func (h *uiHandler) Event(raw []byte) {
	c := (*UIStreamConverter)(h)
	if c.ended {
		return
	}
	data, ok, known := c.split.Data()
	if !known {
		data, ok, c.dataScratch = EventData(raw, c.dataScratch)
	}
	if !ok {
		return // comments and events without data give nothing
	}
	c.event(data)
}

func (h *uiHandler) Oversize(_ []byte, first bool) {
	c := (*UIStreamConverter)(h)
	if first && !c.ended {
		c.oversize("llm_meta: UI message stream event longer than max_event_bytes skipped")
	}
}

func (c *UIStreamConverter) event(data []byte) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		c.count()
		c.end()
		return
	}
	s := strView(data)
	if part, raw, esc, ok := uiDeltaAsSent(s); ok {
		// Most events of a stream, read in one pass; what this returns,
		// the general reading below would have read.
		c.count()
		if field := uiDeltaParts[part].field; field != "" && !c.aborted {
			d := raw[1 : len(raw)-1] // as it is unless it holds an escape
			if esc {
				d, _ = c.text(raw)
			}
			c.delta(field, d)
		}
		return
	}
	if !jsonscan.Valid(s) {
		c.skip("llm_meta: UI message stream event that is not JSON skipped")
		return
	}
	// type and delta are read without gjson, which would allocate for every
	// delta with an escape in it; the other parts are rare.
	typ, ok := c.text(jsonscan.ObjectValue(s, "type"))
	if !ok || !isUIPartType(typ) {
		c.skip("llm_meta: UI message stream event of unknown type skipped")
		return
	}
	c.count()
	if c.aborted {
		return // parts after abort are ignored (SPEC 5.2)
	}
	for _, p := range uiDeltaParts {
		if typ == p.typ && p.field != "" {
			if d, ok := c.text(jsonscan.ObjectValue(s, "delta")); ok {
				c.delta(p.field, d)
			}
			return
		}
	}
	v := gjson.Parse(s)
	switch typ {
	case "tool-input-start", "tool-input-available", "tool-call",
		"tool-input-error", "tool-output-error", "tool-approval-request":
		name := v.Get("toolName")
		if name.Type == gjson.String {
			c.rep.Meta.AddTool(name.Str)
		}
		if typ == "tool-input-available" {
			// A call once per toolCallId, its input value's text as it
			// came its arguments (SPEC 11.3).
			c.call(name.Str, v, "toolCallId", "input")
		}
	case "message-metadata":
		c.metadataUsage(v.Get("messageMetadata.usage"))
	case "abort":
		if !c.finished {
			c.finish(endCut, "stop", gjson.Result{}) // an end, and an interruption (SPEC 11.1)
		}
		c.aborted = true
	case "error":
		c.errorEvent(uiErrorMessage(v))
	case "start":
		c.announce(v.Get("messageId"))
		c.metadataUsage(v.Get("messageMetadata.usage"))
	case "finish":
		usage := v.Get("messageMetadata.usage")
		if !usage.IsObject() {
			usage = v.Get("usage")
		}
		c.finish(endWhole, v.Get("finishReason").Str, usage)
	default: // data-* parts; the others give nothing
		if strings.HasPrefix(typ, "data-") {
			c.data(v.Get("data")) // missing: not valid JSON, ignored
		}
	}
}

// metadataUsage keeps the usage of message metadata (a message-metadata
// part, or messageMetadata on start): the usage of the last chunk, unless a
// finish brings its own; once the last chunk has gone, it updates
// meta.usage only (SPEC 5.2).
func (c *UIStreamConverter) metadataUsage(u gjson.Result) {
	if !u.IsObject() {
		return
	}
	if c.finished {
		c.lateUsage = append(c.lateUsage[:0], u.Raw...)
		return
	}
	c.mdUsage = append(c.mdUsage[:0], u.Raw...)
}

// uiErrorMessage is the message of an error part: errorText, else message,
// else error.message or error when a string, else a fixed text.
func uiErrorMessage(v gjson.Result) string {
	for _, path := range [...]string{"errorText", "message", "error.message", "error"} {
		if m := v.Get(path); m.Type == gjson.String {
			return m.Str
		}
	}
	return "An error occurred."
}

// uiDeltaParts are the parts most events of a UI message stream are, as
// the AI SDK writes them (JSON.stringify of {type, id, delta} and of
// {type, toolCallId, inputTextDelta}): the type, the event up to its id's
// value, what comes between that and the delta's value, and the chunk
// field the delta goes to; none for a tool's input, which gives nothing
// (SPEC 5.2).
var uiDeltaParts = [...]struct{ typ, head, deltaKey, field string }{
	{"text-delta", `{"type":"text-delta","id":"`, `,"delta":"`, "content"},
	{"reasoning-delta", `{"type":"reasoning-delta","id":"`, `,"delta":"`, "reasoning_content"},
	{"tool-input-delta", `{"type":"tool-input-delta","toolCallId":"`, `,"inputTextDelta":"`, ""},
}

// uiDeltaAsSent reads s when it is one of uiDeltaParts exactly as the AI
// SDK sends it: its head, the id, its delta key, the delta and "}", no
// white space, no other key. It returns which part it is, the delta's
// JSON string literal (quotes included) and whether it holds an escape.
// ok is false for any other event, which is then validated and read as
// any: both strings are validated here, and the rest of s is literal text,
// so s is valid JSON whenever ok is true (FuzzUIDeltaAsSent holds this to
// jsonscan.Valid and jsonscan.ObjectValue). One pass over s, where
// validating it and then finding type and delta walked it three times.
func uiDeltaAsSent(s string) (part int, raw string, esc, ok bool) {
	for part = range uiDeltaParts {
		p := &uiDeltaParts[part]
		if !strings.HasPrefix(s, p.head) {
			continue
		}
		rest := s[len(p.head):]
		idEnd, _, ok := jsonscan.ValidString(rest, 0)
		if !ok || !strings.HasPrefix(rest[idEnd:], p.deltaKey) {
			return 0, "", false, false
		}
		start := idEnd + len(p.deltaKey)
		end, esc, ok := jsonscan.ValidString(rest, start)
		if !ok || rest[end:] != "}" {
			return 0, "", false, false
		}
		return part, rest[start-1 : end], esc, true
	}
	return 0, "", false, false
}
