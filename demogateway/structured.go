package demogateway

import (
	"encoding/json"
	"net/http"
	"strings"
)

// structuredFragment is the size of the content pieces of a streamed
// structured reply: small, so that the JSON is cut inside keys, strings and
// escapes, as a model's tokens cut it, and llm_meta's incremental decoding
// of `reply` is visible.
const structuredFragment = 10

// structuredReply follows the schema llm_meta asks for in structured mode
// (SPEC 7). Field order is the order a model tends to write them in.
type structuredReply struct {
	Reply              string           `json:"reply"`
	Intent             string           `json:"intent"`
	RequiresUserAction bool             `json:"requires_user_action"`
	Entities           []entity         `json:"entities"`
	Topics             []string         `json:"topics"`
	SchedulingIntent   schedulingIntent `json:"scheduling_intent"`
}

type entity struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type schedulingIntent struct {
	Detected          bool   `json:"detected"`
	DatetimeMentioned string `json:"datetime_mentioned"`
}

// timeWords are what the demo recognises as a date or time mentioned, so
// that scheduling_intent can be seen switching on.
var timeWords = []string{"today", "tonight", "tomorrow", "monday", "tuesday", "wednesday",
	"thursday", "friday", "saturday", "sunday", "next week"}

// structured builds the reply object from the last user message.
func (c *chatRequest) structured() structuredReply {
	r := structuredReply{
		Intent: "request",
		Entities: []entity{
			{Name: "llm_meta", Type: "tool"},
			{Name: "Caddy", Type: "technology"},
		},
		Topics: []string{"demo", "structured output"},
	}
	if strings.Contains(c.lastUserText(), "?") {
		r.Intent = "question"
	}
	for _, w := range timeWords {
		if c.mentions(w) {
			r.SchedulingIntent = schedulingIntent{Detected: true, DatetimeMentioned: w}
			r.RequiresUserAction = true
			r.Topics = append(r.Topics, "scheduling")
			break
		}
	}
	// Markdown with quotes and line breaks, so that the escapes llm_meta
	// decodes in a stream are exercised by every demo reply.
	r.Reply = "**You said:** \"" + c.echo() + "\"\n\n" +
		"This reply came as a JSON object; llm_meta kept its `reply` for you and moved the rest to `meta.structured_metadata`:\n\n" +
		"- intent: " + r.Intent + "\n" +
		"- entities: llm_meta, Caddy\n" +
		"- topics: " + strings.Join(r.Topics, ", ")
	return r
}

// serveStructured answers with the JSON object as the assistant's content:
// in small fragments when streamed, whole otherwise.
func serveStructured(s *streamer, req *chatRequest) error {
	b, err := json.Marshal(req.structured())
	if err != nil {
		return err
	}
	content := string(b)
	u := req.tokens(completionTokens(content, nil)).chat()

	if !req.Stream {
		return writeJSON(s.w, http.StatusOK, completion{ID: demoChatID, Object: "chat.completion",
			Created: demoCreated, Model: req.model(), Usage: u,
			Choices: []completionChoice{{Message: respMessage{Role: "assistant", Content: content}, FinishReason: "stop"}}})
	}

	cs := newChunkStream(s, req)
	if err := s.begin(sseHeader()); err != nil {
		return err
	}
	if err := cs.send(delta{Role: "assistant"}, nil); err != nil {
		return err
	}
	frags := fragments(content, structuredFragment)
	if req.cutShort() {
		frags = frags[:(len(frags)+1)/2]
	}
	for _, frag := range frags {
		if err := cs.send(delta{Content: &frag}, nil); err != nil {
			return err
		}
	}
	if req.cutShort() {
		return nil // the body ends inside the JSON object
	}
	return cs.finish("stop", u, nil)
}
