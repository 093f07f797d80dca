package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// replyText finds the text of a chat-completion-like JSON reply, and
// whether there was any.
func replyText(root gjson.Result) (string, bool) {
	msg := root.Get("choices.0.message")
	if !msg.Exists() {
		msg = root.Get("choices.0.delta")
	}
	if msg.Type == gjson.String {
		return msg.Str, true
	}
	if msg.IsObject() {
		for _, k := range []string{"content", "text"} {
			if t, ok := textOf(msg.Get(k)); ok {
				return t, true
			}
		}
	}
	for _, k := range []string{"choices.0.text", "output", "response", "message", "text", "content"} {
		if t := root.Get(k); t.Type == gjson.String {
			return t.Str, true
		}
	}
	return "", false
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
	if s := strView(body); jsonscan.Valid(s) {
		if msg, ok := errorMessage(gjson.Parse(s)); ok {
			return msg
		}
	}
	if t := strings.TrimSpace(string(body)); t != "" {
		return t
	}
	return statusText
}

// errorMessage is the message of a reply's top-level error: an object's
// message, or the error itself when it is a string, not empty.
func errorMessage(root gjson.Result) (string, bool) {
	e := root.Get("error")
	if m := e.Get("message"); m.Type == gjson.String && m.Str != "" {
		return m.Str, true
	}
	return e.Str, e.Type == gjson.String && e.Str != ""
}

// RunOnceJSON builds the run-once answer {"content":…,"meta":…}, with
// "error" first when errMsg is not empty. meta is left out when empty.
func RunOnceJSON(content string, meta *Meta, errMsg string) []byte {
	b := []byte{'{'}
	if errMsg != "" {
		b = jsonscan.AppendString(append(b, `"error":`...), errMsg)
		b = append(b, ',')
	}
	b = jsonscan.AppendString(append(b, `"content":`...), content)
	if meta != nil && !meta.Empty() {
		b = append(append(b, `,"meta":`...), meta.JSON()...)
	}
	return append(b, '}')
}

// ErrorJSON is the edge function's error shape {"error":"…"}.
func ErrorJSON(msg string) []byte {
	return append(append([]byte(`{"error":`), jsonscan.AppendString(nil, msg)...), '}')
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
