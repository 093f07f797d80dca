package translate

import (
	"io"
	"strings"
	"testing"
)

// AI SDK 6 and 7 parts of the UI message stream (SPEC 5.2) not covered by
// TestUIStreamParts.

// Every part type of SPEC 5.2 identifies a stream without its header.
func TestUIStreamPartTypesRecognised(t *testing.T) {
	for _, typ := range []string{
		"start", "text-delta", "reasoning-delta", "tool-input-start", "tool-input-available", "tool-call",
		"error", "finish", "data-weather",
		"tool-input-error", "tool-output-error", "tool-approval-request", "message-metadata", "abort",
		"start-step", "finish-step", "text-start", "text-end", "reasoning-start", "reasoning-end",
		"reasoning-file", "source-url", "source-document", "file", "tool-input-delta",
		"tool-output-available", "tool-output-denied", "tool-approval-response", "custom",
		"steering-message", "reset-step",
	} {
		if !IsUIStreamEvent([]byte(`{"type":"` + typ + `"}`)) {
			t.Errorf("%s is not recognised", typ)
		}
	}
	for _, typ := range []string{"response.created", "message_start", "text", "tool-", "data-", "mystery"} {
		if IsUIStreamEvent([]byte(`{"type":"` + typ + `"}`)) {
			t.Errorf("%s is recognised", typ)
		}
	}
}

// The known parts that give nothing are not counted as skipped.
func TestUIStreamKnownPartsNotSkipped(t *testing.T) {
	in := sse(uiStart, `{"type":"reasoning-file","url":"u"}`, `{"type":"source-document","sourceId":"s"}`,
		`{"type":"tool-output-denied","toolCallId":"c"}`, `{"type":"tool-approval-response","approvalId":"a","approved":true}`,
		`{"type":"reasoning-start","id":"r"}`, `{"type":"reasoning-end","id":"r"}`, `{"type":"tool-output-available","toolCallId":"c","output":1}`)
	var st Stats
	got, _ := convertUIStream(t, testOpts(&st), in)
	if got != done || st.Skipped != 0 {
		t.Fatalf("output %q, skipped %d", got, st.Skipped)
	}
}

// Usage: message metadata (a message-metadata part, or messageMetadata on
// start or finish) gives the last chunk's usage unless the finish brings
// its own; after the last chunk it updates meta.usage only.
func TestUIStreamMetadataUsage(t *testing.T) {
	cases := []struct {
		name, in, chunkUsage, metaUsage string
	}{
		{"finish usage wins", sse(uiStart, `{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":7,"outputTokens":2}}}`,
			`{"type":"finish","usage":{"inputTokens":8,"outputTokens":3}}`),
			`{"prompt_tokens":8,"completion_tokens":3,"total_tokens":11}`, `{"input_tokens":8,"output_tokens":3,"total_tokens":11}`},
		{"on start", sse(`{"type":"start","messageId":"m","messageMetadata":{"usage":{"inputTokens":4,"outputTokens":1}}}`, `{"type":"finish"}`),
			`{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}`, `{"input_tokens":4,"output_tokens":1,"total_tokens":5}`},
		{"after the finish", sse(uiStart, `{"type":"text-delta","id":"t","delta":"a"}`, `{"type":"finish"}`,
			`{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":5,"outputTokens":6}}}`),
			"", `{"input_tokens":5,"output_tokens":6,"total_tokens":11}`},
		// Parts after abort are ignored, message-metadata too.
		{"after abort", sse(uiStart, `{"type":"abort"}`,
			`{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":5,"outputTokens":6}}}`), "", ""},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			out, rep := convertThroughRewriter(t, c.in, n, func(w io.Writer, o ConvertOptions) io.WriteCloser {
				return NewUIStreamConverter(w, o)
			})
			hasChunkUsage := strings.Contains(out, `"usage":`+c.chunkUsage)
			if c.chunkUsage != "" && !hasChunkUsage {
				t.Fatalf("%s %s: no chunk usage %s in\n%s", c.name, chunkName(n), c.chunkUsage, out)
			}
			if c.chunkUsage == "" && strings.Contains(out, `"prompt_tokens"`) {
				t.Fatalf("%s %s: a chunk carries usage:\n%s", c.name, chunkName(n), out)
			}
			if got := string(rep.Meta.Get(KeyUsage)); (got == "") != (c.metaUsage == "") || got != "" && !sameJSON(t, got, c.metaUsage) {
				t.Fatalf("%s %s: meta.usage %s, want %s", c.name, chunkName(n), got, c.metaUsage)
			}
		}
	}
}
