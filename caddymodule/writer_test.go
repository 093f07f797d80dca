package caddymodule

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// Handler unit tests in the style of Caddy's encode/sse_test.go: the module
// is provisioned from JSON, next is a caddyhttp.HandlerFunc playing the
// upstream, and the downstream is an httptest.ResponseRecorder wrapped to
// record what reached it. No Caddy server runs.

// newUnitHandler provisions and validates a handler from its JSON config.
func newUnitHandler(t *testing.T, cfg string) *Handler {
	h, _ := newObservedHandler(t, cfg)
	return h
}

// newObservedHandler is newUnitHandler with the module's log lines (debug
// and up) kept for the test to inspect.
func newObservedHandler(t *testing.T, cfg string) (*Handler, *observer.ObservedLogs) {
	t.Helper()
	if cfg == "" {
		cfg = "{}"
	}
	h := new(Handler)
	must(t, json.Unmarshal([]byte(cfg), h), "config %s", cfg)
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	t.Cleanup(cancel)
	must(t, h.Provision(ctx), "Provision")
	must(t, h.Validate(), "Validate")
	core, logs := observer.New(zapcore.DebugLevel)
	h.core.Logger = zap.New(core)
	return h, logs
}

// warned reports whether a warning was logged whose message or fields
// mention what (a fallback reason, for one).
func warned(logs *observer.ObservedLogs, what string) bool {
	for _, e := range logs.All() {
		line, _ := json.Marshal(map[string]any{"msg": e.Message, "fields": e.ContextMap()})
		if e.Level == zapcore.WarnLevel && strings.Contains(string(line), what) {
			return true
		}
	}
	return false
}

// recWriter is the downstream: an httptest.ResponseRecorder that also
// records every status passed to WriteHeader (1xx included, which the
// recorder alone would take as final), each Write, and each flush with the
// body length at that moment.
type recWriter struct {
	*httptest.ResponseRecorder
	statuses  []int
	early     []http.Header // header snapshot of each 1xx
	writes    [][]byte
	flushedAt []int
	failWith  error // when set, Write fails with it
}

func newRecWriter() *recWriter { return &recWriter{ResponseRecorder: httptest.NewRecorder()} }

func (w *recWriter) WriteHeader(code int) {
	w.statuses = append(w.statuses, code)
	if code >= 100 && code < 200 {
		w.early = append(w.early, w.Header().Clone())
		return
	}
	w.ResponseRecorder.WriteHeader(code)
}

func (w *recWriter) Write(p []byte) (int, error) {
	if w.failWith != nil {
		return 0, w.failWith
	}
	w.writes = append(w.writes, append([]byte(nil), p...))
	return w.ResponseRecorder.Write(p)
}

// FlushError is what http.NewResponseController finds first.
func (w *recWriter) FlushError() error {
	w.flushedAt = append(w.flushedAt, w.Body.Len())
	w.ResponseRecorder.Flush()
	return nil
}

// finalStatuses are the statuses that reached the recorder, 1xx excluded.
func (w *recWriter) finalStatuses() []int {
	var out []int
	for _, s := range w.statuses {
		if s >= 200 {
			out = append(out, s)
		}
	}
	return out
}

// unitRequest builds a request with Caddy's replacer and vars in its context.
func unitRequest(method, target string, body io.Reader) *http.Request {
	r := httptest.NewRequest(method, target, body)
	return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), nil, &caddyhttp.Server{})
}

func jsonPost(body string) *http.Request {
	r := unitRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// upstreamSaw is what next (the fake upstream) saw of the request.
type upstreamSaw struct {
	called  bool
	w       http.ResponseWriter
	body    []byte
	header  http.Header
	length  int64
	readErr error
}

// fakeUpstream returns a next that records the request, then replies with
// reply(w).
func fakeUpstream(saw *upstreamSaw, reply func(w http.ResponseWriter) error) caddyhttp.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		saw.called = true
		saw.w = w
		saw.header = r.Header.Clone()
		saw.length = r.ContentLength
		if r.Body != nil {
			saw.body, saw.readErr = io.ReadAll(r.Body)
		}
		if reply == nil {
			return nil
		}
		return reply(w)
	}
}

