package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// The mock model OpenClaw's agent talks to: an OpenAI-compatible chat
// completions server. Asked with the word USE_TOOL in this turn's user
// messages and tools on offer, it answers with a call of the agent's
// built-in ls tool ({"path":"."}) (with USE_WRAPPER, the same through the
// tool_call wrapper; with USE_CLIENT_TOOL, the client's own get_weather);
// once the tool's result comes back (a role "tool" message)
// it answers with text. That makes the agent run a real tool, which
// OpenClaw's own endpoints never report and its transcript does.

const (
	mockModelID = "mock-model"
	// MockAnswerPrefix starts every final answer; the checks look for it.
	mockAnswerPrefix = "MOCK FINAL ANSWER"
)

type mockModel struct {
	calls atomic.Int64
}

type chatRequest struct {
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (m *mockModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": mockModelID, "object": "model", "owned_by": "mock"}}})
		return
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
	default:
		http.NotFound(w, r)
		return
	}
	var req chatRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	n := m.calls.Add(1)
	id := fmt.Sprintf("chatcmpl-mock%d", n)
	last := req.Messages[len(req.Messages)-1]
	var toolCall, toolName, toolArgs, text string
	asked, toolResult, sawTool := sinceAssistant(req)
	switch {
	case sawTool:
		text = fmt.Sprintf("%s after tool. Tool result length=%d.", mockAnswerPrefix, len(toolResult))
	case strings.Contains(asked, "USE_CLIENT_TOOL") && offers(req, "get_weather"):
		// A tool the client supplied: OpenClaw hands the call back to it.
		toolCall, toolName, toolArgs = fmt.Sprintf("call_mock%d", n), "get_weather", `{"city":"Paris"}`
	case strings.Contains(asked, "USE_CLIENT_TOOL") && offers(req, "tool_call"):
		// The same when OpenClaw files client tools in its tool-search
		// catalog: reached through the wrapper.
		toolCall, toolName, toolArgs = fmt.Sprintf("call_mock%d", n), "tool_call", `{"id":"get_weather","args":{"city":"Paris"}}`
	case strings.Contains(asked, "USE_WRAPPER") && offers(req, "tool_call"):
		// The agent's tool-search wrapper, naming the real tool in its id.
		toolCall, toolName, toolArgs = fmt.Sprintf("call_mock%d", n), "tool_call", `{"id":"ls","args":{"path":"."}}`
	case strings.Contains(asked, "USE_TOOL") && offers(req, "ls"):
		toolCall, toolName, toolArgs = fmt.Sprintf("call_mock%d", n), "ls", `{"path":"."}`
	default:
		text = mockAnswerPrefix + " without a tool."
	}
	usage := map[string]int{"prompt_tokens": 111, "completion_tokens": 22, "total_tokens": 133}
	if os.Getenv("MOCK_DEBUG") != "" {
		var names []string
		for _, t := range req.Tools {
			names = append(names, t.Function.Name)
		}
		log.Printf("mock model: tools %v, last message %q", names, contentText(last.Content))
	}
	log.Printf("mock model: call %d, last message %s, %d tools -> tool call %v", n, last.Role, len(req.Tools), toolCall != "")
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": text}
		finish := "stop"
		if toolCall != "" {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": toolCall, "type": "function", "function": map[string]any{"name": toolName, "arguments": toolArgs}}}}
			finish = "tool_calls"
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": mockModelID,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": mockModelID,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	var events []any
	if toolCall != "" {
		events = append(events,
			chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"index": 0, "id": toolCall, "type": "function", "function": map[string]any{"name": toolName, "arguments": ""}}}}, nil),
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": toolArgs}}}}, nil),
			chunk(map[string]any{}, "tool_calls"))
	} else {
		events = append(events, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for len(text) > 0 {
			k := min(12, len(text))
			events = append(events, chunk(map[string]any{"content": text[:k]}, nil))
			text = text[k:]
		}
		events = append(events, chunk(map[string]any{}, "stop"))
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		events = append(events, map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": mockModelID,
			"choices": []any{}, "usage": usage})
	}
	f, _ := w.(http.Flusher)
	for _, e := range events {
		b, _ := json.Marshal(e)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f != nil {
			f.Flush()
		}
	}
	io.WriteString(w, "data: [DONE]\n\n")
}

// sinceAssistant reads the messages after the last assistant message: the
// text of the user's (this turn's prompt; OpenClaw adds a user message of
// its own context after the client's, and after a tool's result), and the
// tool result, if one came back.
func sinceAssistant(req chatRequest) (userText, toolResult string, sawTool bool) {
	var b strings.Builder
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role != "assistant"; i-- {
		switch m := req.Messages[i]; m.Role {
		case "user":
			b.WriteString(contentText(m.Content))
			b.WriteByte('\n')
		case "tool":
			toolResult, sawTool = contentText(m.Content), true
		}
	}
	return b.String(), toolResult, sawTool
}

// offers reports whether the request offers the tool name.
func offers(req chatRequest, name string) bool {
	for _, t := range req.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

// contentText is a message's text: a string, or the text of its parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
