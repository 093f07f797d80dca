package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Streams through a real in-process Caddy (loadCaddy): llm_meta, then
// reverse_proxy to an httptest upstream whose pace the test controls with
// channels. Timeouts here only stop a broken test from hanging; no
// assertion depends on timing.

// streamGuard bounds every wait; reaching it is a failure, never a result.
const streamGuard = 30 * time.Second

// waitOn waits for ch or fails the test after streamGuard.
func waitOn[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(streamGuard):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// release lets the upstream go on, or gives up when it is gone.
func release(t *testing.T, ch chan<- struct{}, what string) {
	t.Helper()
	select {
	case ch <- struct{}{}:
	case <-time.After(streamGuard):
		t.Fatalf("timed out releasing the upstream (%s)", what)
	}
}

// upstreamWait blocks the upstream handler until the test releases it. It
// reports false when the wait was cut short (request canceled, or the guard ran out).
func upstreamWait(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	case <-time.After(streamGuard):
		return false
	}
}

// postStream sends a chat request through Caddy and returns the response;
// the request is canceled by the returned func (and at the end of the test).
func postStream(t *testing.T, base, path, body string, hdr ...string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*streamGuard)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
	must(t, err, "building the request")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := testClient.Do(req)
	must(t, err, "request through Caddy")
	t.Cleanup(func() { resp.Body.Close() })
	return resp, cancel
}

// readEvent reads one event from the client side: its lines up to and
// including the blank line that ends it, exactly as they came.
func readEvent(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			return b.String(), err
		}
		if line == "\n" || line == "\r\n" {
			return b.String(), nil
		}
	}
}

// sseHeaders starts an event-stream reply and flushes the headers.
func sseHeaders(w http.ResponseWriter) *http.ResponseController {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return rc
}

// writeFlush writes and flushes; it reports whether both worked.
func writeFlush(w http.ResponseWriter, rc *http.ResponseController, s string) bool {
	if _, err := io.WriteString(w, s); err != nil {
		return false
	}
	return rc.Flush() == nil
}

func sseChunk(delta string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
}

// moduleStacks returns the stacks of goroutines that are running the
// module's code (its handler, its writer, or package translate).
func moduleStacks() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "llm_meta/caddymodule.(*Handler)") ||
			strings.Contains(g, "llm_meta/caddymodule.(*responseWriter)") ||
			strings.Contains(g, "llm_meta/caddymodule.clientOut") ||
			strings.Contains(g, "llm_meta/translate.") {
			out = append(out, g)
		}
	}
	return out
}

// waitNoModuleGoroutines waits until no goroutine runs the module's code.
func waitNoModuleGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(streamGuard)
	for {
		stacks := moduleStacks()
		if len(stacks) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutine(s) still run the module's code after the request ended:\n%s", len(stacks), strings.Join(stacks, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStreamEventsArriveBeforeNext: the upstream sends each event (in two
// writes) and then stops until the client has read it; so a module that
// held a complete event back for any reason would hang the test (and fail
// at the guard). The events reach the client byte for byte, the final meta
// event is added before [DONE].
func TestStreamEventsArriveBeforeNext(t *testing.T) {
	events := []string{
		": keep-alive\n\n",
		sseChunk(`{"role":"assistant","content":""}`),
		strings.ReplaceAll(sseChunk(`{"content":"Hel"}`), "\n", "\r\n"),
		"event: message\nid: 7\n" + sseChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"web_search","arguments":""}}]}`),
		sseChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":\"x\"}"}}]}`),
		"data: not json at all\n\n",
		sseChunk(`{"content":"lo"}`),
	}
	proceed := make(chan struct{})
	upstreamDone := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamDone <- servePaced(w, r, events, true, proceed)
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("Content-Length") != "" {
		t.Errorf("Content-Length %q on a stream", resp.Header.Get("Content-Length"))
	}
	br := bufio.NewReader(resp.Body)
	for i, want := range events {
		got, err := readEvent(br)
		if err != nil {
			t.Fatalf("event %d: %v (got %q)", i, err, got)
		}
		if got != want {
			t.Fatalf("event %d =\n%q\nwant byte-identical\n%q", i, got, want)
		}
		release(t, proceed, fmt.Sprintf("after event %d", i))
	}
	rest, err := io.ReadAll(br)
	must(t, err, "reading the end of the stream")
	if msg := waitOn(t, upstreamDone, "the upstream to finish"); msg != "" {
		t.Fatal(msg)
	}
	tail := parseClientEvents(rest)
	if len(tail) != 2 || string(tail[1].data) != "[DONE]" {
		t.Fatalf("end of stream = %q, want the final meta event then [DONE]", rest)
	}
	if eq, err := jsonEqualBytes(jsonField(tail[0].data, "meta"), []byte(`{"tools_used":["web_search"]}`)); err != nil || !eq {
		t.Errorf("final meta event = %s", tail[0].data)
	}
	if obj := jsonField(tail[0].data, "object"); string(obj) != `"chat.completion.chunk"` {
		t.Errorf("final meta event is not a chunk: %s", tail[0].data)
	}
	if id := jsonField(tail[0].data, "id"); string(id) != `"chatcmpl-1"` {
		t.Errorf("final meta event id = %s, want the last chunk's", id)
	}
}

