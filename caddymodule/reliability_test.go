package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Faults through a real in-process Caddy (loadCaddy): upstreams that close
// the connection, cut a stream short, stall, send huge or malformed events,
// never end; request bodies that are deeply nested or repeat their keys.
// Each test asserts the outcome the SPEC (2, 4.3, 6.4, 8) or the README
// defines for it. Every wait is synchronised with channels; the timeouts
// (streamGuard) only stop a broken test from hanging.

// rawUpstream is an upstream on a bare TCP listener: for each connection it
// reads one request (body included) and hands the connection to serve,
// which writes what it likes (or nothing) and returns; the connection is
// then closed. It is how a test sends bytes that net/http would not.
func rawUpstream(t *testing.T, serve func(c net.Conn, req *http.Request)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err, "listening")
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				body, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(body))
				serve(c, req)
			}()
		}
	}()
	return l.Addr().String()
}

// chunk is one chunk of an HTTP/1.1 chunked body.
func chunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

// fetch sends a request through Caddy and reads the whole answer.
func fetch(t *testing.T, base, path, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	resp, _ := postStream(t, base, path, body, hdr...)
	got, err := io.ReadAll(resp.Body)
	must(t, err, "reading the answer")
	return resp, got
}

// assertEdgeError checks an error the module makes (SPEC 6.4): the status,
// Content-Type application/json, and the edge function's shape, a JSON
// object whose "error" is the message.
func assertEdgeError(t *testing.T, resp *http.Response, body []byte, status int, msg string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q, body %q; want %d application/json", resp.StatusCode, resp.Header.Get("Content-Type"), body, status)
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", body, err)
	}
	if got, _ := v["error"].(string); got != msg {
		t.Errorf("error = %q, want %q (body %s)", v["error"], msg, body)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
	}
}

const runOnceChat = `{"model":"gpt-4o-mini","run_once":true,"messages":[{"role":"user","content":"Hi"}]}`

// TestUpstreamClosesBeforeHeaders: the upstream accepts the connection,
// reads the whole request and closes it without a byte of answer (or never
// answers within reverse_proxy's response_header_timeout, or refuses the
// connection). reverse_proxy then returns a HandlerError (502, or 504 on a
// timeout) from next, before anything went downstream.
//
//   - An ordinary chat request is not the module's to answer (SPEC 6.4:
//     outside the endpoints and run-once it makes no errors of its own): the
//     client gets reverse_proxy's status from Caddy's error handling, which
//     with no handle_errors routes is the bare status with an empty body.
//   - A run-once request (the flag on the chat path, or the run-once
//     endpoint) and the edge endpoint (streaming or not) always answer in the
//     edge function's shape: 502 application/json {"error":"Upstream
//     connection failed"} ({"error":"Upstream timed out"} on a timeout),
//     as the edge function answers a failed fetch.
func TestUpstreamClosesBeforeHeaders(t *testing.T) {
	seen := make(chan string, 16)
	closer := rawUpstream(t, func(c net.Conn, req *http.Request) {
		seen <- req.Method + " " + req.URL.Path
	})
	stall := make(chan struct{})
	defer close(stall)
	silent := rawUpstream(t, func(c net.Conn, req *http.Request) {
		seen <- req.Method + " " + req.URL.Path
		<-stall
	})
	refused := freeAddr(t) // nothing listens there

	cases := []struct {
		name, path, body string
		hdr              []string
		module           bool // the module answers the error itself
	}{
		{"chat", "/v1/chat/completions", chatRequest, nil, false},
		{"chat with run_once", "/v1/chat/completions", runOnceChat, nil, true},
		{"run-once endpoint", "/v1/run_once", `{"message":"hi"}`, nil, true},
		{"edge endpoint", "/functions/v1/jarvis", `{"message":"hi"}`, nil, true},
		{"edge endpoint x-stream", "/functions/v1/jarvis", `{"message":"hi"}`, []string{"x-stream", "true"}, true},
	}
	for _, up := range []struct {
		name, addr string
		timeout    bool // reverse_proxy's response_header_timeout fires
		reached    bool // the request reaches the upstream
	}{
		{"closes", closer, false, true},
		{"never answers", silent, true, true},
		{"refuses", refused, false, false},
	} {
		proxy := proxyTo(up.addr)
		if up.timeout {
			proxy["transport"] = map[string]any{"protocol": "http", "response_header_timeout": int64(200 * time.Millisecond)}
		}
		base := loadCaddy(t, llmMeta(t, nil), proxy)
		for _, tc := range cases {
			t.Run(up.name+"/"+tc.name, func(t *testing.T) {
				resp, body := fetch(t, base, tc.path, tc.body, tc.hdr...)
				wantStatus, msg := http.StatusBadGateway, "Upstream connection failed"
				if up.timeout {
					msg = "Upstream timed out"
				}
				if tc.module {
					assertEdgeError(t, resp, body, http.StatusBadGateway, msg)
				} else {
					if up.timeout {
						wantStatus = http.StatusGatewayTimeout
					}
					if resp.StatusCode != wantStatus || len(body) != 0 {
						t.Errorf("status %d, body %q; want reverse_proxy's %d with Caddy's empty error body", resp.StatusCode, body, wantStatus)
					}
				}
				if up.reached {
					if got := waitOn(t, seen, "the upstream to get the request"); got != "POST /v1/chat/completions" {
						t.Errorf("upstream got %q", got)
					}
				}
				waitNoModuleGoroutines(t)
			})
		}
	}
}

