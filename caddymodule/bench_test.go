package caddymodule

// In-process benchmarks of the handler: llm_meta wrapped around a bare next
// handler that writes a canned reply, against that next handler alone. They
// run only with -bench, e.g.
//
//	go test -run '^$' -bench . -benchmem ./caddymodule/
//
// Each benchmark first runs the next handler alone b.N times, then the
// handler around it b.N times (the timed loop, so ns/op and allocs/op are
// those of llm_meta + next), and reports what llm_meta adds:
//
//	added-ns/req, added-allocs/req        per request
//	added-ns/event, added-allocs/event    per request / events per request
//	marg-allocs/event                     allocations that grow with the
//	                                      number of events (requests of n and
//	                                      2n events compared): 0 means the
//	                                      per-event path does not allocate
//	base-ns/event                         the next handler alone
//	added-flushes/event                   downstream flushes added (each
//	                                      costs a write deadline reset in
//	                                      Caddy's IdleTimeoutWriter)
//
// The translate package has its own micro-benchmarks of the converters;
// these measure the handler as Caddy calls it (request inspection, writer
// wrapper, flushes, placeholders, metrics, log check).

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llm-meta/llm_meta/httpmeta"
)

// benchSink is the client end: a minimal http.ResponseWriter with
// FlushError that throws the body away (keeping a count, and optionally the
// bytes for the sanity checks).
type benchSink struct {
	hdr    http.Header
	status int
	n      int64
	keep   bool
	body   bytes.Buffer
	flush  int
}

func newBenchSink() *benchSink { return &benchSink{hdr: http.Header{}} }

func (d *benchSink) Header() http.Header { return d.hdr }

func (d *benchSink) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}

func (d *benchSink) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.n += int64(len(p))
	if d.keep {
		d.body.Write(p)
	}
	return len(p), nil
}

func (d *benchSink) FlushError() error { d.flush++; return nil }

func (d *benchSink) reset() {
	clear(d.hdr)
	d.status, d.n, d.flush = 0, 0, 0
	d.body.Reset()
}

// Canned header values, shared: http.Header.Set and Del never change a
// value slice in place, so the harness adds no allocations of its own.
var (
	benchHvJSON    = []string{"application/json"}
	benchHvSSE     = []string{"text/event-stream"}
	benchHvPlain   = []string{"text/plain; charset=utf-8"}
	benchHvNoCache = []string{"no-cache"}
	benchHvV1      = []string{"v1"}
	benchHvGzip    = []string{"gzip"}
)

// benchReply is what the bare next handler writes.
type benchReply struct {
	contentType []string
	extra       map[string][]string
	body        []byte   // written whole (JSON)
	bodyLen     []string // its Content-Length
	events      [][]byte // written one Write + flush each, as reverse_proxy does for event streams
}

// benchNext is the bare upstream stand-in: it reads the request body (as
// reverse_proxy would, to send it on) and writes the canned reply.
func benchNext(rep *benchReply) caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if r.Body != nil {
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				return err
			}
		}
		hdr := w.Header()
		hdr["Content-Type"] = rep.contentType
		for k, v := range rep.extra {
			hdr[k] = v
		}
		if rep.body != nil {
			if rep.bodyLen == nil {
				rep.bodyLen = []string{strconv.Itoa(len(rep.body))}
			}
			hdr["Content-Length"] = rep.bodyLen
			w.WriteHeader(http.StatusOK)
			_, err := w.Write(rep.body)
			return err
		}
		hdr["Cache-Control"] = benchHvNoCache
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for _, ev := range rep.events {
			if _, err := w.Write(ev); err != nil {
				return err
			}
			if err := rc.Flush(); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchCase is one request/reply pair.
type benchCase struct {
	reqBody []byte
	reply   *benchReply
	events  int // units per request for the per-event figures; 0: per request only
	check   func(tb testing.TB, out *benchSink)
}

// benchRig holds what one benchmark reuses on every request, so that the
// harness itself allocates little per request (the same in both loops).
type benchRig struct {
	h    *Handler
	next caddyhttp.Handler
	tmpl *http.Request
	hdr  http.Header
	body bytes.Reader
	rc   io.ReadCloser
	out  *benchSink
	data []byte
	cl   []string // the request's Content-Length value

	// Downstream flushes of the last request of each kind.
	flushesBase, flushesWith int
}

func newBenchHandler(tb testing.TB) *Handler {
	tb.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	h := new(Handler)
	must(tb, h.Provision(ctx), "provision")
	must(tb, h.Validate(), "validate")
	// Production logging: info level, to nowhere. (A bare caddy.Context
	// gives a development logger at debug level, which would time zap
	// writing a debug line per request instead of the handler.) The
	// handler is made again with it, as Caddy makes it with its logger.
	cfg := h.core.Config
	cfg.Logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel))
	h.core = httpmeta.New(cfg)
	return h
}