// TestStreamOversizeEventBoundedMemory: a 10 MiB event with max_event_bytes
// 1 MiB reaches the client intact, as it arrives: the client gets every
// byte of it before the upstream even ends the event, and the live heap at
// that moment has not grown by anything like the event's size.
func TestStreamOversizeEventBoundedMemory(t *testing.T) {
	const eventSize = 10 << 20
	piece := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	head := `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`
	tailOfEvent := `"}}]}` + "\n\n"
	end := "data: [DONE]\n\n"

	// What the upstream sends, hashed as it is generated (the test never
	// holds the event in memory either).
	want := sha256.New()
	gen := func(w io.Writer) error {
		if _, err := io.WriteString(w, head); err != nil {
			return err
		}
		for n := 0; n < eventSize; n += len(piece) {
			if _, err := w.Write(piece); err != nil {
				return err
			}
		}
		return nil
	}
	_ = gen(want)
	sentBeforeEnd := len(head) + eventSize
	want.Write([]byte(tailOfEvent + end))
	wantSum := want.Sum(nil)

	clientHasAll := make(chan struct{})
	upstreamDone := make(chan error, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		rc := sseHeaders(w)
		if r.URL.Path == "/warm" {
			writeFlush(w, rc, sseChunk(`{"content":"warm"}`)+end)
			return
		}
		err := gen(flushingWriter{w, rc})
		if err == nil && !upstreamWait(r, clientHasAll) {
			err = errors.New("the client never received the open event's bytes")
		}
		if err == nil {
			_, err = io.WriteString(w, tailOfEvent+end)
		}
		upstreamDone <- err
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, []byte(`{"max_event_bytes":1048576}`)), proxyTo(up.Listener.Addr().String()))

	// Warm up the path (pools, connections), then take the baseline.
	warm, _ := postStream(t, base, "/warm", chatRequest)
	_, _ = io.Copy(io.Discard, warm.Body)
	warm.Body.Close()
	var before, mid runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)

	resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest)
	got := sha256.New()
	buf := make([]byte, 64<<10)
	received := 0
	for received < sentBeforeEnd {
		n, err := resp.Body.Read(buf[:min(len(buf), sentBeforeEnd-received)])
		got.Write(buf[:n])
		received += n
		if err != nil {
			var upErr error
			select {
			case upErr = <-upstreamDone:
			default:
			}
			t.Fatalf("the stream ended (%v) after %d of the %d bytes sent while the event was open; upstream: %v", err, received, sentBeforeEnd, upErr)
		}
	}
	// The event is still open upstream: whatever the module holds for it is
	// live now.
	runtime.GC()
	runtime.ReadMemStats(&mid)
	release(t, clientHasAll, "after the event's bytes")
	_, err := io.Copy(got, resp.Body)
	must(t, err, "reading the end of the stream")
	must(t, waitOn(t, upstreamDone, "the upstream to finish"), "upstream")

	if !bytes.Equal(got.Sum(nil), wantSum) {
		t.Errorf("the stream reached the client changed (sha256 differs)")
	}
	growth := int64(mid.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("live heap growth with a 10 MiB event open: %d KiB", growth>>10)
	if growth > 4<<20 {
		t.Errorf("live heap grew by %d KiB while a 10 MiB event passed; want well under 10 MiB (max_event_bytes is 1 MiB)", growth>>10)
	}
}

