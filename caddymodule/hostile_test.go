package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/llm-meta/llm_meta/internal/linearcheck"
	"github.com/llm-meta/llm_meta/translate"
)

// SPEC 8.1, through the handler: a test per line (linear time, memory that
// follows bytes, bounded meta, clean headers and JSON, whole line endings,
// logs without secrets). translate's hostile_shapes_test.go has the shapes
// of the pure logic; these are the shapes only the glue sees.

// writePieces writes a reply body in pieces, flushing after each, as a
// proxy hands on what an upstream sends.
func writePieces(w http.ResponseWriter, contentType string, pieces []string) error {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for _, p := range pieces {
		if _, err := w.Write([]byte(p)); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// linesOf cuts b after each LF: one write per line.
func linesOf(b []byte) []string { return strings.SplitAfter(string(b), "\n") }

func repeatJoin(n int, sep string, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, sep)
}

// handlerShape is a hostile input the glue reads: input(n) has n of the
// element repeated, run sends it through the handler.
type handlerShape struct {
	name  string
	unit  int
	input func(n int) []byte
	run   func(in []byte)
}

// hostileHandlerShapes are the shapes only the glue sees: endpoint bodies,
// the held start of a sniffed stream, whole replies through the writer.
func hostileHandlerShapes(tb testing.TB, h *Handler) []handlerShape {
	okJSON := jsonReply(200, nil, replyPlain)
	serve := func(req *http.Request, next caddyhttp.Handler) {
		if err := h.ServeHTTP(newRecWriter(), req, next); err != nil {
			tb.Fatal(err)
		}
	}
	upstream := func(reply func(w http.ResponseWriter) error) caddyhttp.Handler {
		return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			_, _ = io.Copy(io.Discard, r.Body)
			return reply(w)
		})
	}
	return []handlerShape{
		{"endpoint/repeated_keys", 1000, func(n int) []byte {
			return []byte(`{"message":"hi",` + repeatJoin(n, ",", func(i int) string { return `"session_id":"s` + strconv.Itoa(i) + `","task":"t"` }) + `}`)
		}, func(in []byte) {
			req := unitRequest(http.MethodPost, "/v1/run_once", bytes.NewReader(in))
			serve(req, upstream(okJSON))
		}},
		{"endpoint/many_messages_with_image", 500, func(n int) []byte {
			return []byte(`{"image_data_url":"data:image/png;base64,AAAA","messages":[` + repeatJoin(n, ",", func(i int) string {
				return `{"role":"assistant","content":"a` + strconv.Itoa(i) + `"},{"role":"user","content":"u"}`
			}) + `]}`)
		}, func(in []byte) {
			req := unitRequest(http.MethodPost, "/functions/v1/jarvis", bytes.NewReader(in))
			serve(req, upstream(okJSON))
		}},
		{"request/repeated_flags", 1000, func(n int) []byte {
			return []byte(`{"model":"m","messages":[],` + repeatJoin(n, ",", func(int) string { return `"enable_structured_output":false` }) + `}`)
		}, func(in []byte) { serve(jsonPost(string(in)), upstream(okJSON)) }},
		{"sniff/first_event_a_line_per_write", 1000, func(n int) []byte {
			return []byte(strings.Repeat("data: {\"a\":1}\n", n) + "\n")
		}, func(in []byte) {
			serve(jsonPost(chatRequest), upstream(func(w http.ResponseWriter) error {
				return writePieces(w, "text/event-stream", linesOf(in))
			}))
		}},
		{"sniff/blank_lines_before_plain_text", 2000, func(n int) []byte {
			return []byte(strings.Repeat("\n", n) + "hello\n")
		}, func(in []byte) {
			serve(jsonPost(chatRequest), upstream(func(w http.ResponseWriter) error {
				return writePieces(w, "text/plain", linesOf(in))
			}))
		}},
		{"json/choices_with_meta", 500, func(n int) []byte {
			return []byte(`{"id":"x","choices":[` + repeatJoin(n, ",", func(i int) string {
				return `{"index":` + strconv.Itoa(i) + `,"message":{"content":"x"},"meta":{"k":` + strconv.Itoa(i) + `}}`
			}) + `]}`)
		}, func(in []byte) { serve(jsonPost(chatRequest), upstream(jsonReply(200, nil, string(in)))) }},
		{"stream/meta_events", 300, func(n int) []byte {
			return []byte(repeatJoin(n, "", func(i int) string {
				return `data: {"meta":{"k` + strconv.Itoa(i) + `":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv"}}` + "\n\n"
			}) + "data: [DONE]\n\n")
		}, func(in []byte) {
			serve(jsonPost(chatRequest), upstream(func(w http.ResponseWriter) error {
				return writePieces(w, "text/event-stream", []string{string(in)})
			}))
		}},
		{"runonce/stream_deltas", 300, func(n int) []byte {
			return []byte(strings.Repeat(sseChunk("word ")+"\n\n", n) + "data: [DONE]\n\n")
		}, func(in []byte) {
			serve(jsonPost(`{"run_once":true,"messages":[]}`), upstream(func(w http.ResponseWriter) error {
				return writePieces(w, "text/event-stream", []string{string(in)})
			}))
		}},
	}
}

