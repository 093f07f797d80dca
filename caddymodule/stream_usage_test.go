package caddymodule

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestStreamUsageRepeatedOptions: a chat stream whose request repeats
// stream_options, the last copy not asking for the usage, still gets
// meta.usage, through Caddy with the demo gateway behind (which reads the
// last copy, as Go's encoding/json and JSON.parse do), and the client
// still gets no usage chunk. A request whose last copy asks gets its usage
// chunk as it came.
func TestStreamUsageRepeatedOptions(t *testing.T) {
	base := loadCaddy(t, llmMeta(t, nil), map[string]any{"handler": "llm_meta_demo"})
	const head = `{"model":"demo-openai","stream":true,"messages":[{"role":"user","content":"hello"}],`
	for _, c := range []struct {
		options     string
		clientAsked bool
	}{
		{`"stream_options":{"include_usage":true},"stream_options":{"include_usage":false}}`, false},
		{`"stream_options":{"include_usage":false,"include_usage":true}}`, true},
	} {
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(head+c.options))
		req.Header.Set("Content-Type", "application/json")
		resp, err := testClient.Do(req)
		must(t, err, "POST %s", c.options)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		events := parseClientEvents(body)
		usageChunks := 0
		for _, e := range events {
			var chunk struct {
				Choices []json.RawMessage `json:"choices"`
				Usage   json.RawMessage   `json:"usage"`
			}
			if json.Unmarshal(e.data, &chunk) == nil && len(chunk.Choices) == 0 && len(chunk.Usage) > 0 && string(chunk.Usage) != "null" {
				usageChunks++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[c.clientAsked]; usageChunks != want {
			t.Errorf("%s: %d usage chunks reached the client, want %d:\n%s", c.options, usageChunks, want, body)
		}
		var meta struct {
			Usage struct {
				Input  int `json:"input_tokens"`
				Output int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(streamMeta(events), &meta); err != nil || meta.Usage.Input == 0 || meta.Usage.Output == 0 {
			t.Errorf("%s: meta %s has no usage (%v):\n%s", c.options, streamMeta(events), err, body)
		}
	}
}