// TestUpstreamCutMidEvent: the upstream (raw TCP, so the test controls every
// byte of the framing) sends complete events, then part of a data: line,
// then drops the connection. With chunked framing (cut inside a chunk, or
// at a chunk boundary without the last chunk) the cut is visible: the
// client gets the complete events, byte-identical for an OpenAI stream and
// converted for a data stream, then the connection breaks; nothing is made
// up (no final meta event although a tool was used, no [DONE]).
//
// With a close-delimited body (no Content-Length, no chunking) a cut cannot
// be told from the end of the reply: the module ends the open event and
// completes the stream as for any end (final meta event, no [DONE] since the
// upstream sent none), as SPEC 4.3 says for the end of a stream.
func TestUpstreamCutMidEvent(t *testing.T) {
	sseSent := sseChunk(`{"role":"assistant","content":"Hel"}`) +
		sseChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":""}}]}`) +
		sseChunk(`{"content":"lo"}`)
	sseCut := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" wor`
	dsSent := "f:{\"messageId\":\"msg-1\"}\n0:\"Hel\"\n9:{\"toolCallId\":\"c1\",\"toolName\":\"search\",\"args\":{}}\n0:\"lo\"\n"
	dsCut := `0:" wor`

	for _, tc := range []struct {
		name      string
		header    string // response head after the status line
		body      func(sent, cut string) string
		sse       bool
		clean     bool // the cut is invisible (close-delimited)
		heldByGo  bool // the upstream closes at once: see below
		sent, cut string
	}{
		{"sse chunked cut at a chunk boundary", "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n",
			func(sent, cut string) string { return chunk(sent) + chunk(cut) }, true, false, false, sseSent, sseCut},
		// The complete events and the start of a chunk cut short arrive
		// together. Go's chunked reader (in the transport reverse_proxy
		// uses, with or without llm_meta) then blocks inside the cut chunk
		// and hands on what it read only with the error when the
		// connection ends; so the upstream closes at once here, and the
		// events reach the client with the cut rather than before it.
		{"sse chunked cut inside a chunk", "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n",
			func(sent, cut string) string {
				return chunk(sent) + strconv.FormatInt(int64(len(cut)+100), 16) + "\r\n" + cut
			}, true, false, true, sseSent, sseCut},
		{"data stream chunked", "Content-Type: text/plain; charset=utf-8\r\nX-Vercel-AI-Data-Stream: v1\r\nTransfer-Encoding: chunked\r\n",
			func(sent, cut string) string { return chunk(sent) + chunk(cut) }, false, false, false, dsSent, dsCut},
		{"sse close-delimited", "Content-Type: text/event-stream\r\nConnection: close\r\n",
			func(sent, cut string) string { return sent + cut }, true, true, false, sseSent, sseCut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clientGotThem := make(chan struct{})
			upstreamDone := make(chan error, 1)
			addr := rawUpstream(t, func(c net.Conn, req *http.Request) {
				_, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n"+tc.header+"\r\n"+tc.body(tc.sent, tc.cut))
				if err == nil && !tc.heldByGo {
					select {
					case <-clientGotThem:
					case <-time.After(streamGuard):
						err = errors.New("the client never got the complete events")
					}
				}
				upstreamDone <- err // the connection closes when serve returns
			})
			base := loadCaddy(t, llmMeta(t, nil), proxyTo(addr))
			resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			br := bufio.NewReader(resp.Body)
			var got strings.Builder
			if tc.sse {
				for got.Len() < len(tc.sent) {
					ev, err := readEvent(br)
					got.WriteString(ev)
					if err != nil {
						t.Fatalf("reading the complete events: %v (got %q)", err, got.String())
					}
				}
				if got.String() != tc.sent {
					t.Fatalf("events = %q\nwant byte-identical %q", got.String(), tc.sent)
				}
			} else {
				// 0:"Hel" is the first chunk; 9: only joins tools_used; 0:"lo".
				for range 2 {
					ev, err := readEvent(br)
					got.WriteString(ev)
					if err != nil {
						t.Fatalf("reading the converted events: %v (got %q)", err, got.String())
					}
				}
				evs := parseClientEvents([]byte(got.String()))
				if c := streamContent(evs); c != "Hello" || len(evs) != 2 {
					t.Fatalf("converted events %q carry %q, want two chunks with \"Hello\"", got.String(), c)
				}
			}
			if !tc.heldByGo {
				release(t, clientGotThem, "to drop the connection")
			}
			rest, err := io.ReadAll(br)
			must(t, waitOn(t, upstreamDone, "the upstream"), "upstream")
			if tc.clean {
				// Indistinguishable from an end: the open event is ended and
				// the stream completed (SPEC 4.3).
				must(t, err, "reading the end of a close-delimited reply")
				evs := parseClientEvents(rest)
				if !strings.HasPrefix(string(rest), tc.cut) || len(evs) != 2 {
					t.Fatalf("after the events the client got %q; want the unterminated event, ended, then the final meta event", rest)
				}
				// Cut short in its protocol: it says so (SPEC 11.1).
				if m := jsonField(evs[1].data, "meta"); string(m) != `{"tools_used":["search"],"interrupted":true}` {
					t.Errorf("final meta event %s", evs[1].data)
				}
				if strings.Contains(string(rest), "[DONE]") {
					t.Errorf("[DONE] made up: %q", rest)
				}
			} else {
				if err == nil {
					t.Errorf("the stream ended cleanly after the upstream broke off (rest %q); the client cannot tell it is incomplete", rest)
				}
				if strings.Contains(string(rest), "[DONE]") || strings.Contains(string(rest), `"meta"`) {
					t.Errorf("after the upstream broke off the client got %q; want nothing made up", rest)
				}
			}
			waitNoModuleGoroutines(t)
		})
	}
}