// unboundedMeta is a config whose meta bound is too large to be reached:
// the work on every key is measured at every size, rather than a path that
// changes where the bound starts dropping keys (translate has the shapes
// past the bound).
const unboundedMeta = `{"max_meta_bytes":1073741824}`

// TestHostileHandlerLinear: each shape of the glue costs work in
// proportion to its size (internal/linearcheck).
func TestHostileHandlerLinear(t *testing.T) {
	for _, sh := range hostileHandlerShapes(t, newUnitHandler(t, unboundedMeta)) {
		t.Run(sh.name, func(t *testing.T) { linearcheck.Check(t, sh.input, sh.run, sh.unit*4) })
	}
}

// BenchmarkHostileHandler runs each shape of the glue at four sizes, each
// four times the last, and reports the time per input byte.
//
//	go test -run '^$' -bench HostileHandler -benchtime 20x ./caddymodule
func BenchmarkHostileHandler(b *testing.B) {
	h := newBenchHandler(b)
	h.MaxMetaBytes = 1 << 30 // as unboundedMeta
	for _, sh := range hostileHandlerShapes(b, h) {
		linearcheck.Bench(b, sh.name, sh.unit, sh.input, sh.run)
	}
}

// trickleBody sends one byte, then blocks until released: a peer that
// declared far more than it sends.
type trickleBody struct {
	first   byte
	sent    bool
	reached func()
	release <-chan struct{}
}

func (b *trickleBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if !b.sent {
		b.sent = true
		p[0] = b.first
		return 1, nil
	}
	b.reached()
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

func (b *trickleBody) Close() error { return nil }

// heapDuring runs n requests at once, each blocking in the middle (block
// calls reached once it is there), and returns how much the live heap grew
// while all of them were held.
func heapDuring(t *testing.T, n int, start func(reached func(), release <-chan struct{})) uint64 {
	t.Helper()
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	release := make(chan struct{})
	var held, done sync.WaitGroup
	held.Add(n)
	done.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer done.Done()
			var once sync.Once
			start(func() { once.Do(held.Done) }, release)
		}()
	}
	held.Wait()
	runtime.GC()
	runtime.ReadMemStats(&during)
	close(release)
	done.Wait()
	if during.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return during.HeapAlloc - before.HeapAlloc
}