// flushingWriter flushes after each write, as an SSE server does.
type flushingWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f flushingWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.rc.Flush()
	}
	return n, err
}

// TestClientDisconnectCancelsUpstream: a client that goes away cancels the
// upstream request, whether the module is streaming, collecting a run-once
// reply or buffering JSON, and none of the module's code is left running.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	for _, tc := range []struct {
		name, body, contentType, first string
		readFirst                      bool
	}{
		{"stream", chatRequest, "text/event-stream", sseChunk(`{"content":"Hel"}`), true},
		{"run-once stream", `{"model":"m","run_once":true,"messages":[{"role":"user","content":"Hi"}]}`, "text/event-stream", sseChunk(`{"content":"Hel"}`), false},
		{"json", chatRequest, "application/json", `{"id":"c1","choices":[`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			canceled := make(chan bool, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body) // so that the server notices a closed connection
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(200)
				rc := http.NewResponseController(w)
				writeFlush(w, rc, tc.first)
				started <- struct{}{}
				select {
				case <-r.Context().Done():
					canceled <- true
				case <-time.After(streamGuard):
					canceled <- false
				}
			}))
			defer up.Close()
			base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

			// In the buffered modes no header reaches the client before the
			// reply is complete, so the request runs in the background and
			// the client gives up while it is still waiting.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(tc.body))
			must(t, err, "building the request")
			req.Header.Set("Content-Type", "application/json")
			type answer struct {
				resp *http.Response
				err  error
			}
			answered := make(chan answer, 1)
			go func() {
				resp, err := testClient.Do(req)
				answered <- answer{resp, err}
			}()
			waitOn(t, started, "the upstream to start")
			var first *http.Response
			if tc.readFirst {
				a := waitOn(t, answered, "the stream's headers")
				must(t, a.err, "request through Caddy")
				first = a.resp
				got, err := readEvent(bufio.NewReader(first.Body))
				if err != nil || got != tc.first {
					t.Fatalf("first event = %q, %v", got, err)
				}
			}
			// The check at the end must be able to see the module: while the
			// request is in flight, its handler is on a goroutine's stack.
			if len(moduleStacks()) == 0 {
				t.Fatal("no goroutine runs the module's code during the request; moduleStacks cannot see it")
			}
			if first != nil {
				first.Body.Close()
			}
			cancel()
			if !waitOn(t, canceled, "the upstream request's context") {
				t.Fatal("the upstream request was not canceled after the client left")
			}
			waitNoModuleGoroutines(t)
		})
	}
}

// TestUpstreamClosesMidStream: on an ordinary stream the client keeps the
// complete events sent so far, sees the connection break (so it cannot
// mistake the reply for complete), and gets nothing made up: no final meta
// event, no [DONE].
func TestUpstreamClosesMidStream(t *testing.T) {
	sent := sseChunk(`{"role":"assistant","content":"Hel"}`) + sseChunk(`{"tool_calls":[{"index":0,"function":{"name":"search"}}]}`)
	clientGotThem := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		rc := sseHeaders(w)
		writeFlush(w, rc, sent+`data: {"choices":[{"index":0,"delta":{"content":"lo`)
		upstreamWait(r, clientGotThem)
		panic(http.ErrAbortHandler) // drop the connection mid-event
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest)
	br := bufio.NewReader(resp.Body)
	var got strings.Builder
	for range 2 {
		ev, err := readEvent(br)
		got.WriteString(ev)
		if err != nil {
			t.Fatalf("reading the events sent: %v (got %q)", err, got.String())
		}
	}
	if got.String() != sent {
		t.Errorf("events = %q, want %q", got.String(), sent)
	}
	release(t, clientGotThem, "to drop the connection")
	rest, err := io.ReadAll(br)
	if err == nil {
		t.Errorf("the stream ended cleanly after the upstream broke off; the client cannot tell it is incomplete")
	}
	if strings.Contains(string(rest), "[DONE]") || strings.Contains(string(rest), `"meta"`) {
		t.Errorf("after the upstream broke off the client got %q; want nothing made up", rest)
	}
	waitNoModuleGoroutines(t)
}

