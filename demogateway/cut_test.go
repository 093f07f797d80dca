package demogateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCutShortEveryStream: a model with "cut" in its name, or a message that
// says "cut short", ends each stream protocol the demo speaks in the middle
// of its text, cleanly and without that protocol's end (SPEC 11.1), so that
// llm_meta's notice can be seen with no keys; the same request otherwise
// ends as usual.
func TestCutShortEveryStream(t *testing.T) {
	cases := []struct {
		name, path, model string
		// ended reports whether the body carries its protocol's end.
		ended func(body string) bool
	}{
		{"chat", "/v1/chat/completions", "demo-openai", func(b string) bool {
			return strings.Contains(b, `"finish_reason":"stop"`) || strings.Contains(b, "[DONE]")
		}},
		{"structured", "/v1/chat/completions", "demo-structured", func(b string) bool {
			return strings.Contains(b, `"finish_reason":"stop"`) || strings.Contains(b, "[DONE]")
		}},
		{"responses", "/v1/responses", "demo-openai", func(b string) bool {
			return strings.Contains(b, "response.completed") || strings.Contains(b, "response.output_text.done")
		}},
		{"messages", "/v1/messages", "demo-openai", func(b string) bool {
			return strings.Contains(b, "message_stop") || strings.Contains(b, "message_delta")
		}},
		{"hustle", "/v1/chat/completions", "demo-hustle", func(b string) bool {
			return strings.Contains(b, "\nd:") || strings.Contains(b, `"finishReason":"stop"`)
		}},
		{"ui", "/v1/chat/completions", "demo-ui", func(b string) bool {
			return strings.Contains(b, `"type":"finish"`) || strings.Contains(b, "[DONE]")
		}},
		// Gemini's model is in the path.
		{"gemini", "/v1beta/models/{model}:streamGenerateContent?alt=sse", "demo-openai", func(b string) bool {
			return strings.Contains(b, `"finishReason"`)
		}},
	}
	body := func(model, text string) string {
		b, _ := json.Marshal(map[string]any{"model": model, "stream": true, "max_tokens": 64,
			"messages": []map[string]string{{"role": "user", "content": text}}, "input": text,
			"contents": []map[string]any{{"role": "user", "parts": []map[string]string{{"text": text}}}}})
		return string(b)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			send := func(model, text string) string {
				return post(t, strings.ReplaceAll(c.path, "{model}", model), body(model, text)).Body.String()
			}
			whole := send(c.model, "hello there")
			if !c.ended(whole) {
				t.Fatalf("the whole stream lacks its end:\n%s", whole)
			}
			for _, cut := range []string{
				send(c.model+"-cut", "hello there"),
				send(c.model, "hello there, cut short please"),
			} {
				if c.ended(cut) {
					t.Errorf("a stream cut short carries its end:\n%s", cut)
				}
				// Cut in its text: some of it came, and the body ends
				// after a whole event or line, as a clean close does.
				if !strings.Contains(cut, `You `) && !strings.Contains(cut, `reply`) {
					t.Errorf("a stream cut short has none of its text:\n%s", cut)
				}
				if !strings.HasSuffix(cut, "\n") || len(cut) >= len(whole) {
					t.Errorf("cut stream of %d bytes (whole %d) does not end after a whole event:\n%s", len(cut), len(whole), cut)
				}
			}
		})
	}
}

// TestCutShortJSONIsWhole: a JSON reply is never cut (a body cut short is
// not JSON, SPEC 11.1): the chat reply of a "cut" model is whole.
func TestCutShortJSONIsWhole(t *testing.T) {
	w := chat(t, `{"model":"demo-cut","messages":[{"role":"user","content":"hi"}]}`)
	c := decode[completion](t, w.Body.Bytes())
	if len(c.Choices) != 1 || c.Choices[0].FinishReason != "stop" {
		t.Errorf("JSON reply of a cut model: %s", w.Body.String())
	}
}

// TestAutoAnswersWithAnotherModel: demo-auto plays a router
// (openrouter/auto): every protocol's reply names the model that answered,
// not the one asked for (SPEC 11.2).
func TestAutoAnswersWithAnotherModel(t *testing.T) {
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"demo-auto","messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/chat/completions", `{"model":"demo-auto","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"demo-auto","input":"hi"}`},
		{"/v1/messages", `{"model":"demo-auto","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1beta/models/demo-auto:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`},
	} {
		got := post(t, c.path, c.body).Body.String()
		named := strings.Contains(got, `"model":"`+servedModel+`"`) || strings.Contains(got, `"modelVersion":"`+servedModel+`"`)
		if !named || strings.Contains(got, `"demo-auto"`) {
			t.Errorf("%s %s: the reply does not name %s alone:\n%s", c.path, c.body, servedModel, got)
		}
	}
}