// TestDeclaredLengthsHoldLittleMemory: a hundred requests that declare 16
// MiB (Content-Length) and send one byte, and a hundred replies that do the
// same, hold a few tens of KiB each, not what they declared (SPEC 8.1:
// memory follows bytes that arrived).
func TestDeclaredLengthsHoldLittleMemory(t *testing.T) {
	const conns, declared = 100, 16 << 20
	const perRequest = 256 << 10 // what one held request may take here, all included
	h := newUnitHandler(t, "")

	t.Run("request bodies", func(t *testing.T) {
		grew := heapDuring(t, conns, func(reached func(), release <-chan struct{}) {
			body := &trickleBody{first: '{', reached: reached, release: release}
			req := unitRequest(http.MethodPost, "/v1/chat/completions", nil)
			req.Body, req.ContentLength = body, declared
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Content-Length", strconv.Itoa(declared))
			_ = h.ServeHTTP(newRecWriter(), req, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				_, _ = io.Copy(io.Discard, r.Body)
				return jsonReply(200, nil, replyPlain)(w)
			}))
		})
		t.Logf("heap grew %d KiB for %d requests", grew>>10, conns)
		if grew > conns*perRequest {
			t.Fatalf("heap grew %d MiB for %d requests that sent a byte each: sized from the declared length", grew>>20, conns)
		}
	})

	for _, body := range []string{chatRequest, `{"run_once":true,"messages":[]}`} {
		t.Run("replies to "+body, func(t *testing.T) {
			grew := heapDuring(t, conns, func(reached func(), release <-chan struct{}) {
				_ = h.ServeHTTP(newRecWriter(), jsonPost(body), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
					w.Header().Set("Content-Type", "application/json")
					w.Header().Set("Content-Length", strconv.Itoa(declared))
					w.WriteHeader(http.StatusOK)
					if _, err := w.Write([]byte("{")); err != nil {
						return err
					}
					reached()
					<-release
					return nil
				}))
			})
			t.Logf("heap grew %d KiB for %d replies", grew>>10, conns)
			if grew > conns*perRequest {
				t.Fatalf("heap grew %d MiB for %d replies that sent a byte each: sized from the declared length", grew>>20, conns)
			}
		})
	}
}

// TestCancelStopsBufferedRead: while a reply is buffered (nothing goes to
// the client, so no failed write would stop it), the request's context
// being cancelled stops the upstream read at the next write.
func TestCancelStopsBufferedRead(t *testing.T) {
	h := newUnitHandler(t, "")
	for _, body := range []string{chatRequest, `{"run_once":true,"messages":[]}`} {
		ctx, cancel := context.WithCancel(context.Background())
		req := jsonPost(body).WithContext(ctx)
		writes := 0
		err := h.ServeHTTP(newRecWriter(), req, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for writes < 1000 {
				writes++
				if writes == 4 {
					cancel()
				}
				if _, err := w.Write([]byte(`{"choices":[],"pad":"` + strings.Repeat("x", 100) + `"}`)); err != nil {
					return err
				}
			}
			return nil
		}))
		cancel()
		if writes != 4 || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %d writes after the cancel at the 4th, ServeHTTP error %v", body, writes, err)
		}
	}
}

// fallbackCount reads the fallbacks counter of a reason.
func fallbackCount(t *testing.T, reason string) float64 {
	t.Helper()
	var m dto.Metric
	var c prometheus.Counter = metrics.fallbacks.WithLabelValues(reason)
	must(t, c.Write(&m), "reading a counter")
	return m.GetCounter().GetValue()
}

// metaEvents returns the data of the events of an SSE body that carry a
// meta, each as a decoded object.
func metaEvents(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range strings.Split(body, "\n\n") {
		data, ok := strings.CutPrefix(strings.TrimLeft(ev, "\r\n"), "data: ")
		if !ok || !strings.Contains(data, `"meta"`) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(data), &v); err != nil {
			t.Fatalf("event with meta is not one JSON line: %v: %.200q", err, data)
		}
		out = append(out, v)
	}
	return out
}