func newBenchRig(tb testing.TB, h *Handler, c *benchCase) *benchRig {
	g := &benchRig{h: h, next: benchNext(c.reply), out: newBenchSink(), data: c.reqBody}
	u, _ := url.Parse("http://127.0.0.1/v1/chat/completions")
	g.tmpl = &http.Request{
		Method: http.MethodPost, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Host: "127.0.0.1", RemoteAddr: "127.0.0.1:40000", RequestURI: "/v1/chat/completions",
		Header: http.Header{},
	}
	g.tmpl = g.tmpl.WithContext(context.Background())
	g.hdr = http.Header{}
	g.rc = io.NopCloser(&g.body)
	g.cl = []string{strconv.Itoa(len(g.data))}
	return g
}

// request makes the next request: a fresh replacer and request context, as
// Caddy's server makes for each request (caddyhttp.PrepareRequest), with the
// headers and body reset.
func (g *benchRig) request() *http.Request {
	r := caddyhttp.PrepareRequest(g.tmpl, caddy.NewReplacer(), g.out, nil)
	clear(g.hdr)
	g.hdr["Content-Type"] = benchHvJSON
	g.hdr["Accept-Encoding"] = benchHvGzip
	g.hdr["Content-Length"] = g.cl
	r.Header = g.hdr
	g.body.Reset(g.data)
	r.Body = g.rc
	r.ContentLength = int64(len(g.data))
	g.out.reset()
	return r
}

func (g *benchRig) base() {
	if err := g.next.ServeHTTP(g.out, g.request()); err != nil {
		panic(err)
	}
	g.flushesBase = g.out.flush
}

func (g *benchRig) with() {
	if err := g.h.ServeHTTP(g.out, g.request(), g.next); err != nil {
		panic(err)
	}
	g.flushesWith = g.out.flush
}

// benchMeasure runs f n times and returns the wall time, the process CPU time
// (user + system, all threads: GC included), the allocations taken and the
// bytes they took. On a
// machine shared with other work the CPU time is the steadier figure: it
// does not count the time the process waited for a core.
func benchMeasure(n int, f func()) (wall, cpu time.Duration, allocs, bytes uint64) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0 := benchCPUTime()
	t0 := time.Now()
	for i := 0; i < n; i++ {
		f()
	}
	wall = time.Since(t0)
	cpu = benchCPUTime() - c0
	runtime.ReadMemStats(&m1)
	return wall, cpu, m1.Mallocs - m0.Mallocs, m1.TotalAlloc - m0.TotalAlloc
}