// jsonReply writes a JSON reply in the given pieces, with extra headers.
func jsonReply(status int, hdr map[string]string, pieces ...string) func(w http.ResponseWriter) error {
	return func(w http.ResponseWriter) error {
		w.Header().Set("Content-Type", "application/json")
		total := 0
		for _, p := range pieces {
			total += len(p)
		}
		w.Header().Set("Content-Length", strconv.Itoa(total))
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		for _, p := range pieces {
			if p == "" {
				continue
			}
			if _, err := w.Write([]byte(p)); err != nil {
				return err
			}
		}
		return nil
	}
}

// A reply whose meta sits under choices[0]: the module must move it to the
// top level, so any change of the body shows that the rewrite ran.
const (
	replyChoiceMeta = `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"meta":{"tools_used":["search"]}}]}`
	replyMoved      = `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}],"meta":{"tools_used":["search"]}}`
	replyPlain      = `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}`
	chatRequest     = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}`
)

func assertJSONBody(t *testing.T, got []byte, want string) {
	t.Helper()
	if eq, err := jsonEqualBytes(got, []byte(want)); err != nil || !eq {
		t.Errorf("body = %s\nwant  %s (%v)", got, want, err)
	}
}

func TestGETPassesWithoutWrapper(t *testing.T) {
	h := newUnitHandler(t, "")
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut} {
		t.Run(method, func(t *testing.T) {
			req := unitRequest(method, "/v1/chat/completions", strings.NewReader(`{"run_once":true}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Encoding", "gzip")
			wantBody := replyChoiceMeta
			if method == http.MethodHead {
				wantBody = ""
			}
			rec := newRecWriter()
			var saw upstreamSaw
			err := h.ServeHTTP(rec, req, fakeUpstream(&saw, jsonReply(200, nil, wantBody)))
			must(t, err, "ServeHTTP")
			if saw.w != http.ResponseWriter(rec) {
				t.Errorf("next got a %T, want the downstream writer itself", saw.w)
			}
			if string(saw.body) != `{"run_once":true}` {
				t.Errorf("next read body %q, want it untouched", saw.body)
			}
			if saw.header.Get("Accept-Encoding") != "gzip" {
				t.Errorf("Accept-Encoding = %q, want it kept on %s", saw.header.Get("Accept-Encoding"), method)
			}
			if rec.Body.String() != wantBody {
				t.Errorf("body = %q, want it untouched %q", rec.Body.String(), wantBody)
			}
		})
	}
}

// TestRepliesThatPassUntouched: statuses and encodings the module must not
// rewrite, even with a JSON Content-Type and a body it would rewrite; and
// 200 JSON replies that are empty, cut off, not an object, or have nothing
// to change (forwarded without being validated).
func TestRepliesThatPassUntouched(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(replyChoiceMeta))
	_ = zw.Close()

	for _, tc := range []struct {
		name   string
		status int
		hdr    map[string]string
		body   string
	}{
		{"204", http.StatusNoContent, map[string]string{"ETag": `"e1"`}, ""},
		{"304", http.StatusNotModified, map[string]string{"ETag": `"e1"`}, ""},
		{"499 client gone", 499, nil, ""},
		{"400", http.StatusBadRequest, nil, `{"error":{"message":"bad"},"meta":{"x":1},"choices":[{"meta":{"tools_used":["a"]}}]}`},
		{"500 with choice meta", http.StatusInternalServerError, nil, replyChoiceMeta},
		{"206", http.StatusPartialContent, map[string]string{"Content-Range": "bytes 0-10/100"}, replyChoiceMeta},
		{"gzip", http.StatusOK, map[string]string{"Content-Encoding": "gzip", "ETag": `"e1"`}, gz.String()},
		{"br", http.StatusOK, map[string]string{"Content-Encoding": "br"}, "\x1b\x00\x00not really brotli"},
		{"200 empty", http.StatusOK, map[string]string{"ETag": `"e1"`}, ""},
		{"200 cut off", http.StatusOK, map[string]string{"ETag": `"e1"`}, `{"choices":[{"meta":{"tools_used":["a"]},"message":{"content":"cut`},
		{"200 cut off, no keys", http.StatusOK, nil, `{"choices":[{"message":{"content":"cut`},
		{"200 array", http.StatusOK, nil, `[{"meta":{"a":1},"choices":[{"meta":{"b":2}}]}]`},
		{"200 nothing to change", http.StatusOK, map[string]string{"ETag": `"e1"`}, replyPlain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newUnitHandler(t, "")
			rec := newRecWriter()
			var saw upstreamSaw
			next := fakeUpstream(&saw, func(w http.ResponseWriter) error {
				if tc.status == 499 {
					w.WriteHeader(499) // what reverse_proxy writes when the client left
					return nil
				}
				return jsonReply(tc.status, tc.hdr, tc.body)(w)
			})
			must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
			if got := rec.finalStatuses(); len(got) != 1 || got[0] != tc.status {
				t.Errorf("statuses = %v, want [%d]", got, tc.status)
			}
			if rec.Body.String() != tc.body {
				t.Errorf("body = %q\nwant byte-identical %q", rec.Body.String(), tc.body)
			}
			for k, v := range tc.hdr {
				if got := rec.Result().Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q kept", k, got, v)
				}
			}
			if tc.status != 499 {
				if got := rec.Result().Header.Get("Content-Length"); got != strconv.Itoa(len(tc.body)) {
					t.Errorf("Content-Length = %q, want the upstream's %d", got, len(tc.body))
				}
			}
		})
	}
}

