package caddymodule

import (
	"strings"
	"testing"
)

// What real gateways send that the module once misread (issue 36), through
// a real in-process Caddy: one test per quirk.

// sseEvents joins events as an upstream frames them: "data: X" and a
// blank line each.
func sseEvents(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// OpenRouter ends a failed generation with a chunk that has choices
// (finish_reason "error") and a top-level error, then [DONE]: an error
// event (SPEC 4.3), so run-once answers the 502 of SPEC 6.4 and the edge
// stream shows it (SPEC 6.3).
func TestOpenRouterMidStreamError(t *testing.T) {
	up := &recordingUpstream{ctype: "text/event-stream", response: sseEvents(
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-4o","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
		`[DONE]`)}
	base := startEndpoints(t, "", up)

	t.Run("run-once", func(t *testing.T) {
		resp, body := fetch(t, base, "/v1/chat/completions", `{"model":"openrouter/auto","run_once":true,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
		assertEdgeError(t, resp, body, 502, "Provider disconnected")
	})
	t.Run("edge stream", func(t *testing.T) {
		resp, body := fetch(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`, "x-stream", "true")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if got := streamContent(parseClientEvents(body)); got != "HiError: Provider disconnected" {
			t.Errorf("content %q, want the error shown after the text; body %q", got, body)
		}
	})
}