// benchCPUTime is the CPU time used by the process so far.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runBench benchmarks one case; mk builds it for n events per request (the
// marginal allocation figure compares n and 2n).
func runBench(b *testing.B, n int, mk func(n int) *benchCase) {
	b.StopTimer()
	c := mk(n)
	h := newBenchHandler(b)
	g := newBenchRig(b, h, c)

	// Sanity: the handler does what the case is about.
	g.out.keep = true
	g.with()
	if g.out.status != http.StatusOK || g.out.n == 0 {
		b.Fatalf("status %d, %d bytes", g.out.status, g.out.n)
	}
	if c.check != nil {
		c.check(b, g.out)
	}
	g.out.keep = false

	var marginal float64
	if c.events > 0 && b.N == 1 {
		// Once per benchmark (b.N is 1 only on the first call): allocations
		// that grow with the stream, requests of n and 2n events compared.
		c2 := mk(2 * n)
		g2 := newBenchRig(b, h, c2)
		const runs = 50
		_, _, b1, _ := benchMeasure(runs, g.base)
		_, _, w1, _ := benchMeasure(runs, g.with)
		_, _, b2, _ := benchMeasure(runs, g2.base)
		_, _, w2, _ := benchMeasure(runs, g2.with)
		added1 := float64(w1) - float64(b1)
		added2 := float64(w2) - float64(b2)
		marginal = (added2 - added1) / runs / float64(c2.events-c.events)
		benchMarginalAllocs[b.Name()] = marginal
	} else {
		marginal = benchMarginalAllocs[b.Name()]
	}

	b.ReportAllocs()
	baseT, baseC, baseA, baseB := benchMeasure(b.N, g.base)
	b.StartTimer()
	withT, withC, withA, withB := benchMeasure(b.N, g.with)
	b.StopTimer()

	nreq := float64(b.N)
	addNs := float64(withT-baseT) / nreq
	addCPU := float64(withC-baseC) / nreq
	addAllocs := (float64(withA) - float64(baseA)) / nreq
	if c.events == 0 {
		b.ReportMetric(addNs, "added-ns/req")
		b.ReportMetric(addCPU, "added-cpu-ns/req")
		b.ReportMetric(addAllocs, "added-allocs/req")
		b.ReportMetric((float64(withB)-float64(baseB))/nreq, "added-B/req")
		return
	}
	ev := float64(c.events)
	b.ReportMetric(float64(g.flushesWith-g.flushesBase)/ev, "added-flushes/event")
	b.ReportMetric(addNs/ev, "added-ns/event")
	b.ReportMetric(addCPU/ev, "added-cpu-ns/event")
	b.ReportMetric(addAllocs/ev, "added-allocs/event")
	b.ReportMetric(marginal, "marg-allocs/event")
	b.ReportMetric(float64(baseT)/nreq/ev, "base-ns/event")
}

var benchMarginalAllocs = map[string]float64{}

// Canned bodies.

// benchChatRequestAsksUsage is benchChatRequest asking for the usage chunk.
var benchChatRequestAsksUsage = strings.Replace(benchChatRequest, `"stream":true,`, `"stream":true,"stream_options":{"include_usage":true},`, 1)

const benchChatRequest = `{"model":"gpt-4o-mini","stream":true,"messages":[` +
	`{"role":"system","content":"You are a helpful assistant. Answer briefly."},` +
	`{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`

func benchWithFlag(req, flag string) []byte {
	return []byte(strings.Replace(req, `{"model"`, `{"`+flag+`":true,"model"`, 1))
}

// benchContentEvent is a content chunk as OpenAI sends it: 181-188 bytes.
func benchContentEvent(i int) []byte {
	words := []string{" markets", " volume", " election", " the", " favourite", " week", " 62%", " up"}
	return []byte(`data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"delta":{"content":"` + words[i%len(words)] + `"},"finish_reason":null}]}` + "\n\n")
}

const (
	benchRoleEvent   = `data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n"
	benchFinishEvent = `data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	benchDoneEvent   = "data: [DONE]\n\n"
)

// benchSSEStream is a content stream of n content events plus role, finish and
// [DONE].
func benchSSEStream(n int) [][]byte {
	evs := [][]byte{[]byte(benchRoleEvent)}
	for i := 0; i < n; i++ {
		evs = append(evs, benchContentEvent(i))
	}
	return append(evs, []byte(benchFinishEvent), []byte(benchDoneEvent))
}