// TestInformationalThenFinal: a 103 goes through at once with its own
// headers, and the final 200 is still rewritten.
func TestInformationalThenFinal(t *testing.T) {
	h := newUnitHandler(t, "")
	rec := newRecWriter()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		if len(rec.statuses) != 1 || rec.statuses[0] != 103 {
			t.Errorf("after WriteHeader(103) the downstream saw %v, want [103] at once", rec.statuses)
		}
		w.Header().Del("Link")
		return jsonReply(200, nil, replyChoiceMeta)(w)
	})
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
	if want := []int{103, 200}; !equalInts(rec.statuses, want) {
		t.Fatalf("statuses = %v, want %v", rec.statuses, want)
	}
	if rec.early[0].Get("Link") == "" {
		t.Errorf("the 103 lost its Link header")
	}
	assertJSONBody(t, rec.Body.Bytes(), replyMoved)
	if got := rec.Result().Header.Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
		t.Errorf("Content-Length = %q, body is %d bytes", got, rec.Body.Len())
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGzipReplyByteIdentical: a compressed reply is forwarded as it came,
// byte for byte, with its headers.
func TestGzipReplyByteIdentical(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte("data: " + replyChoiceMeta + "\n\n"))
	_ = zw.Close()
	for _, ct := range []string{"application/json", "text/event-stream"} {
		t.Run(ct, func(t *testing.T) {
			h := newUnitHandler(t, "")
			rec := newRecWriter()
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", ct)
				w.Header().Set("Content-Encoding", "gzip")
				w.WriteHeader(200)
				b := gz.Bytes()
				for len(b) > 0 { // in small pieces, as reverse_proxy may hand them
					n := min(7, len(b))
					if _, err := w.Write(b[:n]); err != nil {
						return err
					}
					b = b[n:]
				}
				return nil
			})
			must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
			if !bytes.Equal(rec.Body.Bytes(), gz.Bytes()) {
				t.Errorf("gzip body changed: %d bytes, want %d identical", rec.Body.Len(), gz.Len())
			}
			if rec.Result().Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("Content-Encoding lost")
			}
		})
	}
}