// TestUpstreamStallsBetweenEvents: the upstream sends a burst of complete
// events and the start of the next one in a single write, then stalls
// (until the test releases it, standing for a stall of any length). Every
// complete event reaches the client during the stall, the open one is held
// whole. When the stall ends the stream completes; when the client gives up
// during the stall instead, the upstream request is canceled and none of the
// module's code is left running.
func TestUpstreamStallsBetweenEvents(t *testing.T) {
	type format struct {
		name, contentType, dsHeader string
		burst, rest                 string // before and after the stall
		burstEvents                 int    // events the client reads from the burst
		check                       func(t *testing.T, got string)
	}
	sseBurst := sseChunk(`{"role":"assistant","content":"Hel"}`) + ": ping\n\n" +
		sseChunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":""}}]}`) +
		strings.ReplaceAll(sseChunk(`{"content":"lo"}`), "\n", "\r\n")
	sseOpen := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"del`
	formats := []format{
		{"sse", "text/event-stream", "", sseBurst + sseOpen, `ta":{"content":"!"}}]}` + "\n\ndata: [DONE]\n\n", 4,
			func(t *testing.T, got string) {
				if got != sseBurst {
					t.Fatalf("during the stall the client got %q\nwant byte-identical %q", got, sseBurst)
				}
			}},
		{"data stream", "text/plain", "v1", "0:\"Hel\"\n9:{\"toolCallId\":\"c1\",\"toolName\":\"search\",\"args\":{}}\n0:\"lo\"\n0:\"", "!\"\nd:{\"finishReason\":\"stop\"}\n", 2,
			func(t *testing.T, got string) {
				if c := streamContent(parseClientEvents([]byte(got))); c != "Hello" {
					t.Fatalf("during the stall the client got %q (content %q), want the chunks of \"Hello\"", got, c)
				}
			}},
	}
	for _, f := range formats {
		for _, givesUp := range []bool{false, true} {
			name := f.name + "/stall ends"
			if givesUp {
				name = f.name + "/client gives up"
			}
			t.Run(name, func(t *testing.T) {
				resume := make(chan struct{})
				type result struct {
					canceled bool
					err      error
				}
				done := make(chan result, 1)
				up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.ReadAll(r.Body)
					w.Header().Set("Content-Type", f.contentType)
					if f.dsHeader != "" {
						w.Header().Set("X-Vercel-AI-Data-Stream", f.dsHeader)
					}
					w.WriteHeader(200)
					rc := http.NewResponseController(w)
					if !writeFlush(w, rc, f.burst) {
						done <- result{err: errors.New("writing the burst failed")}
						return
					}
					select { // the stall
					case <-resume:
						if !writeFlush(w, rc, f.rest) {
							done <- result{err: errors.New("writing after the stall failed")}
							return
						}
						done <- result{}
					case <-r.Context().Done():
						done <- result{canceled: true}
					case <-time.After(streamGuard):
						done <- result{err: errors.New("the stall was never ended")}
					}
				}))
				defer up.Close()
				base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

				resp, cancel := postStream(t, base, "/v1/chat/completions", chatRequest)
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				br := bufio.NewReader(resp.Body)
				var got strings.Builder
				for i := 0; i < f.burstEvents; i++ {
					ev, err := readEvent(br)
					got.WriteString(ev)
					if err != nil {
						t.Fatalf("event %d during the stall: %v (got %q)", i, err, got.String())
					}
				}
				f.check(t, got.String())
				if br.Buffered() > 0 {
					t.Fatalf("the client got part of the open event during the stall: %q", must2(br.Peek(br.Buffered())))
				}
				if givesUp {
					cancel()
					res := waitOn(t, done, "the upstream to see the client leave")
					if res.err != nil || !res.canceled {
						t.Fatalf("the upstream request was not canceled when the client gave up (%v)", res.err)
					}
					waitNoModuleGoroutines(t)
					return
				}
				release(t, resume, "to end the stall")
				rest, err := io.ReadAll(br)
				must(t, err, "reading the end of the stream")
				if res := waitOn(t, done, "the upstream"); res.err != nil || res.canceled {
					t.Fatalf("upstream: %v (canceled %v)", res.err, res.canceled)
				}
				evs := parseClientEvents(rest)
				n := len(evs)
				if n < 3 || streamContent(evs) != "!" || string(evs[n-1].data) != "[DONE]" {
					t.Fatalf("after the stall the client got %q; want the held event (\"!\"), the final meta event, [DONE]", rest)
				}
				if m := jsonField(evs[n-2].data, "meta"); string(m) != `{"tools_used":["search"]}` {
					t.Errorf("final meta event %s", evs[n-2].data)
				}
				waitNoModuleGoroutines(t)
			})
		}
	}
}

