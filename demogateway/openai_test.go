package demogateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// toolCallsOf rebuilds the tool calls of a stream the way a client does:
// id, type and name from the first fragment of each index, arguments joined.
func toolCallsOf(t *testing.T, cs []chunk) []toolCallFull {
	t.Helper()
	var calls []toolCallFull
	for _, c := range cs {
		if len(c.Choices) == 0 {
			continue
		}
		for _, d := range c.Choices[0].Delta.ToolCalls {
			if d.ID != "" {
				if d.Index != len(calls) || d.Type != "function" || d.Function.Name == "" || d.Function.Arguments != "" {
					t.Fatalf("bad first fragment: %+v", d)
				}
				calls = append(calls, toolCallFull{ID: d.ID, Type: d.Type, Function: functionCall{Name: d.Function.Name}})
				continue
			}
			if d.Index >= len(calls) || d.Function.Name != "" {
				t.Fatalf("bad argument fragment: %+v", d)
			}
			calls[d.Index].Function.Arguments += d.Function.Arguments
		}
	}
	for _, c := range calls {
		if !json.Valid([]byte(c.Function.Arguments)) {
			t.Fatalf("arguments of %s are not JSON: %q", c.Function.Name, c.Function.Arguments)
		}
	}
	return calls
}

func TestOpenAIStreamOneTool(t *testing.T) {
	w := chat(t, `{"model":"demo-openai","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Open a terminal"}]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	wantHeader(t, w, "Content-Type", "text/event-stream")
	wantHeader(t, w, "Content-Length", "")
	data := sseData(t, w.Body.String())
	cs := chunks(t, data)

	if d := cs[0].Choices[0].Delta; d.Role != "assistant" {
		t.Errorf("first chunk has no role: %s", data[0])
	}
	calls := toolCallsOf(t, cs)
	if len(calls) != 1 || calls[0].Function.Name != "launcher" || calls[0].Function.Arguments != `{"app":"terminal"}` {
		t.Errorf("tool calls = %+v", calls)
	}
	if got := content(cs); !strings.HasPrefix(got, `You said: "Open a terminal". `) {
		t.Errorf("content = %q", got)
	}

	// finish chunk, usage chunk with empty choices, meta-only event, [DONE]
	n := len(data)
	fin := cs[len(cs)-2]
	if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
		t.Errorf("no finish chunk before usage: %+v", fin)
	}
	u := decode[usage](t, cs[len(cs)-1].Usage)
	if !strings.Contains(data[n-3], `"choices":[]`) ||
		u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.PromptTokens == 0 || u.CompletionTokens == 0 {
		t.Errorf("bad usage chunk: %s", data[n-3])
	}
	// With include_usage, OpenAI sends "usage": null on every other chunk.
	for i, d := range data[:n-3] {
		if !strings.HasSuffix(d, `,"usage":null}`) {
			t.Errorf("chunk %d without \"usage\":null: %s", i, d)
		}
	}
	if want := `{"meta":{"structured_result":{"type":"table","headers":["Tool","Status"],"rows":[["launcher","ok"]]}}}`; data[n-2] != want {
		t.Errorf("meta event = %s, want %s", data[n-2], want)
	}
	// every chunk but the finish chunk has a null finish_reason
	for i, c := range cs[:len(cs)-2] {
		if c.Choices[0].FinishReason != nil || !strings.Contains(data[i], `"finish_reason":null`) {
			t.Errorf("chunk %d: finish_reason must be null: %s", i, data[i])
		}
	}
}

func TestOpenAIStreamParallelTools(t *testing.T) {
	w := chat(t, `{"model":"gpt-4o-mini","stream":true,
		"messages":[{"role":"user","content":[{"type":"text","text":"What's the weather"},{"type":"text","text":"in Paris?"}]}]}`)
	data := sseData(t, w.Body.String())
	cs := chunks(t, data)
	calls := toolCallsOf(t, cs)
	if len(calls) != 2 || calls[0].Function.Name != "get_weather" || calls[1].Function.Name != "get_forecast" ||
		calls[0].ID == calls[1].ID {
		t.Fatalf("tool calls = %+v", calls)
	}
	if cs[0].Model != "gpt-4o-mini" {
		t.Errorf("model = %q, want the request's", cs[0].Model)
	}
	if got := content(cs); !strings.Contains(got, `You said: "What's the weather in Paris?"`) || !strings.Contains(got, "21°C") {
		t.Errorf("content = %q", got)
	}
	for _, d := range data {
		if strings.Contains(d, `"usage"`) {
			t.Errorf("usage chunk without stream_options.include_usage: %s", d)
		}
	}
}

func TestOpenAIJSON(t *testing.T) {
	w := chat(t, `{"model":"demo-openai","messages":[{"role":"user","content":"Open a terminal"}]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	wantHeader(t, w, "Content-Type", "application/json")
	wantHeader(t, w, "Content-Length", fmt.Sprint(w.Body.Len()))
	c := decode[completion](t, w.Body.Bytes())
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("bad completion: %s", w.Body)
	}
	m := c.Choices[0].Message
	if m.Role != "assistant" || !strings.HasPrefix(m.Content, `You said: "Open a terminal"`) {
		t.Errorf("message = %+v", m)
	}
	if len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != "launcher" || m.ToolCalls[0].Type != "function" {
		t.Errorf("tool_calls = %+v", m.ToolCalls)
	}
	if c.Usage.TotalTokens == 0 {
		t.Errorf("no usage")
	}
	if !strings.Contains(w.Body.String(), `"meta":{"structured_result":{"type":"table","headers":["Tool","Status"],"rows":[["launcher","ok"]]}}`) {
		t.Errorf("no meta table: %s", w.Body)
	}
}

func TestPlain(t *testing.T) {
	w := chat(t, `{"model":"demo-plain","messages":[{"role":"user","content":"hi"}]}`)
	c := decode[completion](t, w.Body.Bytes())
	if c.Meta != nil || len(c.Choices[0].Message.ToolCalls) != 0 || strings.Contains(w.Body.String(), "tool_calls") {
		t.Errorf("plain reply has tools or meta: %s", w.Body)
	}
	if !strings.HasPrefix(c.Choices[0].Message.Content, `You said: "hi". `) {
		t.Errorf("content = %q", c.Choices[0].Message.Content)
	}

	w = chat(t, `{"model":"demo-plain","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	data := sseData(t, w.Body.String())
	cs := chunks(t, data)
	if len(toolCallsOf(t, cs)) != 0 || strings.Contains(w.Body.String(), `"meta"`) {
		t.Errorf("plain stream has tools or meta: %s", w.Body)
	}
	if got := content(cs); got != c.Choices[0].Message.Content {
		t.Errorf("stream content %q differs from JSON content %q", got, c.Choices[0].Message.Content)
	}
}

func TestFragmentsKeepUTF8(t *testing.T) {
	s := "a°b😀c café"
	for n := 1; n < 6; n++ {
		parts := fragments(s, n)
		if strings.Join(parts, "") != s {
			t.Fatalf("n=%d: parts %q do not join to %q", n, parts, s)
		}
		for _, p := range parts {
			b, _ := json.Marshal(p)
			var back string
			if json.Unmarshal(b, &back); back != p {
				t.Fatalf("n=%d: part %q is not valid UTF-8", n, p)
			}
		}
	}
	if got := strings.Join(words("a b  c\nd"), "|"); got != "a |b | |c\n|d" {
		t.Errorf("words = %q", got)
	}
}