// TestAcceptEncodingRemoved: the upstream of a POST reads identity bodies.
func TestAcceptEncodingRemoved(t *testing.T) {
	h := newUnitHandler(t, "")
	for _, path := range []string{"/v1/chat/completions", "/v1/run_once", "/functions/v1/jarvis", "/other"} {
		t.Run(path, func(t *testing.T) {
			body := chatRequest
			if path != "/v1/chat/completions" && path != "/other" {
				body = `{"message":"hi"}`
			}
			req := unitRequest(http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("Accept-Encoding", "gzip, br, zstd")
			var saw upstreamSaw
			must(t, h.ServeHTTP(newRecWriter(), req, fakeUpstream(&saw, jsonReply(200, nil, replyPlain))), "ServeHTTP")
			if !saw.called {
				t.Fatal("upstream not called")
			}
			if v, ok := saw.header["Accept-Encoding"]; ok {
				t.Errorf("upstream got Accept-Encoding %q, want none", v)
			}
		})
	}
	t.Run("not JSON", func(t *testing.T) {
		req := unitRequest(http.MethodPost, "/upload", strings.NewReader("a,b\n"))
		req.Header.Set("Content-Type", "text/csv")
		req.Header.Set("Accept-Encoding", "gzip")
		var saw upstreamSaw
		must(t, h.ServeHTTP(newRecWriter(), req, fakeUpstream(&saw, nil)), "ServeHTTP")
		if _, ok := saw.header["Accept-Encoding"]; ok {
			t.Errorf("upstream got Accept-Encoding on a POST the module handles")
		}
	})
}

// TestRequestFlagsRemoved: the flags go, every other byte stays, and
// Content-Length follows.
func TestRequestFlagsRemoved(t *testing.T) {
	h := newUnitHandler(t, "")
	in := `{"model":"gpt-4o-mini","run_once":false,"messages":[{"role":"user","content":"Hi \u00e9"}],"return_final_only":false,"enable_structured_output":false,"temperature":0.70,"x":{"run_once":true}}`
	req := jsonPost(in)
	var saw upstreamSaw
	must(t, h.ServeHTTP(newRecWriter(), req, fakeUpstream(&saw, jsonReply(200, nil, replyPlain))), "ServeHTTP")
	want := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi \u00e9"}],"temperature":0.70,"x":{"run_once":true}}`
	if eq, err := jsonEqualBytes(saw.body, []byte(want)); err != nil || !eq {
		t.Errorf("upstream body = %s\nwant %s", saw.body, want)
	}
	for _, k := range []string{`"run_once":false`, "return_final_only", "enable_structured_output"} {
		if bytes.Contains(saw.body, []byte(k)) {
			t.Errorf("upstream body still has %s: %s", k, saw.body)
		}
	}
	// Values are kept exactly as written, not re-encoded.
	for _, k := range []string{`0.70`, `\u00e9`, `"x":{"run_once":true}`} {
		if !bytes.Contains(saw.body, []byte(k)) {
			t.Errorf("upstream body lost %s: %s", k, saw.body)
		}
	}
	if saw.length != int64(len(saw.body)) {
		t.Errorf("ContentLength = %d, body is %d bytes", saw.length, len(saw.body))
	}
	if got := saw.header.Get("Content-Length"); got != strconv.Itoa(len(saw.body)) {
		t.Errorf("Content-Length header = %q, body is %d bytes", got, len(saw.body))
	}
}

// TestRequestUnchangedByteIdentical: a body with nothing to change reaches
// the upstream as it was sent, spacing included.
func TestRequestUnchangedByteIdentical(t *testing.T) {
	h := newUnitHandler(t, "")
	in := "{ \"model\" : \"gpt-4o-mini\",\n  \"messages\": [ {\"role\":\"user\",\"content\":\"Hello\"} ] ,\"n\":1.0 }"
	req := jsonPost(in)
	var saw upstreamSaw
	must(t, h.ServeHTTP(newRecWriter(), req, fakeUpstream(&saw, jsonReply(200, nil, replyPlain))), "ServeHTTP")
	if string(saw.body) != in {
		t.Errorf("upstream body = %q\nwant byte-identical %q", saw.body, in)
	}
}

// TestLargeRequestForwardedWhole: a body over max_request_bytes reaches the
// upstream whole and uninspected (its flags stay), with a known length or
// chunked and read in small pieces; its reply is still rewritten.
func TestLargeRequestForwardedWhole(t *testing.T) {
	h, logs := newObservedHandler(t, `{"max_request_bytes":64}`)
	in := `{"model":"gpt-4o-mini","run_once":true,"messages":[{"role":"user","content":"` + strings.Repeat("0123456789", 50) + `"}]}`
	for _, tc := range []struct {
		name    string
		chunked bool
	}{{"known length", false}, {"chunked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			req := jsonPost("")
			if tc.chunked {
				req.Body = io.NopCloser(iotest.OneByteReader(strings.NewReader(in)))
				req.ContentLength = -1
			} else {
				req.Body = io.NopCloser(strings.NewReader(in))
				req.ContentLength = int64(len(in))
			}
			rec := newRecWriter()
			var saw upstreamSaw
			must(t, h.ServeHTTP(rec, req, fakeUpstream(&saw, jsonReply(200, nil, replyChoiceMeta))), "ServeHTTP")
			if saw.readErr != nil {
				t.Fatalf("upstream read: %v", saw.readErr)
			}
			if string(saw.body) != in {
				t.Errorf("upstream body (%d bytes) differs from the %d bytes sent", len(saw.body), len(in))
			}
			// Uninspected: run_once was not seen, so the reply is the
			// ordinary rewritten JSON, not a run-once answer.
			assertJSONBody(t, rec.Body.Bytes(), replyMoved)
			if !warned(logs, "request_too_large") {
				t.Errorf("no warning logged for the uninspected body")
			}
			logs.TakeAll()
		})
	}
}