// TestMetaBoundedInStreams: two hundred meta events of 100 KB each give
// one final meta event, a chunk, whose meta holds whole keys within
// max_meta_bytes; the drop is logged and counted once (meta_too_large).
func TestMetaBoundedInStreams(t *testing.T) {
	h, logs := newObservedHandler(t, "")
	big := strings.Repeat("v", 100<<10)
	var events []string
	for i := 0; i < 200; i++ {
		events = append(events, `data: {"meta":{"k`+strconv.Itoa(i)+`":"`+big+`"}}`+"\n\n")
	}
	events = append(events, sseChunk("Hi")+"\n\n", "data: [DONE]\n\n")
	before := fallbackCount(t, translate.ReasonMetaTooLarge)
	rec := newRecWriter()
	err := h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return writePieces(w, "text/event-stream", events)
	}))
	must(t, err, "ServeHTTP")
	evs := metaEvents(t, rec.Body.String())
	if len(evs) != 1 {
		t.Fatalf("%d events with meta, want one", len(evs))
	}
	ev := evs[0]
	if ev["object"] != "chat.completion.chunk" || fmt.Sprint(ev["choices"]) != "[]" {
		t.Fatalf("final meta event is not a chunk: %v", ev["object"])
	}
	meta, _ := json.Marshal(ev["meta"])
	if len(meta) > translate.DefaultMaxMetaBytes {
		t.Fatalf("meta of %d bytes, over max_meta_bytes", len(meta))
	}
	kept := ev["meta"].(map[string]any)
	if len(kept) != 2 || kept["k0"] != big || kept["k1"] != big {
		t.Fatalf("kept %d keys; want the first two whole", len(kept))
	}
	if !warned(logs, translate.ReasonMetaTooLarge) {
		t.Error("no meta_too_large warning")
	}
	if got := fallbackCount(t, translate.ReasonMetaTooLarge) - before; got != 1 {
		t.Errorf("meta_too_large counted %v times for one reply", got)
	}
}

// TestMetaBoundConfigured: max_meta_bytes bounds a JSON reply's meta, and
// tools_used keeps at most 256 names, in order.
func TestMetaBoundConfigured(t *testing.T) {
	h, logs := newObservedHandler(t, `{"max_meta_bytes":4096}`)
	meta := `{` + repeatJoin(100, ",", func(i int) string { return `"key` + strconv.Itoa(i) + `":"` + strings.Repeat("m", 100) + `"` }) + `}`
	calls := repeatJoin(300, ",", func(i int) string { return `{"function":{"name":"tool_` + strconv.Itoa(i) + `"}}` })
	reply := `{"choices":[{"index":0,"message":{"content":"x","tool_calls":[` + calls + `]}}],"meta":` + meta + `}`
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return jsonReply(200, nil, reply)(w)
	})), "ServeHTTP")
	var out struct{ Meta map[string]any }
	must(t, json.Unmarshal(rec.Body.Bytes(), &out), "reply %.200s", rec.Body.String())
	got, _ := json.Marshal(out.Meta)
	if len(got) > 4096 {
		t.Fatalf("meta of %d bytes over max_meta_bytes 4096", len(got))
	}
	for k, v := range out.Meta {
		if strings.HasPrefix(k, "key") && v != strings.Repeat("m", 100) {
			t.Fatalf("key %s cut: %v", k, v)
		}
	}
	if !warned(logs, translate.ReasonMetaTooLarge) {
		t.Error("no meta_too_large warning")
	}

	// With room enough, tools_used stops at 256 names.
	h = newUnitHandler(t, "")
	rec = newRecWriter()
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return jsonReply(200, nil, `{"choices":[{"index":0,"message":{"tool_calls":[`+calls+`]}}]}`)(w)
	})), "ServeHTTP")
	var tools struct {
		Meta struct {
			ToolsUsed []string `json:"tools_used"`
		}
	}
	must(t, json.Unmarshal(rec.Body.Bytes(), &tools), "reply")
	if n := len(tools.Meta.ToolsUsed); n != translate.MaxMetaTools || tools.Meta.ToolsUsed[255] != "tool_255" {
		t.Fatalf("%d tools, last %q", n, tools.Meta.ToolsUsed[n-1])
	}
}

