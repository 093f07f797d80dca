package demogateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// anthropicStreamEvent is a Messages stream event as a client decodes it.
type anthropicStreamEvent struct {
	Type         string     `json:"type"`
	Message      jsonObject `json:"message"`
	Index        *int       `json:"index"`
	ContentBlock jsonObject `json:"content_block"`
	Delta        jsonObject `json:"delta"`
	Usage        jsonObject `json:"usage"`
}

// accumulateMessage rebuilds the message from a Messages stream the way
// Anthropic's SDKs (MessageStream) do: message_start gives the snapshot,
// content_block_start appends the block at its index, text_delta appends
// text, input_json_delta fragments are joined and parsed as the tool input
// at content_block_stop, message_delta sets the stop reason and updates the
// usage. It checks the order those SDKs rely on: message_start first,
// deltas only inside their open block, blocks in index order, message_delta
// before message_stop, message_stop last.
func accumulateMessage(t *testing.T, evs []namedEvent) jsonObject {
	t.Helper()
	var msg jsonObject
	var content []any
	open := -1 // index of the open block
	var partialJSON strings.Builder
	sawDelta := false
	for i, ne := range evs {
		e := decode[anthropicStreamEvent](t, ne.data)
		if (i == 0) != (e.Type == "message_start") {
			t.Fatalf("event %d is %s: message_start must come first, and only first", i, e.Type)
		}
		if (i == len(evs)-1) != (e.Type == "message_stop") {
			t.Fatalf("event %d of %d is %s: message_stop must come last, and only last", i, len(evs), e.Type)
		}
		inOpen := func() jsonObject {
			if e.Index == nil || *e.Index != open {
				t.Fatalf("event %d (%s): index %v, open block %d", i, e.Type, e.Index, open)
			}
			return content[open].(jsonObject)
		}
		switch e.Type {
		case "message_start":
			msg = e.Message
			if msg["type"] != "message" || msg["role"] != "assistant" || len(msg["content"].([]any)) != 0 || msg["stop_reason"] != nil {
				t.Fatalf("bad message_start: %s", ne.data)
			}
		case "ping":
		case "content_block_start":
			if open != -1 || e.Index == nil || *e.Index != len(content) {
				t.Fatalf("event %d: block %v starts while %d is open, or out of order", i, e.Index, open)
			}
			open = *e.Index
			content = append(content, e.ContentBlock)
			partialJSON.Reset()
		case "content_block_delta":
			b := inOpen()
			switch e.Delta["type"] {
			case "text_delta":
				if b["type"] != "text" {
					t.Fatalf("event %d: text_delta in a %v block", i, b["type"])
				}
				b["text"] = b["text"].(string) + e.Delta["text"].(string)
			case "input_json_delta":
				if b["type"] != "tool_use" {
					t.Fatalf("event %d: input_json_delta in a %v block", i, b["type"])
				}
				partialJSON.WriteString(e.Delta["partial_json"].(string))
			default:
				t.Fatalf("event %d: unexpected delta %v", i, e.Delta)
			}
		case "content_block_stop":
			if b := inOpen(); b["type"] == "tool_use" {
				b["input"] = decode[jsonObject](t, []byte(partialJSON.String()))
			}
			open = -1
		case "message_delta":
			if open != -1 {
				t.Fatalf("event %d: message_delta while block %d is open", i, open)
			}
			msg["stop_reason"] = e.Delta["stop_reason"]
			msg["stop_sequence"] = e.Delta["stop_sequence"]
			u := msg["usage"].(jsonObject)
			for k, v := range e.Usage {
				u[k] = v
			}
			sawDelta = true
		case "message_stop":
			if !sawDelta {
				t.Fatalf("message_stop without a message_delta")
			}
		default:
			t.Fatalf("event %d: unexpected type %s", i, e.Type)
		}
	}
	msg["content"] = content
	return msg
}

// toolUses lists "name(input)" of the tool_use blocks.
func toolUses(t *testing.T, content []any) []string {
	var out []string
	for _, c := range content {
		if b := c.(jsonObject); b["type"] == "tool_use" {
			if !strings.HasPrefix(b["id"].(string), "toolu_") {
				t.Errorf("tool_use id %v", b["id"])
			}
			out = append(out, fmt.Sprintf("%s(%s)", b["name"], mustMarshal(t, b["input"])))
		}
	}
	return out
}

// textOfBlocks joins the text blocks.
func textOfBlocks(content []any) string {
	var texts []string
	for _, c := range content {
		if b := c.(jsonObject); b["type"] == "text" {
			texts = append(texts, b["text"].(string))
		}
	}
	return strings.Join(texts, "\n")
}

