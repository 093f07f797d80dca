package demogateway

import (
	"encoding/json"
	"net/http"
)

// Fixed ids of the Responses replies, deterministic like the chat ones.
const (
	demoResponseID = "resp_demo"
	demoMessageID  = "msg_demo"
)

// responsesRequest is the part of a Responses API request the demo reads.
type responsesRequest struct {
	Model        string          `json:"model"`
	Stream       bool            `json:"stream"`
	Instructions string          `json:"instructions"`
	Input        json.RawMessage `json:"input"`
}

// inputItem is one element of an input array. Items without a role
// (function_call, function_call_output, reasoning…) carry no prompt text the
// demo reads.
type inputItem struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// readResponsesRequest decodes a Responses request into the chat request
// the canned replies are made from: instructions as a system message, a
// string input as one user message, an array input item by item.
func readResponsesRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, error) {
	var rr responsesRequest
	if err := decodeBody(w, r, &rr); err != nil {
		return nil, err
	}
	req := &chatRequest{Model: rr.Model, Stream: rr.Stream}
	if rr.Instructions != "" {
		text, _ := json.Marshal(rr.Instructions)
		req.Messages = append(req.Messages, message{Role: "system", Content: text})
	}
	var s string
	var items []inputItem
	switch {
	case len(rr.Input) == 0 || string(rr.Input) == "null":
	case json.Unmarshal(rr.Input, &s) == nil:
		req.Messages = append(req.Messages, message{Role: "user", Content: rr.Input})
	case json.Unmarshal(rr.Input, &items) == nil:
		for _, it := range items {
			if it.Role != "" {
				req.Messages = append(req.Messages, message(it))
			}
		}
	default:
		return nil, &requestError{http.StatusBadRequest,
			"Invalid type for 'input': expected a string or an array of input items."}
	}
	return req, nil
}

// responseObject is a Responses API response.
type responseObject struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Error             *struct{}       `json:"error"`              // always null here
	IncompleteDetails *struct{}       `json:"incomplete_details"` // likewise
	Model             string          `json:"model"`
	Output            []any           `json:"output"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	Usage             *responsesUsage `json:"usage"` // null until completed
}

type functionCallItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
}

type messageItem struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []outputText `json:"content"`
}

type outputText struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
}

func newOutputText(text string) outputText {
	return outputText{Type: "output_text", Text: text, Annotations: []any{}}
}

func functionCallOf(tc toolCall, args, status string) functionCallItem {
	return functionCallItem{Type: "function_call", ID: "fc_" + callSuffix(tc), CallID: tc.ID, Name: tc.Name,
		Arguments: args, Status: status}
}

func messageOf(content []outputText, status string) messageItem {
	return messageItem{Type: "message", ID: demoMessageID, Status: status, Role: "assistant", Content: content}
}

// responseOf is the completed response: a function_call item per tool, then
// the message with the text.
func responseOf(req *chatRequest, a answer) responseObject {
	out := make([]any, 0, len(a.tools)+1)
	for _, tc := range a.tools {
		out = append(out, functionCallOf(tc, tc.arguments(), "completed"))
	}
	out = append(out, messageOf([]outputText{newOutputText(a.text)}, "completed"))
	return responseObject{ID: demoResponseID, Object: "response", CreatedAt: demoCreated, Status: "completed",
		Model: req.model(), Output: out, ParallelToolCalls: true, Usage: a.usage.responses()}
}

// serveResponses answers a Responses API request: a response object, or
// its event stream.
func serveResponses(s *streamer, req *chatRequest) error {
	a, err := answerFor(req)
	if err != nil {
		return err
	}
	done := responseOf(req, a)
	if !req.Stream {
		return writeJSON(s.w, http.StatusOK, done)
	}
	if err := s.begin(sseHeader()); err != nil {
		return err
	}
	return (&responsesStream{s: s}).write(a, done)
}
