package translate

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const benchLines = 1000

// benchDataStream is a typical Agent Hustle reply: metadata parts, a tool
// call, then many text parts of about 40 bytes, some with escapes and
// non-ASCII text, and the finish parts.
func benchDataStream() []byte {
	var b strings.Builder
	b.WriteString(`f:{"messageId":"msg-bench"}` + "\n")
	b.WriteString(`2:[` + hustleReasoningEl + `]` + "\n")
	b.WriteString(`2:[` + hustleDevToolsEl + `]` + "\n")
	b.WriteString(`9:{"toolCallId":"call_a","toolName":"getPolyMarketEvents","args":{"limit":5}}` + "\n")
	b.WriteString(`a:{"toolCallId":"call_a","result":{"events":["Election 2028"]}}` + "\n")
	texts := []string{
		`0:"Here are the hottest markets right now: "`,
		`0:"Election 2028 — 62% for the favourite. "`,
		`0:"Trading volume is up 14% this week.\n"`,
		`0:"The \"Fed cut\" market sits at 0.41 USD. "`,
	}
	for i := 0; b.Len() < 1 || i < benchLines-8; i++ {
		b.WriteString(texts[i%len(texts)] + "\n")
	}
	b.WriteString(`2:[` + hustleTokenUsageEl + `]` + "\n")
	b.WriteString(`e:{"finishReason":"stop","usage":{"promptTokens":1200,"completionTokens":40},"isContinued":false}` + "\n")
	b.WriteString(`d:{"finishReason":"stop","usage":{"promptTokens":2100,"completionTokens":70}}` + "\n")
	return []byte(b.String())
}

func benchUIStream() []byte {
	var b strings.Builder
	b.WriteString("data: {\"type\":\"start\",\"messageId\":\"msg-bench\"}\n\n")
	b.WriteString("data: {\"type\":\"tool-input-available\",\"toolCallId\":\"c\",\"toolName\":\"weather\",\"input\":{}}\n\n")
	b.WriteString("data: {\"type\":\"text-start\",\"id\":\"t\"}\n\n")
	texts := []string{"Here are the hottest markets now: ", "Election 2028 — 62% for the favourite. ", "Volume is up 14% this week.\\n"}
	for i := 0; i < benchLines-6; i++ {
		b.WriteString("data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"" + texts[i%len(texts)] + "\"}\n\n")
	}
	b.WriteString("data: {\"type\":\"text-end\",\"id\":\"t\"}\n\n")
	b.WriteString("data: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// runConvertBench converts in once per iteration, written in pieces of
// chunk bytes (as a proxy reads them), and reports per-line figures.
func runConvertBench(b *testing.B, in []byte, lines int, chunk int, newConv func(io.Writer) io.WriteCloser) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := newConv(io.Discard)
		for p := in; len(p) > 0; {
			n := min(chunk, len(p))
			c.Write(p[:n])
			p = p[n:]
		}
		c.Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	total := float64(b.N) * float64(lines)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/line")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/line")
}

func BenchmarkDataStreamConvert(b *testing.B) {
	in := benchDataStream()
	lines := strings.Count(string(in), "\n")
	opts := ConvertOptions{Model: "gpt-4o-mini", MaxLine: 1 << 20, HustleSummary: true, Created: 1, Reply: new(Reply)}
	for _, chunk := range []int{512, 32 << 10} {
		b.Run("chunk="+strconv.Itoa(chunk), func(b *testing.B) {
			runConvertBench(b, in, lines, chunk, func(w io.Writer) io.WriteCloser { return NewDataStreamConverter(w, opts) })
		})
	}
}

func BenchmarkUIStreamConvert(b *testing.B) {
	in := benchUIStream()
	lines := strings.Count(string(in), "\n\n")
	opts := ConvertOptions{Model: "gpt-4o-mini", MaxLine: 1 << 20, HustleSummary: true, Created: 1, Reply: new(Reply)}
	for _, chunk := range []int{512, 32 << 10} {
		b.Run("chunk="+strconv.Itoa(chunk), func(b *testing.B) {
			runConvertBench(b, in, lines, chunk, func(w io.Writer) io.WriteCloser { return NewUIStreamConverter(w, opts) })
		})
	}
}

// BenchmarkDataStreamSteady feeds text parts to one long-lived converter:
// the per-line cost once its buffers have grown, stream set-up excluded.
func BenchmarkDataStreamSteady(b *testing.B) {
	const block = 100
	var in []byte
	texts := []string{`0:"Here are the hottest markets right now: "`, `0:"Election 2028 — 62% for the favourite. "`,
		`0:"Trading volume is up 14% this week.\n"`, `0:"The \"Fed cut\" market sits at 0.41 USD. "`}
	for i := 0; i < block; i++ {
		in = append(in, texts[i%len(texts)]+"\n"...)
	}
	c := NewDataStreamConverter(io.Discard, ConvertOptions{Model: "gpt-4o-mini", Created: 1, Reply: new(Reply)})
	c.Write(in)
	runSteady(b, in, block, c)
}

// BenchmarkUIStreamSteady is BenchmarkDataStreamSteady for the UI stream.
func BenchmarkUIStreamSteady(b *testing.B) {
	const block = 100
	var in []byte
	texts := []string{"Here are the hottest markets now: ", "Election 2028 — 62% for the favourite. ", "Volume is up 14% this week.\\n"}
	for i := 0; i < block; i++ {
		in = append(in, "data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\""+texts[i%len(texts)]+"\"}\n\n"...)
	}
	c := NewUIStreamConverter(io.Discard, ConvertOptions{Model: "gpt-4o-mini", Created: 1, Reply: new(Reply)})
	c.Write(in)
	runSteady(b, in, block, c)
}

// BenchmarkUIStreamSteadyToolInput is BenchmarkUIStreamSteady for a tool's
// input streamed in tool-input-delta parts, which give no chunk.
func BenchmarkUIStreamSteadyToolInput(b *testing.B) {
	const block = 100
	var in []byte
	args := []string{`{\"city\":`, `\"San Francisco\",`, ` \"unit\": \"celsius\"}`}
	for i := 0; i < block; i++ {
		in = append(in, "data: {\"type\":\"tool-input-delta\",\"toolCallId\":\"call_fJdQDqnXeGxTmr4E3YPSR7Ar\",\"inputTextDelta\":\""+args[i%len(args)]+"\"}\n\n"...)
	}
	c := NewUIStreamConverter(io.Discard, ConvertOptions{Model: "gpt-4o-mini", Created: 1, Reply: new(Reply)})
	c.Write(in)
	runSteady(b, in, block, c)
}

func runSteady(b *testing.B, in []byte, lines int, c io.Writer) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for p := in; len(p) > 0; {
			n := min(512, len(p))
			c.Write(p[:n])
			p = p[n:]
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	total := float64(b.N) * float64(lines)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/line")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/line")
}