// TestConvertedStreamMetaNeverLost: a converted stream whose meta is larger
// than max_event_bytes still ends with its one final meta event, a chunk
// (the converter's meta never passes through an event the rewriter would
// forward uninspected).
func TestConvertedStreamMetaNeverLost(t *testing.T) {
	h := newUnitHandler(t, `{"max_event_bytes":65536}`)
	el := `{"blob":"` + strings.Repeat("b", 60<<10) + `"}`
	lines := []string{`0:"Hello"` + "\n", "2:[" + el + "]\n", "2:[" + el + "]\n", "2:[" + el + "]\n", `9:{"toolCallId":"c","toolName":"search","args":{}}` + "\n", `d:{"finishReason":"stop"}` + "\n"}
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("X-Vercel-AI-Data-Stream", "v1")
		return writePieces(w, "text/plain; charset=utf-8", lines)
	})), "ServeHTTP")
	evs := metaEvents(t, rec.Body.String())
	if len(evs) != 1 || evs[0]["object"] != "chat.completion.chunk" {
		t.Fatalf("%d meta events (want one chunk): %.300s", len(evs), rec.Body.String())
	}
	meta := evs[0]["meta"].(map[string]any)
	data := meta["hustle"].(map[string]any)["data"].([]any)
	if len(data) != 3 || fmt.Sprint(meta["tools_used"]) != "[search]" {
		t.Fatalf("meta lost: %d data elements, tools %v", len(data), meta["tools_used"])
	}
	if !strings.HasSuffix(rec.Body.String(), "data: [DONE]\n\n") {
		t.Fatal("no [DONE] at the end")
	}
}

// TestToolsHeaderAndPlaceholderClean: tool names with NUL, CR and LF reach
// X-Tools-Used and {http.llm_meta.tools_used} with spaces in their place;
// the header holds at most 4 KiB of whole names, in order.
func TestToolsHeaderAndPlaceholderClean(t *testing.T) {
	h := newUnitHandler(t, "")
	names := []string{"a\u0000b", "c\r\nX-Evil: 1", "tab\there\u007f"}
	for i := 0; i < 400; i++ {
		names = append(names, "tool_number_"+strconv.Itoa(i))
	}
	var calls []string
	for _, n := range names {
		b, _ := json.Marshal(n)
		calls = append(calls, `{"function":{"name":`+string(b)+`}}`)
	}
	reply := `{"choices":[{"index":0,"message":{"content":"done","tool_calls":[` + strings.Join(calls, ",") + `]}}]}`
	req := jsonPost(`{"run_once":true,"messages":[]}`)
	req.Header.Set("Accept", "text/plain")
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, req, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return jsonReply(200, nil, reply)(w)
	})), "ServeHTTP")
	hdr := rec.Header().Get("X-Tools-Used")
	checkClean := func(what, v string) {
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] == 0x7f {
				t.Fatalf("%s holds control character %#x: %q", what, v[i], v[:min(len(v), 80)])
			}
		}
	}
	checkClean("X-Tools-Used", hdr)
	if len(hdr) > translate.MaxToolsHeader || len(hdr) < translate.MaxToolsHeader-40 {
		t.Fatalf("X-Tools-Used is %d bytes, want up to 4 KiB and filled", len(hdr))
	}
	got := strings.Split(hdr, ", ")
	want := []string{"a b", "c  X-Evil: 1", "tab here "}
	for i, g := range got {
		w := "tool_number_" + strconv.Itoa(i-3)
		if i < 3 {
			w = want[i]
		}
		if g != w {
			t.Fatalf("name %d is %q, want %q (whole names, in order)", i, g, w)
		}
	}
	repl := req.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	ph, _ := repl.GetString("http.llm_meta.tools_used")
	checkClean("{http.llm_meta.tools_used}", ph)
	if !strings.HasPrefix(ph, "a b,c  X-Evil: 1,tab here ,tool_number_0,") {
		t.Fatalf("placeholder %.80q", ph)
	}
}

// TestCopiedIDAndModelValidUTF8: the final meta chunk repeats an upstream
// id and model holding invalid UTF-8 in valid UTF-8.
func TestCopiedIDAndModelValidUTF8(t *testing.T) {
	h := newUnitHandler(t, "")
	chunk := "data: {\"id\":\"c\xff1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\xfe\xfd\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"t\xc3\"}}]}}]}\n\n"
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		return writePieces(w, "text/event-stream", []string{chunk, "data: [DONE]\n\n"})
	})), "ServeHTTP")
	out := strings.TrimPrefix(rec.Body.String(), chunk)
	if out == rec.Body.String() {
		t.Fatalf("upstream chunk not forwarded as it came: %q", rec.Body.String())
	}
	evs := metaEvents(t, out)
	if len(evs) != 1 || !utf8.ValidString(out) {
		t.Fatalf("module's events not valid UTF-8: %q", out)
	}
	if evs[0]["id"] != "c\uFFFD1" || evs[0]["model"] != "m\uFFFD" {
		t.Fatalf("id %q model %q", evs[0]["id"], evs[0]["model"])
	}
}