// TestNonJSONRequestForwarded: a POST that is not JSON reaches the upstream
// untouched; its reply is still rewritten.
func TestNonJSONRequestForwarded(t *testing.T) {
	h := newUnitHandler(t, "")
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		t.Run(ct, func(t *testing.T) {
			in := `{"model":"m","run_once":true,"enable_structured_output":true,"messages":[]}`
			req := jsonPost(in)
			req.Header.Set("Content-Type", ct)
			rec := newRecWriter()
			var saw upstreamSaw
			must(t, h.ServeHTTP(rec, req, fakeUpstream(&saw, jsonReply(200, nil, replyChoiceMeta))), "ServeHTTP")
			if string(saw.body) != in {
				t.Errorf("upstream body = %q, want it untouched", saw.body)
			}
			assertJSONBody(t, rec.Body.Bytes(), replyMoved)
		})
	}
	t.Run("JSON array body", func(t *testing.T) {
		in := `[{"run_once":true}]`
		rec := newRecWriter()
		var saw upstreamSaw
		must(t, h.ServeHTTP(rec, jsonPost(in), fakeUpstream(&saw, jsonReply(200, nil, replyChoiceMeta))), "ServeHTTP")
		if string(saw.body) != in {
			t.Errorf("upstream body = %q, want it untouched", saw.body)
		}
		assertJSONBody(t, rec.Body.Bytes(), replyMoved)
	})
}

// TestFlushBeforeWrite: reverse_proxy may flush before any body. For a JSON
// reply that must neither fail nor commit the status early; for an event
// stream it sends the headers (the SSE handshake).
func TestFlushBeforeWrite(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		h := newUnitHandler(t, "")
		rec := newRecWriter()
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			rc := http.NewResponseController(w)
			if err := rc.Flush(); err != nil {
				t.Errorf("flush before WriteHeader: %v", err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(replyChoiceMeta)))
			w.WriteHeader(200)
			if err := rc.Flush(); err != nil {
				t.Errorf("flush after WriteHeader: %v", err)
			}
			if len(rec.statuses) != 0 || len(rec.flushedAt) != 0 {
				t.Errorf("status %v / flushes %v reached the client before the body was read", rec.statuses, rec.flushedAt)
			}
			_, err := w.Write([]byte(replyChoiceMeta[:20]))
			if err != nil {
				return err
			}
			if err := rc.Flush(); err != nil {
				t.Errorf("flush mid-body: %v", err)
			}
			_, err = w.Write([]byte(replyChoiceMeta[20:]))
			return err
		})
		must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
		if got := rec.finalStatuses(); !equalInts(got, []int{200}) {
			t.Errorf("statuses = %v", got)
		}
		assertJSONBody(t, rec.Body.Bytes(), replyMoved)
		if got := rec.Result().Header.Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
			t.Errorf("Content-Length = %q, body is %d bytes", got, rec.Body.Len())
		}
	})
	t.Run("event stream", func(t *testing.T) {
		h := newUnitHandler(t, `{"convert_streams":false}`)
		rec := newRecWriter()
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("flush: %v", err)
			}
			if !equalInts(rec.statuses, []int{200}) || len(rec.flushedAt) == 0 || !rec.Flushed {
				t.Errorf("headers not flushed before the first event: statuses %v flushes %v", rec.statuses, rec.flushedAt)
			}
			_, err := w.Write([]byte("data: {\"choices\":[]}\n\ndata: [DONE]\n\n"))
			return err
		})
		must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
		if rec.Body.String() != "data: {\"choices\":[]}\n\ndata: [DONE]\n\n" {
			t.Errorf("body = %q", rec.Body.String())
		}
	})
}

