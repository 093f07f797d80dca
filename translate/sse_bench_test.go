package translate

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchContentEvent is a typical content chunk event of about 150 bytes.
func benchContentEvent(i int) string {
	word := []string{" the", " quick", " brown", " fox", " jumps"}[i%5]
	return `data: {"id":"chatcmpl-B9x2","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"` + word + `"},"finish_reason":null}]}` + "\n\n"
}

// benchToolEvents is a tool call as it streams: a first delta with the
// name, then argument fragments.
func benchToolEvents(n int) []string {
	head := `data: {"id":"chatcmpl-B9x2","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"tool_calls":[`
	tail := `]},"finish_reason":null}]}` + "\n\n"
	evs := []string{head + `{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}` + tail}
	frags := []string{`{\"`, `city`, `\":\"`, `Paris`, `\"}`}
	for i := 1; i < n; i++ {
		evs = append(evs, head+`{"index":0,"function":{"arguments":"`+frags[i%len(frags)]+`"}}`+tail)
	}
	return evs
}

// runSSEBench writes one payload per op into a long-lived rewriter (the
// steady state of a stream) and reports ns and allocations per event.
func runSSEBench(b *testing.B, opts StreamOptions, payloads [][]byte, eventsPerOp int) {
	b.Helper()
	r := NewRewriter(io.Discard, opts, nil)
	size := 0
	for _, p := range payloads {
		size += len(p)
	}
	b.SetBytes(int64(size / len(payloads)))
	b.ReportAllocs()
	// Warm up: buffers reach their steady size.
	for _, p := range payloads {
		r.Write(p)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Write(payloads[i%len(payloads)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&m1)
	events := float64(b.N) * float64(eventsPerOp)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/events, "allocs/event")
}

func BenchmarkSSEPassthrough(b *testing.B) {
	opts := StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}
	b.Run("1-event-per-write", func(b *testing.B) {
		var ps [][]byte
		for i := 0; i < 20; i++ {
			ps = append(ps, []byte(benchContentEvent(i)))
		}
		runSSEBench(b, opts, ps, 1)
	})
	b.Run("20-events-per-write", func(b *testing.B) {
		var sb strings.Builder
		for i := 0; i < 20; i++ {
			sb.WriteString(benchContentEvent(i))
		}
		runSSEBench(b, opts, [][]byte{[]byte(sb.String())}, 20)
	})
	b.Run("split-writes", func(b *testing.B) {
		// Each event arrives in two writes (the upstream's reads rarely
		// line up with events): one event completes per two writes.
		var ps [][]byte
		for i := 0; i < 20; i++ {
			e := benchContentEvent(i)
			ps = append(ps, []byte(e[:len(e)/2]), []byte(e[len(e)/2:]))
		}
		r := NewRewriter(io.Discard, opts, nil)
		b.SetBytes(int64(len(ps[0]) + len(ps[1])))
		b.ReportAllocs()
		for _, p := range ps {
			r.Write(p)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r.Write(ps[(2*i)%len(ps)])
			r.Write(ps[(2*i+1)%len(ps)])
		}
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N), "allocs/event")
	})
}

func BenchmarkSSEToolCalls(b *testing.B) {
	opts := StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}
	var ps [][]byte
	for _, e := range benchToolEvents(20) {
		ps = append(ps, []byte(e))
	}
	runSSEBench(b, opts, ps, 1)
}

func BenchmarkSSELargeEvent(b *testing.B) {
	// One 1 MiB content chunk, parsed (MaxEvent just above it), arriving in
	// 32 KiB writes.
	content := strings.Repeat("lorem ipsum dolor sit amet ", (1<<20)/27)
	event := []byte(`data: {"id":"chatcmpl-B9x2","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"` + content + `"},"finish_reason":null}]}` + "\n\n")
	opts := StreamOptions{MaxEvent: len(event) + 1024, FinalMeta: true}
	r := NewRewriter(io.Discard, opts, nil)
	const piece = 32 << 10
	b.SetBytes(int64(len(event)))
	b.ReportAllocs()
	r.Write(event)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off < len(event); off += piece {
			r.Write(event[off:min(off+piece, len(event))])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
}

// benchReply is a typical non-stream chat completion of about 1.2 KB.
func benchReply(extra string) []byte {
	content := strings.Repeat("Caddy is a web server written in Go. ", 25)
	return []byte(`{"id":"chatcmpl-B9x2","object":"chat.completion","created":1733000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"` + content + `"` + extra + `},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":250,"total_tokens":370},"system_fingerprint":"fp_1"}`)
}

// A reply without usage: nothing to add (with usage it gains meta.usage).
func BenchmarkJSONReplyUnchanged(b *testing.B) {
	body := []byte(strings.Replace(string(benchReply("")), `"usage":{"prompt_tokens":120,"completion_tokens":250,"total_tokens":370},`, "", 1))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out, _, ok := RewriteJSONReply(body, nil, JSONOptions{})
		if !ok || len(out) != len(body) {
			b.Fatal("changed")
		}
	}
}

func BenchmarkJSONReplyChanged(b *testing.B) {
	var calls []string
	for i := 0; i < 3; i++ {
		calls = append(calls, `{"id":"call_`+strconv.Itoa(i)+`","type":"function","function":{"name":"tool_`+strconv.Itoa(i)+`","arguments":"{}"}}`)
	}
	body := benchReply(`,"tool_calls":[` + strings.Join(calls, ",") + `]`)
	extra := new(Meta)
	extra.SetTrimmed(4000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out, _, ok := RewriteJSONReply(body, extra, JSONOptions{})
		if !ok || len(out) == len(body) {
			b.Fatal("unchanged")
		}
	}
}

// The pass-through path allocates nothing per event, whatever the writes.
func TestSSEPassthroughAllocs(t *testing.T) {
	one := []byte(benchContentEvent(1))
	var twenty []byte
	for i := 0; i < 20; i++ {
		twenty = append(twenty, benchContentEvent(i)...)
	}
	half1, half2 := one[:len(one)/2], one[len(one)/2:]
	comment := []byte(": ping\n\n")
	cases := map[string]func(r *Rewriter){
		"one event":    func(r *Rewriter) { r.Write(one) },
		"twenty":       func(r *Rewriter) { r.Write(twenty) },
		"split event":  func(r *Rewriter) { r.Write(half1); r.Write(half2) },
		"comment only": func(r *Rewriter) { r.Write(comment) },
	}
	for name, f := range cases {
		r := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
		f(r) // warm up
		if n := testing.AllocsPerRun(200, func() { f(r) }); n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
}