func must2(b []byte, _ error) []byte { return b }

// TestStream50MiBEvent: one 50 MiB SSE event with max_event_bytes 1 MiB
// reaches the client intact (sha256 of the whole stream), passed on as it
// arrives, and the live heap measured (after a GC) while the client is
// reading it, up to the moment it has read all of the event but its end
// (which the upstream holds back until then), stays far below the event's
// size. In a data stream a part that long cannot be converted: it is
// skipped (SPEC 5.1) with memory just as bounded, and the stream goes on.
func TestStream50MiBEvent(t *testing.T) {
	const size = 50 << 20
	const limit = 8 << 20
	piece := bytes.Repeat([]byte("0123456789abcdef"), 2048) // 32 KiB
	for _, tc := range []struct {
		name, contentType, dsHeader string
		head, tail                  string
		intact                      bool
	}{
		{"sse", "text/event-stream", "",
			`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`,
			`"}}]}` + "\n\n" + sseChunk(`{"content":"after"}`) + "data: [DONE]\n\n", true},
		{"data stream", "text/plain", "v1", `0:"`, "\"\n0:\"after\"\nd:{\"finishReason\":\"stop\"}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// gen writes the event; at each of marks (bytes of the event
			// written) it calls atMark.
			marks := []int{10 << 20, 25 << 20, 45 << 20}
			gen := func(w io.Writer, atMark func()) error {
				if _, err := io.WriteString(w, tc.head); err != nil {
					return err
				}
				next := 0
				for n := 0; n < size; n += len(piece) {
					if next < len(marks) && n == marks[next] {
						atMark()
						next++
					}
					if _, err := w.Write(piece); err != nil {
						return err
					}
				}
				return nil
			}
			want := sha256.New()
			_ = gen(want, func() {})
			want.Write([]byte(tc.tail))
			wantSum := want.Sum(nil)

			clientHasIt := make(chan struct{})
			upstreamDone := make(chan error, 1)
			// In a data stream nothing of the skipped part reaches the
			// client, so the upstream itself stops at each mark until the
			// test has measured.
			atMark, measured := make(chan struct{}), make(chan struct{})
			hold := func() {
				if tc.intact {
					return
				}
				atMark <- struct{}{}
				<-measured
			}
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				if tc.dsHeader != "" {
					w.Header().Set("X-Vercel-AI-Data-Stream", tc.dsHeader)
				}
				w.WriteHeader(200)
				rc := http.NewResponseController(w)
				if r.URL.Path == "/warm" {
					if tc.dsHeader != "" {
						writeFlush(w, rc, "0:\"warm\"\n")
					} else {
						writeFlush(w, rc, sseChunk(`{"content":"warm"}`)+"data: [DONE]\n\n")
					}
					return
				}
				err := gen(flushingWriter{w, rc}, hold)
				if err == nil && !upstreamWait(r, clientHasIt) {
					err = errors.New("the client never got the open event's bytes")
				}
				if err == nil {
					_, err = io.WriteString(w, tc.tail)
				}
				upstreamDone <- err
			}))
			defer up.Close()
			base := loadCaddy(t, llmMeta(t, []byte(`{"max_event_bytes":1048576}`)), proxyTo(up.Listener.Addr().String()))

			warm, _ := postStream(t, base, "/warm", chatRequest)
			_, _ = io.Copy(io.Discard, warm.Body)
			warm.Body.Close()
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)

			resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest)
			got := sha256.New()
			buf := make([]byte, 64<<10)
			var peak int64
			measure := func() {
				var m runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m)
				peak = max(peak, int64(m.HeapAlloc)-int64(before.HeapAlloc))
			}
			if tc.intact {
				// Measure when the client has read 10, 25 and 45 MiB, and
				// all but the event's end (which the upstream holds back
				// until then).
				sentBeforeEnd := len(tc.head) + size
				at := append(append([]int(nil), marks...), sentBeforeEnd)
				received := 0
				for len(at) > 0 {
					n, err := resp.Body.Read(buf[:min(len(buf), at[0]-received)])
					got.Write(buf[:n])
					received += n
					if err != nil {
						t.Fatalf("the stream ended (%v) after %d of the %d bytes sent while the event was open", err, received, sentBeforeEnd)
					}
					if received == at[0] {
						measure()
						at = at[1:]
					}
				}
				release(t, clientHasIt, "after the event's bytes")
				_, err := io.Copy(got, resp.Body)
				must(t, err, "reading the end of the stream")
				if !bytes.Equal(got.Sum(nil), wantSum) {
					t.Errorf("the stream reached the client changed (sha256 differs)")
				}
			} else {
				// Measure at the upstream's marks, and once more while it
				// sends the rest of the part.
				for range marks {
					waitOn(t, atMark, "the upstream to reach a mark")
					measure()
					release(t, measured, "after measuring")
				}
				measure()
				release(t, clientHasIt, "after the part's bytes")
				rest, err := io.ReadAll(resp.Body)
				must(t, err, "reading the stream")
				evs := parseClientEvents(rest)
				if c := streamContent(evs); c != "after" || len(evs) < 2 || string(evs[len(evs)-1].data) != "[DONE]" {
					t.Errorf("stream after a skipped 50 MiB part = %.500q; want the later part converted and [DONE]", rest)
				}
			}
			must(t, waitOn(t, upstreamDone, "the upstream to finish"), "upstream")
			t.Logf("largest live heap growth with a 50 MiB event open: %d KiB", peak>>10)
			if peak > limit {
				t.Errorf("live heap grew by %d KiB while a 50 MiB event passed; want under %d KiB (max_event_bytes is 1 MiB)", peak>>10, limit>>10)
			}
			waitNoModuleGoroutines(t)
		})
	}
}