// readerOnly hides WriterTo, so io.Copy uses the writer's ReadFrom.
type readerOnly struct{ io.Reader }

// TestReadFromRewrites: a body copied in with io.Copy (ReadFrom) goes
// through the rewrite like one written with Write.
func TestReadFromRewrites(t *testing.T) {
	h := newUnitHandler(t, "")
	rec := newRecWriter()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		if _, ok := w.(io.ReaderFrom); !ok {
			t.Errorf("the module's writer has no ReadFrom")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		n, err := io.Copy(w, readerOnly{iotest.HalfReader(strings.NewReader(replyChoiceMeta))})
		if n != int64(len(replyChoiceMeta)) {
			t.Errorf("io.Copy consumed %d bytes, want %d", n, len(replyChoiceMeta))
		}
		return err
	})
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
	assertJSONBody(t, rec.Body.Bytes(), replyMoved)

	// The same through an event stream: the final meta event is added.
	rec = newRecWriter()
	stream := "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"search\",\"arguments\":\"\"}}]}}]}\n\ndata: [DONE]\n\n"
	h = newUnitHandler(t, `{"convert_streams":false}`)
	next = func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, err := w.(io.ReaderFrom).ReadFrom(iotest.OneByteReader(strings.NewReader(stream)))
		return err
	}
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
	if !strings.Contains(rec.Body.String(), `"meta":{"tools_used":["search"]}`) || !strings.HasSuffix(rec.Body.String(), "data: [DONE]\n\n") {
		t.Errorf("stream through ReadFrom not rewritten:\n%s", rec.Body.String())
	}
}

// TestJSONOverBufferLimitUntouched: a JSON reply larger than
// max_buffer_bytes passes byte-identical with its own headers.
func TestJSONOverBufferLimitUntouched(t *testing.T) {
	h, logs := newObservedHandler(t, `{"max_buffer_bytes":64}`)
	body := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("x", 200) + `"},"meta":{"tools_used":["search"]}}]}`
	rec := newRecWriter()
	pieces := []string{body[:30], body[30:90], body[90:]}
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), fakeUpstream(new(upstreamSaw), jsonReply(200, map[string]string{"ETag": `"v1"`}, pieces...))), "ServeHTTP")
	if rec.Body.String() != body {
		t.Errorf("body = %q\nwant byte-identical %q", rec.Body.String(), body)
	}
	hdr := rec.Result().Header
	if hdr.Get("Content-Length") != strconv.Itoa(len(body)) || hdr.Get("ETag") != `"v1"` {
		t.Errorf("headers changed: Content-Length %q ETag %q", hdr.Get("Content-Length"), hdr.Get("ETag"))
	}
	if !warned(logs, "reply_too_large") {
		t.Errorf("no warning logged for the reply passed untouched")
	}
}

// TestETag: ETag, Content-MD5 and Digest dropped when the JSON body
// changed, kept when it did not.
func TestETag(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		keep       bool
	}{
		{"changed", replyChoiceMeta, false},
		{"unchanged", replyPlain, true},
		{"unchanged with meta", replyMoved, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newUnitHandler(t, "")
			rec := newRecWriter()
			sums := map[string]string{"ETag": `"v1"`, "Content-MD5": "Q2hlY2sgSW50ZWdyaXR5IQ==", "Digest": "sha-256=X48E9q"}
			must(t, h.ServeHTTP(rec, jsonPost(chatRequest), fakeUpstream(new(upstreamSaw), jsonReply(200, sums, tc.body))), "ServeHTTP")
			res := rec.Result()
			etag := res.Header.Get("ETag")
			for k, v := range sums {
				if got := res.Header.Get(k); tc.keep && got != v || !tc.keep && got != "" {
					t.Errorf("%s = %q, kept %v wanted", k, got, tc.keep)
				}
			}
			if tc.keep {
				if etag != `"v1"` {
					t.Errorf("ETag = %q, want it kept", etag)
				}
				if rec.Body.String() != tc.body {
					t.Errorf("body changed: %s", rec.Body.String())
				}
			} else {
				if etag != "" {
					t.Errorf("ETag = %q, want it dropped", etag)
				}
				assertJSONBody(t, rec.Body.Bytes(), replyMoved)
			}
			if got := rec.Result().Header.Get("Content-Length"); got != strconv.Itoa(rec.Body.Len()) {
				t.Errorf("Content-Length = %q, body is %d bytes", got, rec.Body.Len())
			}
		})
	}
}