func benchSSEReply(evs [][]byte) *benchReply {
	return &benchReply{contentType: benchHvSSE, events: evs}
}

func benchExpect(sub ...string) func(tb testing.TB, out *benchSink) {
	return func(tb testing.TB, out *benchSink) {
		tb.Helper()
		for _, s := range sub {
			if !bytes.Contains(out.body.Bytes(), []byte(s)) {
				tb.Fatalf("reply lacks %q:\n%.600s", s, out.body.Bytes())
			}
		}
	}
}

var benchEventCounts = []int{100, 1000}

// BenchmarkSSEPassthrough: an OpenAI stream of content events (~185 bytes),
// each written and flushed on its own, forwarded untouched.
func BenchmarkSSEPassthrough(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				evs := benchSSEStream(n)
				return &benchCase{reqBody: []byte(benchChatRequest), reply: benchSSEReply(evs), events: len(evs),
					check: func(tb testing.TB, out *benchSink) {
						if want := int64(len(bytes.Join(evs, nil))); out.n != want {
							tb.Fatalf("pass-through wrote %d bytes, want %d", out.n, want)
						}
					}}
			})
		})
	}
}

// BenchmarkSSEBatched is BenchmarkSSEPassthrough with the stream written
// in pieces of up to 32 KiB, as reverse_proxy reads it from an upstream that
// is ahead of it (a loaded Caddy reads many events at a time): the first
// write, which the format is decided on, holds some 170 events.
func BenchmarkSSEBatched(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				evs := benchSSEStream(n)
				whole := bytes.Join(evs, nil)
				return &benchCase{reqBody: []byte(benchChatRequest), reply: benchSSEReply(benchBatch(evs, 32<<10)), events: len(evs),
					check: func(tb testing.TB, out *benchSink) {
						if want := int64(len(whole)); out.n != want {
							tb.Fatalf("pass-through wrote %d bytes, want %d", out.n, want)
						}
					}}
			})
		})
	}
}

// benchBatch joins events into writes of at most max bytes (an event
// larger than max is a write of its own).
func benchBatch(evs [][]byte, max int) (writes [][]byte) {
	var cur []byte
	for _, ev := range evs {
		if len(cur) > 0 && len(cur)+len(ev) > max {
			writes, cur = append(writes, cur), nil
		}
		cur = append(cur, ev...)
	}
	if len(cur) > 0 {
		writes = append(writes, cur)
	}
	return writes
}

// BenchmarkSSEAsksUsage is BenchmarkSSEPassthrough (100 events) for a
// client that asks for the stream's usage itself, as the AI SDK's OpenAI
// provider does: the request goes upstream as it came.
func BenchmarkSSEAsksUsage(b *testing.B) {
	runBench(b, 100, func(n int) *benchCase {
		evs := benchSSEStream(n)
		return &benchCase{reqBody: []byte(benchChatRequestAsksUsage), reply: benchSSEReply(evs), events: len(evs),
			check: func(tb testing.TB, out *benchSink) {
				if want := int64(len(bytes.Join(evs, nil))); out.n != want {
					tb.Fatalf("pass-through wrote %d bytes, want %d", out.n, want)
				}
			}}
	})
}

// BenchmarkSSEToolCalls: a tool-call stream (the name in the first
// fragment, then argument fragments); the final meta event gets tools_used.
func BenchmarkSSEToolCalls(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				head := `data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":`
				evs := [][]byte{[]byte(head + `{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Qx1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}` + "\n\n")}
				frags := []string{`{\"loc`, `ation\":`, ` \"Paris`, `, France`, `\",\"unit`, `\":\"c\"}`}
				for i := 0; i < n; i++ {
					evs = append(evs, []byte(head+`{"tool_calls":[{"index":0,"function":{"arguments":"`+frags[i%len(frags)]+`"}}]},"finish_reason":null}]}`+"\n\n"))
				}
				evs = append(evs, []byte(head+`{},"finish_reason":"tool_calls"}]}`+"\n\n"), []byte(benchDoneEvent))
				return &benchCase{reqBody: []byte(benchChatRequest), reply: benchSSEReply(evs), events: len(evs),
					check: benchExpect(`"meta":{"tools_used":["get_weather"]}`, "data: [DONE]")}
			})
		})
	}
}