func TestMessagesJSON(t *testing.T) {
	w := post(t, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":1024,"system":"Be brief.",
		"messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi!"},
		            {"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "application/json")
	m := decode[jsonObject](t, w.Body.Bytes())
	if m["type"] != "message" || m["role"] != "assistant" || m["model"] != "claude-sonnet-4-5" ||
		m["stop_reason"] != "end_turn" || m["stop_sequence"] != nil {
		t.Errorf("bad message: %s", w.Body)
	}
	content := m["content"].([]any)
	want := []string{`get_weather({"city":"Paris","unit":"celsius"})`, `get_forecast({"city":"Paris","days":3})`}
	if got := toolUses(t, content); !reflect.DeepEqual(got, want) {
		t.Errorf("tool_use blocks = %v, want %v", got, want)
	}
	if last := content[len(content)-1].(jsonObject); last["type"] != "text" ||
		!strings.HasPrefix(last["text"].(string), `You said: "Weather in Paris?". I asked get_weather`) {
		t.Errorf("last block is not the text: %v", last)
	}
	if _, ok := m["meta"]; ok {
		t.Errorf("an Anthropic reply carries no gateway meta: %s", w.Body)
	}

	// The system prompt, "Hello" and "Hi!" (17 characters) are read from the
	// cache; input_tokens counts only the rest, as Anthropic counts it.
	u := decode[anthropicUsage](t, mustMarshal(t, m["usage"]))
	if u.CacheReadInputTokens != 17/4 || u.CacheCreationInputTokens != 0 || u.InputTokens == 0 || u.OutputTokens == 0 || u.Cost != nil {
		t.Errorf("usage = %+v", u)
	}
	var chat chatRequest
	chat.Messages = []message{{Role: "system", Content: json.RawMessage(`"Be brief."`)}, {Content: json.RawMessage(`"Hello"`)},
		{Content: json.RawMessage(`"Hi!"`)}, {Content: json.RawMessage(`"Weather in Paris?"`)}}
	if u.InputTokens+u.CacheReadInputTokens != chat.promptTokens() {
		t.Errorf("input %d + cache read %d is not the prompt's %d tokens", u.InputTokens, u.CacheReadInputTokens, chat.promptTokens())
	}
}

func TestMessagesStream(t *testing.T) {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`
	w := post(t, "/v1/messages", body)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "text/event-stream")
	evs := namedEvents(t, w.Body.String())
	got := accumulateMessage(t, evs)

	// The stream rebuilds the JSON reply exactly, usage included.
	w = post(t, "/v1/messages", strings.Replace(body, `"stream":true`, `"stream":false`, 1))
	if whole := decode[jsonObject](t, w.Body.Bytes()); !reflect.DeepEqual(got, whole) {
		t.Errorf("message built from the stream:\n%v\ndiffers from the JSON reply:\n%v", got, whole)
	}
	content := got["content"].([]any)
	if uses := toolUses(t, content); len(uses) != 2 {
		t.Errorf("tool uses = %v", uses)
	}
	if text := textOfBlocks(content); !strings.HasPrefix(text, `You said: "Weather in Paris?". `) {
		t.Errorf("text = %q", text)
	}

	var names []string
	for _, e := range evs {
		if len(names) == 0 || names[len(names)-1] != e.name {
			names = append(names, e.name) // runs collapsed
		}
	}
	want := "message_start ping " + strings.Repeat("content_block_start content_block_delta content_block_stop ", 3) +
		"message_delta message_stop"
	if strings.Join(names, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(names, " "), want)
	}
	// message_start has the input usage and 1 output token; message_delta the
	// output tokens; the first input_json_delta is empty, as Anthropic's is.
	start := decode[anthropicStreamEvent](t, evs[0].data).Message["usage"].(jsonObject)
	if start["output_tokens"] != 1.0 || start["input_tokens"] == nil || start["cache_read_input_tokens"] == nil ||
		start["cache_creation_input_tokens"] == nil {
		t.Errorf("message_start usage = %v", start)
	}
	if !strings.Contains(string(evs[3].data), `"partial_json":""`) {
		t.Errorf("first tool delta = %s", evs[3].data)
	}
}

func TestMessagesRequestErrors(t *testing.T) {
	h := newHandler(t, 0)
	for _, body := range []string{`{"messages":`, `null`, `{"messages":"x"}`, `{"stream":"yes"}`} {
		w := serve(t, h, http.MethodPost, "/v1/messages", body)
		e := decode[anthropicError](t, w.Body.Bytes())
		if w.Code != http.StatusBadRequest || e.Type != "error" || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
			t.Errorf("%s: status %d, body %s", body, w.Code, w.Body)
		}
	}
	w := serve(t, h, http.MethodPost, "/v1/messages", `{"model":"`+strings.Repeat("x", maxBodyBytes)+`"}`)
	if e := decode[anthropicError](t, w.Body.Bytes()); w.Code != http.StatusRequestEntityTooLarge || e.Error.Type != "request_too_large" {
		t.Errorf("huge body: status %d, body %s", w.Code, w.Body)
	}
	w = serve(t, h, http.MethodGet, "/v1/messages", "")
	if e := decode[anthropicError](t, w.Body.Bytes()); w.Code != http.StatusMethodNotAllowed || e.Type != "error" {
		t.Errorf("GET /v1/messages: status %d, body %s", w.Code, w.Body)
	}
}
