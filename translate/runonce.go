package translate

import (
	"bytes"
	"errors"
	"strings"

	"github.com/tidwall/gjson"
)

// NoResponse is the content of a run-once reply in which no text was found.
const NoResponse = "No response from gateway."

// ErrContentTooLarge is returned by a RunOnceCollector whose content grew
// past its limit.
var ErrContentTooLarge = errors.New("reply text larger than max_buffer_bytes")

// RunOnceCollector reads an OpenAI chunk stream (the output of an
// SSERewriter) and keeps what a run-once reply needs (SPEC 6.1): the
// concatenated content deltas of choice 0 and the first error event. It
// holds at most Max bytes of content.
type RunOnceCollector struct {
	Max int

	split   SSESplitter
	scratch []byte
	content []byte
	errMsg  string
	hasErr  bool
	over    bool
}

// NewRunOnceCollector returns a collector for at most max bytes of content;
// events larger than maxEvent are skipped.
func NewRunOnceCollector(max, maxEvent int) *RunOnceCollector {
	c := &RunOnceCollector{Max: max}
	c.split.Max = maxEvent
	return c
}

// Write consumes chunk events.
func (c *RunOnceCollector) Write(p []byte) (int, error) {
	if c.over {
		return 0, ErrContentTooLarge
	}
	c.split.Feed(p, c)
	if c.over {
		return 0, ErrContentTooLarge
	}
	return len(p), nil
}

// Close handles an unterminated last event.
func (c *RunOnceCollector) Close() error {
	c.split.Close(c)
	if c.over {
		return ErrContentTooLarge
	}
	return nil
}

// Content is the reply text collected so far.
func (c *RunOnceCollector) Content() string { return string(c.content) }

// Err returns the message of the first error event, if any.
func (c *RunOnceCollector) Err() (string, bool) { return c.errMsg, c.hasErr }

// Event implements SSEHandler.
func (c *RunOnceCollector) Event(raw []byte) {
	var data []byte
	var ok bool
	data, ok, c.scratch = EventData(raw, c.scratch)
	if !ok || c.over {
		return
	}
	s := unsafeString(data)
	if !ValidJSON(s) {
		return
	}
	res := chunkFields(s)
	if res[0].Exists() && !res[2].Exists() {
		if !c.hasErr {
			// s may be the writer's buffer, reused after this Write.
			c.errMsg, c.hasErr = strings.Clone(errorMessage(res[0])), true
		}
		return
	}
	text := res[1]
	if idx := res[3]; idx.Type == gjson.Number && idx.Int() != 0 {
		text = choiceZeroContent(res[2]) // n > 1: this chunk is another choice's
	}
	if text.Type == gjson.String {
		if len(c.content)+len(text.Str) > c.Max {
			c.over = true
			return
		}
		c.content = appendBounded(c.content, unsafeBytes(text.Str), c.Max)
	}
}

// chunkFields is gjson.GetMany(s, "error", "choices.0.delta.content",
// "choices", "choices.0.index") for a valid JSON chunk, in one pass over its
// top-level keys, without GetMany's allocation and its four look-ups from
// the start. (With a repeated key, gjson takes the first copy for a path of
// one key, and for a longer path the first copy in which the rest of the
// path is found; so does this.)
func chunkFields(s string) (res [4]gjson.Result) {
	var haveErr, haveChoices bool
	gjson.Parse(s).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "error":
			if !haveErr {
				res[0], haveErr = v, true
			}
		case "choices":
			if !haveChoices {
				res[2], haveChoices = v, true
			}
			if !res[1].Exists() {
				res[1] = v.Get("0.delta.content")
			}
			if !res[3].Exists() {
				res[3] = v.Get("0.index")
			}
		}
		return !haveErr || !res[1].Exists() || !res[3].Exists()
	})
	return res
}

// choiceZeroContent returns the content delta of the choice whose index is 0
// in a chunk's choices.
func choiceZeroContent(choices gjson.Result) gjson.Result {
	var text gjson.Result
	choices.ForEach(func(_, ch gjson.Result) bool {
		if idx := ch.Get("index"); idx.Type == gjson.Number && idx.Int() == 0 {
			text = ch.Get("delta.content")
			return false
		}
		return true
	})
	return text
}