// BenchmarkDataStreamConvert: a Vercel AI SDK data stream (one text part a
// line, each written and flushed on its own) converted to OpenAI chunks.
func BenchmarkDataStreamConvert(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("lines="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				evs := [][]byte{[]byte(`f:{"messageId":"msg-bench"}` + "\n")}
				texts := []string{`0:"Here are the hottest markets: "`, `0:"Election 2028 — 62% for the favourite. "`, `0:"Volume is up 14% this week.\n"`}
				for i := 0; i < n; i++ {
					evs = append(evs, []byte(texts[i%len(texts)]+"\n"))
				}
				evs = append(evs, []byte(`d:{"finishReason":"stop","usage":{"promptTokens":120,"completionTokens":70}}`+"\n"))
				rep := &benchReply{contentType: benchHvPlain, extra: map[string][]string{"X-Vercel-Ai-Data-Stream": benchHvV1}, events: evs}
				return &benchCase{reqBody: []byte(benchChatRequest), reply: rep, events: len(evs),
					check: benchExpect(`"delta":{"role":"assistant","content":"Here are`, "data: [DONE]")}
			})
		})
	}
}

// BenchmarkUIStreamConvert: an AI SDK UI message stream converted.
func BenchmarkUIStreamConvert(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				evs := [][]byte{[]byte("data: {\"type\":\"start\",\"messageId\":\"msg-bench\"}\n\n"), []byte("data: {\"type\":\"text-start\",\"id\":\"t\"}\n\n")}
				texts := []string{"Here are the hottest markets: ", "Election 2028 — 62% for the favourite. ", "Volume is up 14% this week.\\n"}
				for i := 0; i < n; i++ {
					evs = append(evs, []byte("data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\""+texts[i%len(texts)]+"\"}\n\n"))
				}
				evs = append(evs, []byte("data: {\"type\":\"finish\",\"finishReason\":\"stop\"}\n\n"), []byte(benchDoneEvent))
				rep := &benchReply{contentType: benchHvSSE, extra: map[string][]string{"X-Vercel-Ai-Ui-Message-Stream": benchHvV1}, events: evs}
				return &benchCase{reqBody: []byte(benchChatRequest), reply: rep, events: len(evs),
					check: benchExpect(`"content":"Here are`, "data: [DONE]")}
			})
		})
	}
}

const benchJSONPlain = `{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"The hottest markets right now are the 2028 election (62% for the favourite, volume up 14% this week), ` +
	`the Fed cut in September (0.41 USD) and the next Apple product launch. Volume across the top ten markets rose by about a fifth this week, ` +
	`driven mostly by election news; the Fed market moved least."},"logprobs":null,"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":48,"completion_tokens":80,"total_tokens":128},"system_fingerprint":"fp_0ba0d124f1"}`

// benchJSONNoUsage is benchJSONPlain without usage: a reply with nothing
// to add (since SPEC 9 a reply with usage gains meta.usage).
var benchJSONNoUsage = strings.Replace(benchJSONPlain, `"usage":{"prompt_tokens":48,"completion_tokens":80,"total_tokens":128},`, "", 1)

const benchJSONTools = `{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
	`{"id":"call_Qx1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris, France\",\"unit\":\"c\"}"}},` +
	`{"id":"call_Qx2","type":"function","function":{"name":"get_markets","arguments":"{\"limit\":5,\"sort\":\"volume\"}"}}]},` +
	`"logprobs":null,"finish_reason":"tool_calls"}],` +
	`"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120},"system_fingerprint":"fp_0ba0d124f1"}`

