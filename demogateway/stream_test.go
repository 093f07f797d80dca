package demogateway

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const hustleBody = `{"model":"demo-hustle","messages":[{"role":"user","content":"hi"}]}`

func TestPauseBetweenEvents(t *testing.T) {
	const pause = 3 * time.Millisecond
	h := newHandler(t, pause)
	start := time.Now()
	w := serve(t, h, http.MethodPost, "/v1/chat/completions", hustleBody)
	took := time.Since(start)
	codes, _ := dataStreamParts(t, w.Body.String())
	if min := time.Duration(len(codes)-1) * pause; took < min {
		t.Errorf("%d events took %v, want at least %v", len(codes), took, min)
	}
	if !w.Flushed {
		t.Errorf("stream was not flushed")
	}
}

func TestDefaultPause(t *testing.T) {
	h := &Handler{}
	ctx, cancel := newTestContext(t)
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if h.pause != defaultPause {
		t.Errorf("pause = %v, want %v", h.pause, defaultPause)
	}
	neg := -defaultPause
	if err := (&Handler{Pause: durationPtr(neg)}).Validate(); err == nil {
		t.Errorf("negative pause accepted")
	}
}

// flushCounter is a ResponseWriter that cancels the request after a number
// of flushed events, standing in for a client that leaves mid-stream.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes, cancelAt int
	cancel            context.CancelFunc
}

func (f *flushCounter) Flush() {
	f.ResponseRecorder.Flush()
	f.flushes++
	if f.flushes == f.cancelAt {
		f.cancel()
	}
}

// A client that leaves stops the stream at once, in a pause or without one.
func TestCancelStopsStream(t *testing.T) {
	for _, pause := range []time.Duration{0, time.Hour} {
		for _, tc := range [][2]string{
			{"/v1/chat/completions", hustleBody},
			{"/v1/chat/completions", `{"model":"demo-ui"}`},
			{"/v1/chat/completions", `{"model":"demo-openai","stream":true}`},
			{"/v1/chat/completions", `{"model":"demo-structured","stream":true}`},
			{"/v1/responses", `{"model":"demo-openai","stream":true}`},
			{"/v1/messages", `{"model":"demo-openai","stream":true}`},
		} {
			path, body := tc[0], tc[1]
			h := newHandler(t, pause)
			ctx, cancel := context.WithCancel(t.Context())
			// Flush 1 is the header, then one per event. With a pause of an hour
			// the client leaves after the first event, during the first pause.
			cancelAt := 4
			if pause > 0 {
				cancelAt = 2
			}
			w := &flushCounter{ResponseRecorder: httptest.NewRecorder(), cancelAt: cancelAt, cancel: cancel}
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
			start := time.Now()
			if err := h.ServeHTTP(w, r, nextTeapot); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("pause %v, %s: took %v after cancel", pause, body, took)
			}
			if w.flushes != cancelAt {
				t.Errorf("pause %v, %s: %d flushes, want the stream to stop after %d", pause, body, w.flushes, cancelAt)
			}
			cancel()
		}
	}
}

// Over a real connection: the handler returns soon after the client closes.
func TestClientLeavesRealConnection(t *testing.T) {
	h := newHandler(t, 200*time.Millisecond) // the whole reply would take ~6s
	done := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = h.ServeHTTP(w, r, nextTeapot)
		done <- time.Now()
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(hustleBody))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "f:") {
		t.Fatalf("first line %q, %v", line, err)
	}
	left := time.Now()
	cancel()
	resp.Body.Close()

	select {
	case end := <-done:
		if d := end.Sub(left); d > time.Second {
			t.Errorf("handler ran %v after the client left", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("handler did not stop after the client left")
	}
}