// TestNextErrorWritesNothing: when next fails, the module writes nothing
// of its own and hands the error on, so Caddy's error handling answers.
func TestNextErrorWritesNothing(t *testing.T) {
	boom := caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp: connection refused"))
	for _, tc := range []struct {
		name  string
		cfg   string
		body  string
		reply func(w http.ResponseWriter)
	}{
		{"before any reply", "", chatRequest, func(w http.ResponseWriter) {}},
		{"json half read", "", chatRequest, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(replyChoiceMeta[:25]))
		}},
		{"run-once half read", "", `{"run_once":true,"messages":[]}`, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = w.Write([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newUnitHandler(t, tc.cfg)
			rec := newRecWriter()
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				tc.reply(w)
				return boom
			})
			err := h.ServeHTTP(rec, jsonPost(tc.body), next)
			if !errors.Is(err, boom) {
				t.Errorf("ServeHTTP returned %v, want next's error", err)
			}
			if len(rec.statuses) != 0 || len(rec.writes) != 0 {
				t.Errorf("the module wrote statuses %v and %d writes (%q) after next failed", rec.statuses, len(rec.writes), rec.Body.String())
			}
		})
	}
	t.Run("stream", func(t *testing.T) {
		// Events already forwarded stay; nothing is added after the error:
		// no final meta event, no [DONE].
		h := newUnitHandler(t, `{"convert_streams":false}`)
		rec := newRecWriter()
		event := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"search\"}}]}}]}\n\n"
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, _ = w.Write([]byte(event + "data: {\"choi"))
			return boom
		})
		err := h.ServeHTTP(rec, jsonPost(chatRequest), next)
		if !errors.Is(err, boom) {
			t.Errorf("ServeHTTP returned %v, want next's error", err)
		}
		if rec.Body.String() != event {
			t.Errorf("body = %q, want only the complete event %q", rec.Body.String(), event)
		}
	})
}

// TestDownstreamWriteErrorSticky: when the client's connection fails, Write
// reports it at once and ever after, so reverse_proxy stops reading the
// upstream.
func TestDownstreamWriteErrorSticky(t *testing.T) {
	h := newUnitHandler(t, `{"convert_streams":false}`)
	rec := newRecWriter()
	gone := errors.New("client gone")
	var errs []error
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		rec.failWith = gone
		for i := 0; i < 3; i++ {
			_, err := w.Write([]byte("data: {\"choices\":[]}\n\n"))
			errs = append(errs, err)
		}
		return nil
	})
	_ = h.ServeHTTP(rec, jsonPost(chatRequest), next)
	for i, err := range errs {
		if !errors.Is(err, gone) {
			t.Errorf("write %d returned %v, want the downstream error", i, err)
		}
	}
}

// TestPlainTextStreamNotHeld: a text/plain stream (the AI SDK's text
// stream, for one) that cannot be a data stream passes on as it arrives:
// each piece is at the client before the upstream writes the next.
func TestPlainTextStreamNotHeld(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		from   int // the client must have everything from this piece on
	}{
		{"text", []string{"Hello", " wor", "ld\n", "and more"}, 0},
		{"lower case start", []string{"he", "llo there"}, 0},
		{"BOM split", []string{"\xEF\xBB", "\xBFHello", " world"}, 1},
		{"blank lines first", []string{"\n\r\n", "Hi", "!"}, 1},
		{"could be a part", []string{"a", ": b", " c\n", "d"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newUnitHandler(t, "")
			rec := newRecWriter()
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(200)
				rc := http.NewResponseController(w)
				sent := ""
				for i, p := range tc.pieces {
					if _, err := w.Write([]byte(p)); err != nil {
						return err
					}
					if err := rc.Flush(); err != nil {
						return err
					}
					sent += p
					// Until a byte rules a data stream out (or the first
					// line ends), the module may hold the start.
					if i >= tc.from && rec.Body.String() != sent {
						t.Errorf("after piece %d the client has %q, want %q", i, rec.Body.String(), sent)
					}
				}
				return nil
			})
			must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
			if want := strings.Join(tc.pieces, ""); rec.Body.String() != want {
				t.Errorf("body = %q, want %q", rec.Body.String(), want)
			}
		})
	}
}