// BenchmarkJSONReply: whole JSON replies, one with nothing to change
// (forwarded byte-identical), one whose only change is meta.usage (the
// usual reply since SPEC 9), and one with tool_calls (rewritten with meta).
func BenchmarkJSONReply(b *testing.B) {
	jsonRequest := []byte(strings.Replace(benchChatRequest, `"stream":true`, `"stream":false`, 1))
	b.Run("unchanged", func(b *testing.B) {
		runBench(b, 0, func(int) *benchCase {
			return &benchCase{reqBody: jsonRequest,
				reply: &benchReply{contentType: benchHvJSON, body: []byte(benchJSONNoUsage)},
				check: func(tb testing.TB, out *benchSink) {
					if out.body.String() != benchJSONNoUsage {
						tb.Fatalf("unchanged reply changed:\n%s", out.body.Bytes())
					}
				}}
		})
	})
	b.Run("usage", func(b *testing.B) {
		runBench(b, 0, func(int) *benchCase {
			return &benchCase{reqBody: jsonRequest,
				reply: &benchReply{contentType: benchHvJSON, body: []byte(benchJSONPlain)},
				check: benchExpect(`"meta":{"usage":{"input_tokens":48,"output_tokens":80,"total_tokens":128}}`)}
		})
	})
	b.Run("tool_calls", func(b *testing.B) {
		runBench(b, 0, func(int) *benchCase {
			return &benchCase{reqBody: jsonRequest,
				reply: &benchReply{contentType: benchHvJSON, body: []byte(benchJSONTools)},
				check: benchExpect(`"meta":{"tools_used":["get_weather","get_markets"]`)}
		})
	})
}

// BenchmarkRunOnceStream: "run_once":true on a streamed reply: the stream is
// collected into one {content, meta} answer.
func BenchmarkRunOnceStream(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				evs := benchSSEStream(n)
				return &benchCase{reqBody: benchWithFlag(benchChatRequest, "run_once"), reply: benchSSEReply(evs), events: len(evs),
					check: benchExpect(`{"content":" markets volume election`)}
			})
		})
	}
}

// BenchmarkStructuredStream: "enable_structured_output":true, the model
// streaming the JSON of a structured reply in small content deltas; the
// reply string is decoded as it comes (SPEC 7).
func BenchmarkStructuredStream(b *testing.B) {
	for _, n := range benchEventCounts {
		b.Run("events="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, n, func(n int) *benchCase {
				esc := func(s string) string { return strings.ReplaceAll(s, `"`, `\"`) }
				head := `data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"`
				tail := `"},"finish_reason":null}]}` + "\n\n"
				frags := []string{`{"`, `entities`, `":[{"name":"`, `Paris`, `","type":"location"}],"`, `reply`, `":"`}
				words := []string{"The", " hottest", " markets", " right", " now", " are", " the", " election", ",", " \\u00e9t\\u00e9", " and", " the", " \\\"Fed", " cut\\\"", "."}
				evs := [][]byte{[]byte(benchRoleEvent)}
				for i := 0; len(evs) < n+1; i++ {
					var f string
					if i < len(frags) {
						f = frags[i]
					} else {
						f = words[(i-len(frags))%len(words)]
					}
					evs = append(evs, []byte(head+esc(f)+tail))
				}
				evs = append(evs, []byte(head+esc(`","intent":"question","requires_user_action":false,"topics":["markets","elections"]}`)+tail),
					[]byte(benchFinishEvent), []byte(benchDoneEvent))
				// Only a loose check: structured extraction may still be a stub.
				return &benchCase{reqBody: benchWithFlag(benchChatRequest, "enable_structured_output"), reply: benchSSEReply(evs), events: len(evs),
					check: benchExpect("data: [DONE]")}
			})
		})
	}
}