// TestLineEndsWholeThroughHandler: a stream with CRLF line ends reaches the
// client as the same bytes however the upstream's writes cut it: the final
// meta event never lands between a CR and its LF.
func TestLineEndsWholeThroughHandler(t *testing.T) {
	h := newUnitHandler(t, "")
	body := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"search\"}}]}}]}\r\n\r\n" +
		"data: {\"meta\":{\"k\":1}}\r\n\r\n" +
		"data: [DONE]\r\n\r\n"
	run := func(pieces ...string) string {
		rec := newRecWriter()
		must(t, h.ServeHTTP(rec, jsonPost(chatRequest), caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			return writePieces(w, "text/event-stream", pieces)
		})), "ServeHTTP")
		return rec.Body.String()
	}
	whole := run(body)
	if !strings.Contains(whole, "\r\n\r\ndata: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"meta\":") {
		t.Fatalf("final meta event not after a whole line break: %q", whole)
	}
	for k := 1; k < len(body); k++ {
		if got := run(body[:k], body[k:]); got != whole {
			t.Fatalf("cut at %d (%q|%q): got %q, want %q", k, body[max(0, k-6):k], body[k:min(len(body), k+6)], got, whole)
		}
	}
}

// TestTransportErrorLoggedByKind: an upstream failure whose text quotes a
// header line is logged as its kind and type, never its text.
func TestTransportErrorLoggedByKind(t *testing.T) {
	h, logs := newObservedHandler(t, "")
	secret := "Bearer sk-THIS-IS-SECRET"
	upErr := caddyhttp.Error(http.StatusBadGateway, fmt.Errorf("net/http: HTTP/1.x transport connection broken: malformed MIME header line: Authorization: %s", secret))
	req := unitRequest(http.MethodPost, "/v1/run_once", strings.NewReader(`{"message":"hi"}`))
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, req, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error { return upErr })), "ServeHTTP")
	if rec.Code != http.StatusBadGateway {
		t.Fatalf("status %d", rec.Code)
	}
	found := false
	for _, e := range logs.All() {
		line, _ := json.Marshal(map[string]any{"msg": e.Message, "fields": e.ContextMap()})
		if strings.Contains(string(line), "sk-THIS") || strings.Contains(string(line), "Authorization") {
			t.Fatalf("log line holds the error's text: %s", line)
		}
		if e.ContextMap()["error_kind"] == "malformed_reply" {
			found = true
		}
	}
	if !found {
		t.Fatal("the failure was not logged with its kind")
	}
}

// TestEdgeBodyOfTinyMessages: an endpoint body of a million tiny messages
// (and an image for the last user message) is read without a list of its
// messages (gjson's Array takes ~80 bytes per message, 27 times what `{},`
// takes): what the request allocates in all stays a small multiple of the
// body.
func TestEdgeBodyOfTinyMessages(t *testing.T) {
	h := newUnitHandler(t, "")
	body := []byte(`{"image_data_url":"data:,x","messages":[` + strings.Repeat(`{},`, 1<<20) + `{"role":"user","content":"hi"}]}`)
	var saw upstreamSaw
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rec := newRecWriter()
	must(t, h.ServeHTTP(rec, unitRequest(http.MethodPost, "/v1/run_once", bytes.NewReader(body)), fakeUpstream(&saw, jsonReply(200, nil, replyPlain))), "ServeHTTP")
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("body %d KiB, allocated %d KiB", len(body)>>10, allocated>>10)
	if rec.Code != http.StatusOK || !bytes.Contains(saw.body, []byte(`{"role":"user","content":[{"text":"hi","type":"text"},{"image_url":{"url":"data:,x"},"type":"image_url"}]}]`)) {
		t.Fatalf("status %d, upstream body ends %q", rec.Code, saw.body[max(0, len(saw.body)-120):])
	}
	if allocated > 24*uint64(len(body)) {
		t.Fatalf("%d MiB allocated for a %d MiB body", allocated>>20, len(body)>>20)
	}
}