// badBytes turns each \xNN written in s (never valid JSON) into that byte,
// so that a test can write invalid UTF-8 inside JSON in a raw string.
func badBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestInvalidUTF8 sends bytes that are not UTF-8 inside events. Events that
// pass keep their bytes exactly; nothing panics (no 500, the stream ends
// normally); every event the module writes itself (converted chunks, the
// final meta event, the run-once answer) is valid JSON and valid UTF-8,
// whatever bytes the upstream put in text, tool names or meta.
func TestInvalidUTF8(t *testing.T) {
	sseEvents := []string{
		sseChunk(badBytes(`{"role":"assistant","content":"caf\xc3"}`)),
		sseChunk(badBytes(`{"content":"\xff\xfe bad \xe2\x82 and \xed\xa0\x80 surrogate"}`)),
		sseChunk(badBytes(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"se\xffarch","arguments":"\xff"}}]}`)),
		badBytes(`data: {"meta":{"tools_used":["t\xc0\xaf"],"note":"\xff"}}`) + "\n\n",
		"data: not json \xff\n\n",
		": comment \xff\n\n",
		"event: x\xff\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\ud800\\udc00\\udfff\"}}]}\n\n",
	}
	sseBody := strings.Join(sseEvents, "") + "data: [DONE]\n\n"
	dataStream := "f:{\"messageId\":\"m\xff\"}\n" +
		"0:\"a\xffb\"\n" +
		"0:\"\xe2\x82\"\n" +
		"0:\"\\ud800 lone\"\n" +
		"g:\"think \xc3\"\n" +
		"9:{\"toolCallId\":\"c1\",\"toolName\":\"t\xff\",\"args\":{}}\n" +
		"2:[{\"type\":\"reasoning\",\"thinking\":\"x\xff\",\"activeIntent\":\"\xfe\"},\"\xff\"]\n" +
		"8:[{\"type\":\"token_usage\",\"tokensIn\":1,\"tokensOut\":2,\"costUsd\":0.1}]\n" +
		"3:\"err \xff\"\n" +
		"\xff\xfe:garbage\n" +
		"d:{\"finishReason\":\"stop\\u0000\xff\"}\n"
	uiStream := "data: {\"type\":\"start\",\"messageId\":\"m\xff\"}\n\n" +
		"data: {\"type\":\"text-delta\",\"id\":\"1\",\"delta\":\"h\xffi\"}\n\n" +
		"data: {\"type\":\"reasoning-delta\",\"id\":\"2\",\"delta\":\"\xc3\"}\n\n" +
		"data: {\"type\":\"tool-input-start\",\"toolCallId\":\"c\",\"toolName\":\"t\xff\"}\n\n" +
		"data: {\"type\":\"data-x\",\"data\":[{\"type\":\"path_info\",\"tokensIn\":\"\xff\"}]}\n\n" +
		"data: {\"type\":\"error\",\"errorText\":\"\xff\"}\n\n" +
		"data: {\"type\":\"finish\",\"finishReason\":\"\xff\"}\n\n" +
		"data: [DONE]\n\n"

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/sse", "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sseBody)
		case "/data":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Vercel-AI-Data-Stream", "v1")
			io.WriteString(w, dataStream)
		case "/ui":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("X-Vercel-AI-UI-Message-Stream", "v1")
			io.WriteString(w, uiStream)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, badBytes(`{"id":"c\xff","choices":[{"index":0,"message":{"role":"assistant","content":"\xffhi\xc3","tool_calls":[{"id":"1","type":"function","function":{"name":"n\xff","arguments":"{}"}}]},"meta":{"tools_used":["x\xfe"]}}]}`))
		}
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	validJSON := func(t *testing.T, what string, b []byte) {
		t.Helper()
		if !json.Valid(b) || !utf8.Valid(b) {
			t.Errorf("%s is not valid UTF-8 JSON: %q", what, b)
		}
	}
	ownEvents := func(t *testing.T, body []byte, wantContent string) {
		t.Helper()
		evs := parseClientEvents(body)
		if len(evs) < 2 || string(evs[len(evs)-1].data) != "[DONE]" {
			t.Fatalf("stream does not end with [DONE]: %q", body)
		}
		for i, e := range evs[:len(evs)-1] {
			validJSON(t, fmt.Sprintf("event %d", i), e.data)
		}
		if c := streamContent(evs); !strings.Contains(c, wantContent) {
			t.Errorf("content %q, want it to contain %q", c, wantContent)
		}
	}

	t.Run("sse passes byte-identical", func(t *testing.T) {
		resp, body := fetch(t, base, "/sse", chatRequest)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		passed := strings.Join(append(append([]string{}, sseEvents[:3]...), sseEvents[4:]...), "")
		if !strings.HasPrefix(string(body), passed) {
			t.Fatalf("stream = %q\nwant it to start with the upstream's events byte-identical (the meta-only one withheld) %q", body, passed)
		}
		evs := parseClientEvents(body[len(passed):])
		if len(evs) != 2 || string(evs[1].data) != "[DONE]" {
			t.Fatalf("end of stream %q, want the final meta event and [DONE]", body[len(passed):])
		}
		validJSON(t, "final meta event", evs[0].data)
		var m struct {
			Meta struct {
				Tools []string `json:"tools_used"`
			} `json:"meta"`
		}
		_ = json.Unmarshal(evs[0].data, &m)
		if len(m.Meta.Tools) != 2 {
			t.Errorf("final meta %s, want both tool names (made valid UTF-8)", evs[0].data)
		}
	})
	t.Run("data stream converted", func(t *testing.T) {
		resp, body := fetch(t, base, "/data", chatRequest)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		ownEvents(t, body, "a\uFFFDb")
	})
	t.Run("ui stream converted", func(t *testing.T) {
		resp, body := fetch(t, base, "/ui", chatRequest)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		ownEvents(t, body, "h\uFFFDi")
	})
	t.Run("edge stream", func(t *testing.T) {
		resp, body := fetch(t, base, "/functions/v1/jarvis", `{"message":"hi"}`, "x-stream", "true")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		if !bytes.Contains(body, []byte(sseEvents[1])) {
			t.Errorf("edge stream %q lost the upstream's event bytes", body)
		}
	})
	for _, p := range []string{"/sse", "/data", "/ui", "/json"} {
		t.Run("run-once "+p, func(t *testing.T) {
			resp, body := fetch(t, base, p, runOnceChat)
			if resp.StatusCode != 200 && resp.StatusCode != http.StatusBadGateway {
				t.Fatalf("status %d: %q", resp.StatusCode, body)
			}
			validJSON(t, "run-once answer", body)
			if resp.StatusCode == 200 && len(jsonField(body, "content")) == 0 {
				t.Errorf("run-once answer without content: %s", body)
			}
		})
	}
	t.Run("json reply", func(t *testing.T) {
		resp, body := fetch(t, base, "/json", chatRequest)
		if resp.StatusCode != 200 || !json.Valid(body) {
			t.Fatalf("status %d: %q", resp.StatusCode, body)
		}
		if jsonField(body, "meta") == nil {
			t.Errorf("reply %q: the meta was not moved to the top", body)
		}
	})
}

// TestRunOnceUpstreamNeverEnds: a run-once reply whose upstream keeps
// sending, slowly, forever. Nothing goes to the client while the module
// collects; when the client gives up, the upstream request is canceled and
// none of the module's code is left running.
func TestRunOnceUpstreamNeverEnds(t *testing.T) {
	for _, tc := range []struct {
		name, path, body, contentType, dsHeader string
		first, unit                             string
	}{
		{"run-once endpoint sse", "/v1/run_once", `{"message":"hi"}`, "text/event-stream", "",
			sseChunk(`{"role":"assistant","content":""}`), sseChunk(`{"content":"la "}`)},
		{"run_once flag data stream", "/v1/chat/completions", runOnceChat, "text/plain", "v1",
			"f:{\"messageId\":\"m\"}\n", "0:\"la \"\n"},
		{"run_once flag json", "/v1/chat/completions", runOnceChat, "application/json", "",
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"`, "la "},
		{"edge endpoint ui stream", "/functions/v1/jarvis", `{"message":"hi"}`, "text/event-stream", "",
			"data: {\"type\":\"start\",\"messageId\":\"m\"}\n\n", "data: {\"type\":\"text-delta\",\"id\":\"1\",\"delta\":\"la \"}\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const beforeLeaving = 20 // units the upstream sends before the client leaves
			sending := make(chan struct{})
			type result struct {
				units    int
				canceled bool
			}
			done := make(chan result, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.ReadAll(r.Body)
				w.Header().Set("Content-Type", tc.contentType)
				if tc.dsHeader != "" {
					w.Header().Set("X-Vercel-AI-Data-Stream", tc.dsHeader)
				}
				w.WriteHeader(200)
				rc := http.NewResponseController(w)
				writeFlush(w, rc, tc.first)
				tick := time.NewTicker(2 * time.Millisecond)
				defer tick.Stop()
				guard := time.After(streamGuard)
				for n := 0; ; n++ {
					if n == beforeLeaving {
						close(sending)
					}
					select {
					case <-r.Context().Done():
						done <- result{n, true}
						return
					case <-guard:
						done <- result{n, false}
						return
					case <-tick.C:
					}
					if !writeFlush(w, rc, tc.unit) {
						// A write failing means the proxy closed the
						// connection; the context says why.
						<-r.Context().Done()
						done <- result{n, true}
						return
					}
				}
			}))
			defer up.Close()
			base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+tc.path, strings.NewReader(tc.body))
			must(t, err, "building the request")
			req.Header.Set("Content-Type", "application/json")
			answered := make(chan error, 1)
			go func() {
				resp, err := testClient.Do(req)
				if err == nil {
					resp.Body.Close()
					err = fmt.Errorf("the client got an answer (%d) from a reply that never ended", resp.StatusCode)
				}
				answered <- err
			}()
			waitOn(t, sending, "the upstream to be sending")
			if len(moduleStacks()) == 0 {
				t.Fatal("no goroutine runs the module's code during the request; moduleStacks cannot see it")
			}
			cancel()
			if err := waitOn(t, answered, "the client to give up"); !errors.Is(err, context.Canceled) {
				t.Errorf("client: %v, want context.Canceled", err)
			}
			res := waitOn(t, done, "the upstream to stop")
			if !res.canceled {
				t.Fatalf("the upstream request was not canceled after the client left (it sent %d units)", res.units)
			}
			waitNoModuleGoroutines(t)
		})
	}
}