// Oversize implements SSEHandler: an event too large to parse is skipped.
func (c *RunOnceCollector) Oversize([]byte, bool) {}

// errorMessage reads the message of an error value: error.message, or the
// error itself when it is a string, else its JSON text.
func errorMessage(e gjson.Result) string {
	if m := e.Get("message"); m.Type == gjson.String {
		return m.Str
	}
	if e.Type == gjson.String {
		return e.Str
	}
	return e.Raw
}

// ReplyContent finds the reply text of a JSON reply by the edge function's
// field order (SPEC 6.1).
func ReplyContent(body []byte) string {
	s := unsafeString(body)
	root := gjson.Parse(s)
	msg := root.Get("choices.0.message")
	if !msg.Exists() {
		msg = root.Get("choices.0.delta")
	}
	if msg.Type == gjson.String {
		return msg.Str
	}
	if msg.IsObject() {
		for _, k := range []string{"content", "text"} {
			if t, ok := textOf(msg.Get(k)); ok {
				return t
			}
		}
	}
	if t := root.Get("choices.0.text"); t.Type == gjson.String {
		return t.Str
	}
	for _, k := range []string{"output", "response", "message", "text", "content"} {
		if t := root.Get(k); t.Type == gjson.String {
			return t.Str
		}
	}
	return NoResponse
}

// textOf reads a content value: a string, or an array of parts whose text
// values join with "\n".
func textOf(v gjson.Result) (string, bool) {
	switch {
	case v.Type == gjson.String:
		return v.Str, true
	case v.IsArray():
		var parts []string
		v.ForEach(func(_, p gjson.Result) bool {
			if t := p.Get("text"); t.Type == gjson.String {
				parts = append(parts, t.Str)
			}
			return true
		})
		if len(parts) > 0 {
			return strings.Join(parts, "\n"), true
		}
	}
	return "", false
}

// UpstreamErrorMessage is the message of SPEC 6.4 for an upstream reply
// outside 2xx: its error.message, else its body text, else statusText.
func UpstreamErrorMessage(body []byte, statusText string) string {
	s := unsafeString(body)
	if ValidJSON(s) {
		if e := gjson.Get(s, "error"); e.Exists() {
			if m := e.Get("message"); m.Type == gjson.String && m.Str != "" {
				return m.Str
			}
			if e.Type == gjson.String && e.Str != "" {
				return e.Str
			}
		}
	}
	if t := strings.TrimSpace(string(body)); t != "" {
		return t
	}
	return statusText
}

// RunOnceJSON builds the run-once answer {"content":…,"meta":…}, with
// "error" first when errMsg is not empty. meta is left out when empty.
func RunOnceJSON(content string, meta *Meta, errMsg string) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if errMsg != "" {
		b.WriteString(`"error":`)
		b.Write(JSONString(errMsg))
		b.WriteByte(',')
	}
	b.WriteString(`"content":`)
	b.Write(JSONString(content))
	if meta != nil && !meta.Empty() {
		b.WriteString(`,"meta":`)
		b.Write(meta.JSON())
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ErrorJSON is the edge function's error shape {"error":"…"}.
func ErrorJSON(msg string) []byte {
	return append(append([]byte(`{"error":`), JSONString(msg)...), '}')
}

// StreamFromReply turns a whole reply into the edge endpoint's event stream
// (SPEC 6.3): one content chunk, the final meta event, [DONE]. The chunks
// repeat the reply's id, created and model when it has them.
func StreamFromReply(reply []byte, content string, meta *Meta, model string, finalMeta, bare bool) []byte {
	head := chunkHeadFrom(reply, func() ChunkHead { return NewChunkHead("", 0, model) })
	out := head.AppendDelta(nil, "content", content, true)
	if finalMeta && meta != nil && !meta.Empty() {
		if bare {
			out = AppendBareMeta(out, meta.JSON())
		} else {
			out = head.AppendMeta(out, meta.JSON())
		}
	}
	return append(out, DoneEvent...)
}