// TestRunOnceUpstreamDiesMidStream: SPEC 6.4, a 502 with what is known so far.
func TestRunOnceUpstreamDiesMidStream(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		rc := sseHeaders(w)
		writeFlush(w, rc, sseChunk(`{"role":"assistant","content":"Hel"}`)+
			sseChunk(`{"tool_calls":[{"index":0,"function":{"name":"search","arguments":""}}]}`)+
			sseChunk(`{"content":"lo"}`)+`data: {"choices":[{"index":0,"delta":{"content":" wor`)
		panic(http.ErrAbortHandler)
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	resp, _ := postStream(t, base, "/v1/chat/completions", `{"model":"gpt-4o-mini","run_once":true,"messages":[{"role":"user","content":"Hi"}]}`)
	body, err := io.ReadAll(resp.Body)
	must(t, err, "reading the answer")
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q, body %s; want 502 application/json", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if err := jsonMatches(body, []byte(`{"content":"Hello","meta":{"tools_used":["search"]}}`)); err != nil {
		t.Errorf("answer %s: %v", body, err)
	}
	var msg string
	if raw := jsonField(body, "error"); raw != nil {
		msg = string(raw)
	}
	if !strings.Contains(strings.ToLower(msg), "upstream") {
		t.Errorf("error = %s, want a message saying the upstream connection failed", msg)
	}
	waitNoModuleGoroutines(t)
}

// TestRunOnceOverBufferLimit: SPEC 6.4, a run-once reply larger than
// max_buffer_bytes is a 502 naming the limit, and the module stops reading
// the upstream (whose writes then fail and whose request is canceled)
// instead of draining a reply it will not use.
func TestRunOnceOverBufferLimit(t *testing.T) {
	const total = 256 << 20 // the upstream would send this much
	for _, tc := range []struct {
		name, contentType string
		head, unit        string
	}{
		{"json", "application/json", `{"choices":[{"index":0,"message":{"role":"assistant","content":"`, strings.Repeat("x", 16<<10)},
		{"stream", "text/event-stream", sseChunk(`{"role":"assistant","content":""}`), sseChunk(`{"content":"` + strings.Repeat("x", 16<<10) + `"}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				written  int
				err      error
				canceled bool
			}
			done := make(chan result, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(200)
				n, err := io.WriteString(w, tc.head)
				for err == nil && n < total {
					var m int
					m, err = io.WriteString(w, tc.unit)
					n += m
				}
				done <- result{n, err, r.Context().Err() != nil}
			}))
			defer up.Close()
			base := loadCaddy(t, llmMeta(t, []byte(`{"max_buffer_bytes":65536}`)), proxyTo(up.Listener.Addr().String()))

			resp, _ := postStream(t, base, "/v1/chat/completions", `{"model":"m","run_once":true,"messages":[{"role":"user","content":"Hi"}]}`)
			body, err := io.ReadAll(resp.Body)
			must(t, err, "reading the answer")
			if resp.StatusCode != http.StatusBadGateway {
				t.Errorf("status %d, want 502; body %.300s", resp.StatusCode, body)
			}
			msg := string(jsonField(body, "error"))
			if !strings.Contains(msg, "max_buffer_bytes") || !strings.Contains(msg, "65536") {
				t.Errorf("error = %s, want it to name max_buffer_bytes and its value", msg)
			}
			res := waitOn(t, done, "the upstream to stop writing")
			if res.err == nil || res.written >= total {
				t.Errorf("the upstream wrote %d of %d bytes without error: the module kept reading a reply over its limit", res.written, total)
			}
			t.Logf("upstream stopped after %d KiB: %v (request canceled: %v)", res.written>>10, res.err, res.canceled)
			waitNoModuleGoroutines(t)
		})
	}
}

// servePaced answers as a paced SSE upstream: each event (in two writes when
// split), then a wait until the client has read it (proceed), then [DONE].
// It returns "" or what went wrong.
func servePaced(w http.ResponseWriter, r *http.Request, events []string, split bool, proceed chan struct{}) string {
	_, _ = io.ReadAll(r.Body)
	rc := sseHeaders(w)
	for i, ev := range events {
		half := len(ev)
		if split {
			half = len(ev) / 2
		}
		if !writeFlush(w, rc, ev[:half]) || (half < len(ev) && !writeFlush(w, rc, ev[half:])) {
			return fmt.Sprintf("write of event %d failed", i)
		}
		if !upstreamWait(r, proceed) {
			return fmt.Sprintf("the client never got event %d", i)
		}
	}
	writeFlush(w, rc, "data: [DONE]\n\n")
	return ""
}