// deepArray is n nested JSON arrays: [[[…]]].
func deepArray(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// deepObject is n nested JSON objects: {"a":{"a":…{}}}.
func deepObject(n int) string { return strings.Repeat(`{"a":`, n) + "{}" + strings.Repeat("}", n) }

// lastBody returns the raw body of the upstream's last request.
func (u *recordingUpstream) lastBody() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]byte(nil), u.body...)
}

// deepLimit is about as deep as a body within the default max_request_bytes
// and max_buffer_bytes (16 MiB) can nest arrays. A recursive validator
// (gjson.Valid) needs more than Go's 1 GB stack for 8 million levels and
// takes the whole process down with it; jsonscan.Valid does not recurse.
const deepLimit = 7_000_000

// TestRequestBodyDeepNesting: request bodies with a value nested millions
// deep (far past encoding/json's 10,000 limit), within max_request_bytes.
// They are forwarded (the nested value byte for byte), nothing crashes, and
// the flags at the top level are still removed and obeyed.
func TestRequestBodyDeepNesting(t *testing.T) {
	deep, deepObj := deepArray(deepLimit), deepObject(250_000)
	up := &recordingUpstream{response: `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"}}]}`}
	base := startEndpoints(t, `{"max_prompt_chars":20}`, up)
	msgs := `"messages":[{"role":"user","content":"Hi"}]`

	for _, tc := range []struct {
		name, path, body string
		want             string // the upstream's body exactly ("" = check the fragments only)
		fragments        []string
		absent           []string
		answer           string // the client's answer, compared as JSON
	}{
		{"no flags: byte-identical", "/v1/chat/completions", `{"model":"m",` + msgs + `,"deep":` + deep + `}`,
			`{"model":"m",` + msgs + `,"deep":` + deep + `}`, nil, nil, up.response},
		{"run_once removed and obeyed", "/v1/chat/completions", `{"model":"m","run_once":true,` + msgs + `,"deep":` + deep + `,"obj":` + deepObj + `}`,
			`{"model":"m",` + msgs + `,"deep":` + deep + `,"obj":` + deepObj + `}`, nil, nil, `{"content":"Hello"}`},
		{"flags after the deep value", "/v1/chat/completions", `{"model":"m",` + msgs + `,"deep":` + deep + `,"return_final_only":true,"enable_structured_output":false}`,
			`{"model":"m",` + msgs + `,"deep":` + deep + `}`, nil, nil, `{"content":"Hello"}`},
		{"deep inside messages, trimmed and structured", "/v1/chat/completions",
			`{"model":"m","enable_structured_output":true,"messages":[{"role":"user","content":"an old message of some length"},{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"x","x":` + deep + `}]}]}`,
			"", []string{`{"type":"x","x":` + deep + `}`, `"response_format"`}, []string{"enable_structured_output", "an old message"}, ""},
		{"not an object: untouched", "/v1/chat/completions", deep, deep, nil, nil, up.response},
		{"run-once endpoint", "/v1/run_once", `{"message":"hi","deep":` + deep + `}`,
			"", []string{`"deep":` + deep, `"messages":[{"role":"user","content":"hi"}]`}, []string{`"message":`}, `{"content":"Hello"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			resp, body := fetch(t, base, tc.path, tc.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			got := up.lastBody()
			if tc.want != "" && string(got) != tc.want {
				t.Errorf("upstream got %d bytes %.200q…, want %d bytes %.200q…", len(got), got, len(tc.want), tc.want)
			}
			for _, f := range tc.fragments {
				if !bytes.Contains(got, []byte(f)) {
					t.Errorf("upstream body lacks %.80q…", f)
				}
			}
			for _, f := range tc.absent {
				if bytes.Contains(got, []byte(f)) {
					t.Errorf("upstream body still has %q", f)
				}
			}
			if tc.answer != "" {
				if eq, err := jsonEqualBytes(body, []byte(tc.answer)); err != nil || !eq {
					t.Errorf("answer %s, want %s", body, tc.answer)
				}
			}
		})
	}
	waitNoModuleGoroutines(t)
}

// TestReplyDeepNesting: replies nested millions deep. A JSON reply is still
// rewritten (its choice meta moves to the top, the deep value kept byte for
// byte); an SSE event with such data passes byte-identical; nothing
// crashes.
func TestReplyDeepNesting(t *testing.T) {
	deep := deepArray(deepLimit)
	jsonReply := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"meta":{"tools_used":["search"]}}],"x":` + deep + `}`
	sseEvent := `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hi","x":` + deep + `}}]}` + "\n\n"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, sseEvent+sseChunk(`{"tool_calls":[{"index":0,"function":{"name":"search"}}]}`)+"data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, jsonReply)
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	resp, body := fetch(t, base, "/json", chatRequest)
	want := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}],"x":` + deep + `,"meta":{"tools_used":["search"]}}`
	if resp.StatusCode != 200 || string(body) != want {
		t.Errorf("JSON reply: status %d, %d bytes %.200q…; want %d bytes %.200q…", resp.StatusCode, len(body), body, len(want), want)
	}
	resp, body = fetch(t, base, "/sse", chatRequest)
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), sseEvent) {
		t.Fatalf("SSE reply: status %d, %.200q…; want the deep event byte-identical first", resp.StatusCode, body)
	}
	evs := parseClientEvents(body[len(sseEvent):])
	if len(evs) != 3 || string(jsonField(evs[1].data, "meta")) != `{"tools_used":["search"]}` {
		t.Errorf("end of the SSE reply %q", body[len(sseEvent):])
	}
	resp, body = fetch(t, base, "/json", runOnceChat)
	if resp.StatusCode != 200 {
		t.Fatalf("run-once: status %d", resp.StatusCode)
	}
	if eq, err := jsonEqualBytes(body, []byte(`{"content":"Hi","meta":{"tools_used":["search"]}}`)); err != nil || !eq {
		t.Errorf("run-once answer %s", body)
	}
}

// TestRequestBodyDuplicateKeys: a key repeated at the top level of a body.
// Every copy of a flag is removed from what goes upstream, and the flag is
// decided by its last value, as JavaScript's JSON.parse (the edge function)
// reads it; on the endpoints the same holds for the edge function's own
// keys (message, session_id, …).
func TestRequestBodyDuplicateKeys(t *testing.T) {
	up := &recordingUpstream{response: `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"}}]}`}
	base := startEndpoints(t, ``, up)
	msgs := `"messages":[{"role":"user","content":"Hi"}]`
	runOnceAnswer := `{"content":"Hello"}`

	for _, tc := range []struct {
		name, path, body string
		hdr              []string
		answer           string // JSON answer; "" = an SSE stream
		absent           []string
		upstream         map[string]string // top-level keys of the upstream body, as raw JSON
	}{
		{"run_once false then true", "/v1/chat/completions", `{"model":"m","run_once":false,` + msgs + `,"run_once":true}`, nil,
			runOnceAnswer, []string{"run_once"}, nil},
		{"run_once true then false", "/v1/chat/completions", `{"model":"m","run_once":true,` + msgs + `,"run_once":false}`, nil,
			up.response, []string{"run_once"}, nil},
		{"three copies", "/v1/chat/completions", `{"run_once":true,"model":"m","run_once":null,` + msgs + `,"return_final_only":false,"run_once":true,"return_final_only":true}`, nil,
			runOnceAnswer, []string{"run_once", "return_final_only"}, nil},
		{"structured true then false", "/v1/chat/completions", `{"model":"m","enable_structured_output":true,` + msgs + `,"enable_structured_output":false}`, nil,
			up.response, []string{"enable_structured_output", "response_format"}, nil},
		{"structured false then true", "/v1/chat/completions", `{"model":"m","enable_structured_output":false,` + msgs + `,"enable_structured_output":true}`, nil,
			up.response, []string{"enable_structured_output"}, map[string]string{"model": `"m"`}},
		{"edge x-stream, run_once true then false", "/functions/v1/jarvis", `{"message":"hi","run_once":true,"run_once":false}`, []string{"x-stream", "true"},
			"", []string{"run_once"}, map[string]string{"stream": "true"}},
		{"edge x-stream, run_once false then true", "/functions/v1/jarvis", `{"message":"hi","run_once":false,"run_once":true}`, []string{"x-stream", "true"},
			runOnceAnswer, []string{"run_once"}, map[string]string{"stream": "false"}},
		{"endpoint, message and session_id twice", "/v1/run_once", `{"message":"first","session_id":"s1","message":"second","session_id":"s2","task":"a","task":"b"}`, nil,
			runOnceAnswer, []string{`"message"`, `"session_id"`, `"task"`, "first"},
			map[string]string{"messages": `[{"role":"user","content":"second"}]`, "user": `"s2"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up.reset()
			resp, body := fetch(t, base, tc.path, tc.body, tc.hdr...)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if tc.answer == "" {
				evs := parseClientEvents(body)
				if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || streamContent(evs) != "Hello" {
					t.Errorf("answer %s %q, want a stream of \"Hello\"", resp.Header.Get("Content-Type"), body)
				}
			} else if eq, err := jsonEqualBytes(body, []byte(tc.answer)); err != nil || !eq {
				t.Errorf("answer %s, want %s", body, tc.answer)
			}
			got := up.lastBody()
			for _, f := range tc.absent {
				if bytes.Contains(got, []byte(f)) {
					t.Errorf("upstream body %s still has %s", got, f)
				}
			}
			if strings.Contains(tc.name, "structured false then true") && !bytes.Contains(got, []byte(`"response_format"`)) {
				t.Errorf("upstream body %s: structured mode (last value true) was not applied", got)
			}
			for k, want := range tc.upstream {
				if v := jsonField(got, k); string(v) != want {
					t.Errorf("upstream %s = %s, want %s (body %s)", k, v, want, got)
				}
			}
		})
	}
}
