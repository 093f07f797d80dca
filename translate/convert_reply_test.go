package translate

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// A converter in front of the SSE rewriter writes its meta into the shared
// record, not as an event of its own: the client gets one final meta
// event, a chat chunk with the converter's meta and the usage, then one
// [DONE].
func TestConverterWritesIntoSharedRecord(t *testing.T) {
	streams := map[string]struct {
		in   string
		conv func(io.Writer, ConvertOptions) io.WriteCloser
	}{
		"data stream": {"f:{\"messageId\":\"msg-9\"}\n0:\"Hi\"\n9:{\"toolCallId\":\"c\",\"toolName\":\"search\",\"args\":{}}\n" +
			"d:{\"finishReason\":\"stop\",\"usage\":{\"promptTokens\":1,\"completionTokens\":2}}\n",
			func(w io.Writer, o ConvertOptions) io.WriteCloser { return NewDataStreamConverter(w, o) }},
		"ui stream": {sse(`{"type":"start","messageId":"msg-9"}`, `{"type":"text-delta","id":"t","delta":"Hi"}`,
			`{"type":"tool-input-start","toolCallId":"c","toolName":"search"}`,
			`{"type":"finish","finishReason":"stop","usage":{"inputTokens":1,"outputTokens":2}}`, "[DONE]"),
			func(w io.Writer, o ConvertOptions) io.WriteCloser { return NewUIStreamConverter(w, o) }},
	}
	for name, s := range streams {
		for _, n := range chunkSizes() {
			out, _ := convertThroughRewriter(t, s.in, n, s.conv)
			if c := strings.Count(out, `"meta":`); c != 1 {
				t.Fatalf("%s %s: %d meta events in\n%s", name, chunkName(n), c, out)
			}
			if !strings.HasSuffix(out, "\n\n"+doneEv) || strings.Count(out, "[DONE]") != 1 {
				t.Fatalf("%s %s: does not end with one [DONE]:\n%s", name, chunkName(n), out)
			}
			evs := wholeEvents([]byte(out))
			data, _, _ := EventData(evs[len(evs)-2], nil)
			var chunk struct {
				ID      string          `json:"id"`
				Object  string          `json:"object"`
				Choices []any           `json:"choices"`
				Meta    json.RawMessage `json:"meta"`
			}
			if err := json.Unmarshal(data, &chunk); err != nil {
				t.Fatalf("%s %s: final meta event %q: %v", name, chunkName(n), data, err)
			}
			if chunk.ID != "msg-9" || chunk.Object != "chat.completion.chunk" || chunk.Choices == nil || len(chunk.Choices) != 0 {
				t.Fatalf("%s %s: final meta event is not the stream's chunk: %s", name, chunkName(n), data)
			}
			if want := `{"tools_used":["search"],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`; !sameJSON(t, string(chunk.Meta), want) {
				t.Fatalf("%s %s: meta %s, want %s", name, chunkName(n), chunk.Meta, want)
			}
		}
	}
}

// TestConvertedToolCalls: a data stream's every 9 part is a call, whatever
// its members (SPEC 11.3), and a UI stream's tool-input-available a call
// once per toolCallId.
func TestConvertedToolCalls(t *testing.T) {
	for _, c := range []struct {
		name, in string
		conv     func(io.Writer, ConvertOptions) io.WriteCloser
		want     string
	}{
		{"data stream", `9:{"toolCallId":"c","toolName":"a","args":{"x":1},"":"k"}` + "\n" +
			`9:{"toolCallId":"c","toolName":"a","args":"s","":"k"}` + "\n",
			func(w io.Writer, o ConvertOptions) io.WriteCloser { return NewDataStreamConverter(w, o) },
			`a {"x":1}|a s|`},
		{"UI stream", sse(`{"type":"tool-input-available","toolCallId":"c","toolName":"b","input":{"y":2}}`,
			`{"type":"tool-input-available","toolCallId":"c","toolName":"b","input":{}}`,
			`{"type":"tool-input-available","toolCallId":"d","toolName":"b","input":[]}`),
			func(w io.Writer, o ConvertOptions) io.WriteCloser { return NewUIStreamConverter(w, o) },
			`b {"y":2}|b []|`},
	} {
		rep := &Reply{Asked: Asked{ToolArguments: true}}
		w := c.conv(io.Discard, ConvertOptions{Reply: rep, MaxLine: 1 << 20})
		w.Write([]byte(c.in))
		w.Close()
		var got string
		for _, e := range rep.calls.list {
			got += e.name + " " + string(e.args) + "|"
		}
		if got != c.want {
			t.Errorf("%s: calls %q, want %q", c.name, got, c.want)
		}
	}
}
