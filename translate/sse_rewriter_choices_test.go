package translate

import (
	"strings"
	"testing"
)

// With final_meta off there is no final event to carry an upstream's
// meta-only event, so it passes as it came (SPEC 4.1: upstream keys survive).
func TestRewriterFinalMetaOffKeepsUpstreamMetaEvent(t *testing.T) {
	in := roleEv() + contentEv("x") + upMetaEvent(`{"tools_used":["a"]}`) + doneEv
	for _, n := range chunkSizes() {
		out, _ := rewrite(t, in, n, StreamOptions{}, nil)
		if out != in {
			t.Fatalf("%s: got %q, want the input unchanged", chunkName(n), out)
		}
	}
}

// Structured extraction reads choice 0 by its index, not by its position.
func TestRewriterStructuredChoiceByIndex(t *testing.T) {
	chunk := func(choices string) string {
		return ev(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":` + choices + `}`)
	}
	in := chunk(`[{"index":1,"delta":{"content":"other"},"finish_reason":null},{"index":0,"delta":{"content":"{\"reply\":\"Hel"},"finish_reason":null}]`) +
		chunk(`[{"index":0,"delta":{"content":"lo\"}"},"finish_reason":null}]`) + doneEv
	out, _ := rewrite(t, in, 0, StreamOptions{FinalMeta: true, Chat: ChatOptions{Structured: NewReplyStream(1 << 20)}}, nil)
	if !strings.Contains(out, `"index":0,"delta":{"content":"Hel"}`) {
		t.Fatalf("choice 0 not decoded in place:\n%s", out)
	}
	if !strings.Contains(out, `"index":1,"delta":{"content":"other"}`) {
		t.Fatalf("choice 1 was touched:\n%s", out)
	}
	if !strings.Contains(out, `"content":"lo"`) {
		t.Fatalf("second delta not decoded:\n%s", out)
	}
}
