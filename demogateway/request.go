package demogateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// maxBodyBytes bounds what the demo reads: chat requests are small, and a
// demo must not be a way to make Caddy hold large bodies in memory.
const maxBodyBytes = 4 << 20

// maxEcho bounds how much of the user's message is echoed back.
const maxEcho = 120

// chatRequest is the part of an OpenAI chat completion request the demo
// looks at; everything else is accepted and ignored, like gateways do.
type chatRequest struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	StreamOptions *streamOptions  `json:"stream_options"`
	Messages      []message       `json:"messages"`
	ResponseFmt   *responseFormat `json:"response_format"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// requestError is a client error answered in OpenAI's error shape.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// readChatRequest decodes a chat completion request.
func readChatRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, error) {
	var req chatRequest
	if err := decodeBody(w, r, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// decodeBody reads the JSON object of a request into v, answering the
// errors OpenAI would (Anthropic answers the same cases with the same
// statuses).
func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &requestError{http.StatusRequestEntityTooLarge,
				fmt.Sprintf("Request body larger than %d bytes.", maxBodyBytes)}
		}
		return &requestError{http.StatusBadRequest, "Could not read the request body."}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &requestError{http.StatusBadRequest,
			"We could not parse the JSON body of your request. (" + err.Error() + ")"}
	}
	// "null" decodes into the zero struct without error; the APIs want an object.
	if b := strings.TrimSpace(string(body)); !strings.HasPrefix(b, "{") {
		return &requestError{http.StatusBadRequest,
			"We could not parse the JSON body of your request: expected a JSON object."}
	}
	return nil
}

// servedModel is the model a router answers with (demo-auto plays
// openrouter/auto): another model than the one asked for, so that the reply
// shows meta.model_served (SPEC 11.2).
const servedModel = "demo-openai-fallback"

// model is the model to report in replies.
func (c *chatRequest) model() string {
	switch {
	case c.Model == "":
		return "demo-openai"
	case strings.Contains(strings.ToLower(c.Model), "auto"):
		return servedModel
	}
	return c.Model
}

// cutShort says whether the stream is to end in the middle of its text, as
// an upstream that crashed or timed out would end it: cleanly, without its
// protocol's end (SPEC 11.1). A model with "cut" in its name, or a message
// that says "cut short", asks for it; a JSON reply is always whole.
func (c *chatRequest) cutShort() bool {
	return strings.Contains(strings.ToLower(c.Model), "cut") || c.mentions("cut short")
}

// textPieces is the text of a stream in the pieces it is sent in: its
// words, only the first half of them in a stream cut short.
func (c *chatRequest) textPieces(text string) []string {
	w := words(text)
	if c.cutShort() {
		return w[:(len(w)+1)/2]
	}
	return w
}

// includeUsage says whether a stream ends with a usage chunk.
func (c *chatRequest) includeUsage() bool {
	return c.StreamOptions != nil && c.StreamOptions.IncludeUsage
}

// lastUserText is the text of the last user message: its content when a
// string, else the text parts joined.
func (c *chatRequest) lastUserText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return messageText(c.Messages[i].Content)
		}
	}
	return ""
}

func messageText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		// "text" in chat and Anthropic messages, "input_text" and
		// "output_text" in Responses input items.
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// echo is the last user message shortened to one line, for "You said: …".
func (c *chatRequest) echo() string {
	s := strings.Join(strings.Fields(c.lastUserText()), " ")
	if s == "" {
		return "(nothing)"
	}
	if utf8.RuneCountInString(s) > maxEcho {
		s = string([]rune(s)[:maxEcho]) + "…"
	}
	return s
}

// promptTokens is a deterministic stand-in for a tokenizer: about four
// characters a token, as the rule of thumb for English goes.
func (c *chatRequest) promptTokens() int {
	n := 0
	for _, m := range c.Messages {
		n += utf8.RuneCountInString(messageText(m.Content))
	}
	return max(1, n/4)
}

// cachedTokens is the part of promptTokens a provider's prompt cache would
// serve: every message but the last, which a chat sends again each turn.
func (c *chatRequest) cachedTokens() int {
	n := 0
	for _, m := range c.Messages[:max(0, len(c.Messages)-1)] {
		n += utf8.RuneCountInString(messageText(m.Content))
	}
	return min(n/4, c.promptTokens())
}

// reportsCost says whether the model plays OpenRouter, which puts the
// reply's price in USD into the usage object as "cost".
func (c *chatRequest) reportsCost() bool {
	return strings.Contains(strings.ToLower(c.Model), "openrouter")
}

// mentions reports whether the last user message contains word, ignoring case.
func (c *chatRequest) mentions(word string) bool {
	return strings.Contains(strings.ToLower(c.lastUserText()), word)
}

// replyKind is the kind of gateway the demo plays for one request.
type replyKind int

const (
	kindOpenAI replyKind = iota
	kindPlain
	kindStructured
	kindHustle
	kindUI
)

func (k replyKind) String() string {
	return [...]string{"openai", "plain", "structured", "hustle", "ui"}[k]
}

// kind picks the reply from the model name. Protocol gateways (Hustle, UI)
// come first because those gateways ignore response_format; then a
// requested JSON reply wins over plain text, as it would on OpenAI.
func (c *chatRequest) kind() replyKind {
	m := strings.ToLower(c.Model)
	switch {
	case strings.Contains(m, "hustle"):
		return kindHustle
	case strings.Contains(m, "ui"):
		return kindUI
	case strings.Contains(m, "structured"),
		c.ResponseFmt != nil && (c.ResponseFmt.Type == "json_schema" || c.ResponseFmt.Type == "json_object"):
		return kindStructured
	case strings.Contains(m, "plain"):
		return kindPlain
	}
	return kindOpenAI
}

// apiError is OpenAI's error body.
type apiError struct {
	Error apiErrorBody `json:"error"`
}

type apiErrorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func writeRequestError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	if re, ok := errors.AsType[*requestError](err); ok {
		status = re.status
	}
	writeError(w, status, err.Error())
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, apiError{apiErrorBody{Message: msg, Type: "invalid_request_error"}})
}

// writeJSON writes v as a complete JSON reply with its Content-Length.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}
