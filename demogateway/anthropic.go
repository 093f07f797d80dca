package demogateway

import (
	"encoding/json"
	"errors"
	"net/http"
)

// demoAnthropicID is the id of every Messages reply.
const demoAnthropicID = "msg_demo_anthropic"

// messagesRequest is the part of an Anthropic Messages request the demo
// reads. max_tokens, which Anthropic requires, is accepted and not needed.
type messagesRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []message       `json:"messages"`
}

// readMessagesRequest decodes a Messages request into the chat request the
// canned replies are made from, the system prompt as a system message.
func readMessagesRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, error) {
	var mr messagesRequest
	if err := decodeBody(w, r, &mr); err != nil {
		return nil, err
	}
	req := &chatRequest{Model: mr.Model, Stream: mr.Stream}
	if len(mr.System) > 0 && string(mr.System) != "null" {
		req.Messages = append(req.Messages, message{Role: "system", Content: mr.System})
	}
	req.Messages = append(req.Messages, mr.Messages...)
	return req, nil
}

// anthropicMessage is a Messages API reply.
type anthropicMessage struct {
	ID           string         `json:"id"`
	Type         string         `json:"type"`
	Role         string         `json:"role"`
	Model        string         `json:"model"`
	Content      []any          `json:"content"`
	StopReason   *string        `json:"stop_reason"`
	StopSequence *string        `json:"stop_sequence"` // always null here
	Usage        anthropicUsage `json:"usage"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type toolUseBlock struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

func toolUseOf(tc toolCall, input map[string]any) toolUseBlock {
	return toolUseBlock{Type: "tool_use", ID: "toolu_" + callSuffix(tc), Name: tc.Name, Input: input}
}

// endTurn is the stop reason of every demo reply: the gateway ran the tools
// itself and wrote its text after them, so the turn is over.
const endTurn = "end_turn"

// serveMessages answers an Anthropic Messages request: a message with a
// tool_use block per tool and then the text, or its event stream.
func serveMessages(s *streamer, req *chatRequest) error {
	a, err := answerFor(req)
	if err != nil {
		return err
	}
	if !req.Stream {
		content := make([]any, 0, len(a.tools)+1)
		for _, tc := range a.tools {
			content = append(content, toolUseOf(tc, tc.Args))
		}
		content = append(content, textBlock{Type: "text", Text: a.text})
		stop := endTurn
		return writeJSON(s.w, http.StatusOK, anthropicMessage{ID: demoAnthropicID, Type: "message", Role: "assistant",
			Model: req.model(), Content: content, StopReason: &stop, Usage: a.usage.anthropic()})
	}
	if err := s.begin(sseHeader()); err != nil {
		return err
	}
	return writeMessagesStream(s, req, a)
}

// anthropicError is Anthropic's error body.
type anthropicError struct {
	Type  string            `json:"type"`
	Error anthropicErrorObj `json:"error"`
}

type anthropicErrorObj struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// writeAnthropicError answers a request error in Anthropic's shape.
func writeAnthropicError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	typ := "invalid_request_error"
	if re, ok := errors.AsType[*requestError](err); ok {
		status = re.status
	}
	if status == http.StatusRequestEntityTooLarge {
		typ = "request_too_large"
	}
	writeJSON(w, status, anthropicError{Type: "error", Error: anthropicErrorObj{Type: typ, Message: err.Error()}})
}
