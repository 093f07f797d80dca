package demogateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// Google's Gemini API, as AI Studio and Vertex AI speak it:
//
//	POST …/models/{model}:generateContent                one JSON reply
//	POST …/models/{model}:streamGenerateContent?alt=sse  SSE, CRLF framing, no [DONE]
//	POST …/models/{model}:streamGenerateContent          a JSON array streamed element by element
//
// The model is the path's, not the body's.

const (
	geminiGenerateMethod = ":generateContent"
	geminiStreamMethod   = ":streamGenerateContent"
	// demoGeminiResponseID is the responseId of every Gemini reply.
	demoGeminiResponseID = "demo-gemini-response"
)

// isGeminiPath says whether path is one of the two Gemini methods.
func isGeminiPath(path string) bool {
	return strings.HasSuffix(path, geminiGenerateMethod) || strings.HasSuffix(path, geminiStreamMethod)
}

// geminiModelOf is the model a Gemini path names: its last segment up to
// the colon ("gemini-2.5-flash" in …/models/gemini-2.5-flash:generateContent).
func geminiModelOf(path string) string {
	seg := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(seg, ':'); i >= 0 {
		seg = seg[:i]
	}
	return seg
}

// geminiRequest is the part of a generateContent request the demo reads.
type geminiRequest struct {
	Contents          []geminiContent `json:"contents"`
	SystemInstruction *geminiContent  `json:"systemInstruction"`
}

type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

// geminiPart is one part of a content: text, or a function call.
type geminiPart struct {
	Text         string              `json:"text,omitempty"`
	FunctionCall *geminiFunctionCall `json:"functionCall,omitempty"`
}

type geminiFunctionCall struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
}

// text joins the text parts of a content with "\n".
func (c geminiContent) text() string {
	var texts []string
	for _, p := range c.Parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// readGeminiRequest decodes a Gemini request into the chat request the
// canned replies are made from: the model from the path, the system
// instruction as a system message, "model" turns as assistant messages.
// stream is the method's, and sse whether the stream is an event stream
// (alt=sse) or a JSON array.
func readGeminiRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, error) {
	var gr geminiRequest
	if err := decodeBody(w, r, &gr); err != nil {
		return nil, err
	}
	req := &chatRequest{Model: geminiModelOf(r.URL.Path), Stream: strings.HasSuffix(r.URL.Path, geminiStreamMethod)}
	add := func(role string, c geminiContent) {
		text, _ := json.Marshal(c.text()) // a string always marshals
		req.Messages = append(req.Messages, message{Role: role, Content: text})
	}
	if gr.SystemInstruction != nil {
		add("system", *gr.SystemInstruction)
	}
	for _, c := range gr.Contents {
		role := "user"
		if c.Role == "model" {
			role = "assistant"
		}
		add(role, c)
	}
	return req, nil
}

// geminiResponse is a GenerateContentResponse: the whole reply, or one
// event of a stream.
type geminiResponse struct {
	Candidates    []geminiCandidate `json:"candidates"`
	UsageMetadata geminiUsage       `json:"usageMetadata"`
	ModelVersion  string            `json:"modelVersion"`
	ResponseID    string            `json:"responseId"`
}

type geminiCandidate struct {
	Content      geminiContent `json:"content"`
	FinishReason string        `json:"finishReason,omitempty"`
	Index        int           `json:"index"`
}

// geminiUsage is usageMetadata: promptTokenCount counts the cached tokens
// too; candidatesTokenCount is absent until the model has written some.
type geminiUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
}

// gemini is the usage in Gemini's shape. Gemini reports no price, so the
// OpenRouter model's cost is not in it.
func (t tokenCounts) gemini() geminiUsage {
	return geminiUsage{PromptTokenCount: t.input, CandidatesTokenCount: t.output,
		TotalTokenCount: t.input + t.output, CachedContentTokenCount: t.cached}
}

// geminiStop is the finishReason of every demo reply: Gemini says STOP for
// a turn with function calls too.
const geminiStop = "STOP"