// TestLogsCarryNoContent: SPEC 8, the module's log lines (debug included)
// never carry prompt or reply text, nor header values.
func TestLogsCarryNoContent(t *testing.T) {
	const (
		secretPrompt = "my-secret-prompt"
		secretReply  = "the-secret-reply"
		secretToken  = "Bearer sk-secret-token"
		secretTool   = "secret_tool_name"
	)
	replies := map[string]func(w http.ResponseWriter) error{
		"json": jsonReply(200, nil, `{"choices":[{"index":0,"message":{"role":"assistant","content":"`+secretReply+`"}}],"meta":{"note":"`+secretReply+`"}}`),
		"sse": func(w http.ResponseWriter) error {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, err := io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\""+secretReply+"\"}}]}\n\n"+
				"data: {\"meta\":{\"x\":\""+secretReply+"\"}}\n\ndata: [DONE]\n\n")
			return err
		},
		"oversize event": func(w http.ResponseWriter) error {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			_, err := io.WriteString(w, "data: {\"content\":\""+strings.Repeat(secretReply, 20)+"\"}\n\n")
			return err
		},
		"upstream error": jsonReply(500, nil, `{"error":{"message":"`+secretReply+`"}}`),
	}
	for name, reply := range replies {
		for _, runOnce := range []bool{false, true} {
			t.Run(name+"/run_once="+strconv.FormatBool(runOnce), func(t *testing.T) {
				h, logs := newObservedHandler(t, `{"max_event_bytes":64,"max_request_bytes":100000}`)
				req := jsonPost(`{"model":"m","run_once":` + strconv.FormatBool(runOnce) + `,"messages":[{"role":"user","content":"` + secretPrompt + `"}]}`)
				req.Header.Set("Authorization", secretToken)
				req.Header.Set("X-Tool", secretTool)
				_ = h.ServeHTTP(newRecWriter(), req, fakeUpstream(new(upstreamSaw), reply))
				if logs.Len() == 0 {
					t.Fatalf("no log line at all; the test would prove nothing")
				}
				for _, e := range logs.All() {
					line, _ := json.Marshal(map[string]any{"msg": e.Message, "fields": e.ContextMap()})
					for _, secret := range []string{secretPrompt, secretReply, "sk-secret", secretTool} {
						if strings.Contains(string(line), secret) {
							t.Errorf("log line carries %q: %s", secret, line)
						}
					}
				}
			})
		}
	}
}

// TestStreamHeaders: an event stream loses Content-Length (and the
// validators of a body the module has changed) but keeps its own
// headers; no 500 and no buffering for an unparsable stream.
func TestStreamHeaders(t *testing.T) {
	h := newUnitHandler(t, `{"convert_streams":false}`)
	rec := newRecWriter()
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"s\"}}]}}]}\n\ndata: [DONE]\n\n"
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("ETag", `"s1"`)
		w.Header().Set("X-Request-Id", "r-1")
		w.WriteHeader(200)
		_, err := io.WriteString(w, body)
		return err
	})
	must(t, h.ServeHTTP(rec, jsonPost(chatRequest), next), "ServeHTTP")
	hdr := rec.Result().Header
	if v := hdr.Get("Content-Length"); v != "" {
		t.Errorf("Content-Length = %q kept on a rewritten stream", v)
	}
	if v := hdr.Get("ETag"); v != "" {
		t.Errorf("ETag = %q kept on a rewritten stream", v)
	}
	if hdr.Get("X-Request-Id") != "r-1" || hdr.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Errorf("upstream headers lost: %v", hdr)
	}
	if !strings.Contains(rec.Body.String(), `"meta":{"tools_used":["s"]}`) {
		t.Errorf("body = %q, want the final meta event", rec.Body.String())
	}
}
