package translate

import (
	"strconv"
	"testing"
)

// benchResponsesDelta is a typical Responses text delta event (SPEC 4.4).
func benchResponsesDelta(i int) string {
	word := []string{" the", " quick", " brown", " fox", " jumps"}[i%5]
	return "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":" + strconv.Itoa(i+9) +
		`,"item_id":"msg_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654","output_index":0,"content_index":0,"delta":"` + word + "\"}\n\n"
}

// benchAnthropicDelta is a typical Anthropic text delta event (SPEC 4.5).
func benchAnthropicDelta(i int) string {
	word := []string{" the", " quick", " brown", " fox", " jumps"}[i%5]
	return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + word + "\"}}\n\n"
}

// benchGeminiDelta is a typical Gemini text event (SPEC 4.6): every event
// repeats usageMetadata with counts, as Google AI Studio's do; CRLF framing.
func benchGeminiDelta(i int) string {
	word := []string{" the", " quick", " brown", " fox", " jumps"}[i%5]
	return `data: {"candidates":[{"content":{"parts":[{"text":"` + word + `"}],"role":"model"},"index":0}],` +
		`"usageMetadata":{"promptTokenCount":7,"totalTokenCount":7,"promptTokensDetails":[{"modality":"TEXT","tokenCount":7}]},` +
		`"modelVersion":"gemini-2.5-flash","responseId":"bH6LaZW8Fp_3nsEPqtaSwQ4"}` + "\r\n\r\n"
}

// The pass-through event of every protocol, one event per write, in a
// long-lived rewriter: the per-event cost and allocations of the seam.
func BenchmarkProtocolPassthrough(b *testing.B) {
	for _, p := range []struct {
		name  string
		f     Format
		event func(int) string
	}{
		{"chat", FormatSSE, benchContentEvent},
		{"responses", FormatResponses, benchResponsesDelta},
		{"anthropic", FormatAnthropic, benchAnthropicDelta},
		{"gemini", FormatGemini, benchGeminiDelta},
	} {
		b.Run(p.name, func(b *testing.B) {
			var ps [][]byte
			for i := 0; i < 20; i++ {
				ps = append(ps, []byte(p.event(i)))
			}
			runSSEBench(b, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Protocol: p.f}, ps, 1)
		})
	}
}