// serveGemini answers a Gemini request: a candidate whose parts are a
// functionCall per tool and then the text, as one JSON reply, an event
// stream or a streamed JSON array.
func serveGemini(s *streamer, req *chatRequest, sse bool) error {
	a, err := answerFor(req)
	if err != nil {
		return err
	}
	if !req.Stream {
		parts := append(geminiCalls(a.tools), geminiPart{Text: a.text})
		return writeJSON(s.w, http.StatusOK, geminiReply(req, parts, geminiStop, a.usage.gemini()))
	}
	gs := geminiStream{s: s, sse: sse}
	header := sseHeader()
	if !sse {
		header = map[string]string{"Content-Type": "application/json"}
	}
	if err := s.begin(header); err != nil {
		return err
	}
	return gs.write(req, a)
}

// geminiCalls is a functionCall part per tool.
func geminiCalls(tools []toolCall) []geminiPart {
	parts := make([]geminiPart, 0, len(tools)+1)
	for _, tc := range tools {
		parts = append(parts, geminiPart{FunctionCall: &geminiFunctionCall{Name: tc.Name, Args: tc.Args}})
	}
	return parts
}

func geminiReply(req *chatRequest, parts []geminiPart, finish string, u geminiUsage) geminiResponse {
	return geminiResponse{
		Candidates:    []geminiCandidate{{Content: geminiContent{Role: "model", Parts: parts}, FinishReason: finish}},
		UsageMetadata: u, ModelVersion: req.model(), ResponseID: demoGeminiResponseID,
	}
}

// geminiStream writes the events of one Gemini stream: as SSE events framed
// with CRLF, as Google frames them, or as the elements of a JSON array.
type geminiStream struct {
	s      *streamer
	sse    bool
	events int
}

// write sends the function calls in one event (Gemini sends parallel calls
// whole, together), then the text word by word; the last word carries the
// finishReason and the final usage. Every event carries usageMetadata as
// Gemini's do, with the prompt's count until the end.
func (gs *geminiStream) write(req *chatRequest, a answer) error {
	running := geminiUsage{PromptTokenCount: a.usage.input, TotalTokenCount: a.usage.input,
		CachedContentTokenCount: a.usage.cached}
	if len(a.tools) > 0 {
		if err := gs.send(geminiReply(req, geminiCalls(a.tools), "", running), false); err != nil {
			return err
		}
	}
	ws := a.pieces
	for i, w := range ws {
		r := geminiReply(req, []geminiPart{{Text: w}}, "", running)
		last := i == len(ws)-1 && !a.cut // cut short: no finishReason ends it
		if last {
			r = geminiReply(req, []geminiPart{{Text: w}}, geminiStop, a.usage.gemini())
		}
		if err := gs.send(r, last); err != nil {
			return err
		}
	}
	return nil
}

// send writes one event; the array's last element closes the array.
func (gs *geminiStream) send(v geminiResponse, last bool) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b := make([]byte, 0, len(data)+10)
	switch {
	case gs.sse:
		b = append(b, "data: "...)
		b = append(b, data...)
		b = append(b, "\r\n\r\n"...)
	case gs.events == 0:
		b = append(append(b, '['), data...)
	default:
		b = append(append(b, ",\r\n"...), data...)
	}
	if last && !gs.sse {
		b = append(b, ']')
	}
	gs.events++
	return gs.s.send(b)
}

// geminiError is Google's error body.
type geminiError struct {
	Error geminiErrorObj `json:"error"`
}

type geminiErrorObj struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
}

// writeGeminiError answers a request error in Google's shape.
func writeGeminiError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if re, ok := errors.AsType[*requestError](err); ok {
		status = re.status
	}
	name := map[int]string{
		http.StatusBadRequest:            "INVALID_ARGUMENT",
		http.StatusMethodNotAllowed:      "METHOD_NOT_ALLOWED",
		http.StatusRequestEntityTooLarge: "INVALID_ARGUMENT",
	}[status]
	writeJSON(w, status, geminiError{geminiErrorObj{Code: status, Message: err.Error(), Status: name}})
}
