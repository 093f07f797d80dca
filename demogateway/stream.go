package demogateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
	"unicode/utf8"
)

// streamer writes one reply's events, each flushed at once and separated by
// the pause, and stops as soon as the client has gone. It lives for one
// request and starts no goroutine: the pause is a timer waited on in the
// handler's own goroutine, next to the request's context.
type streamer struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	ctx    context.Context
	pause  time.Duration
	timer  *time.Timer
	events int
}

func newStreamer(w http.ResponseWriter, ctx context.Context, pause time.Duration) *streamer {
	return &streamer{w: w, rc: http.NewResponseController(w), ctx: ctx, pause: pause}
}

// stop releases the timer.
func (s *streamer) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// begin sends the status and headers at once, so that the client knows the
// reply is coming before the first pause.
func (s *streamer) begin(header map[string]string) error {
	for k, v := range header {
		s.w.Header().Set(k, v)
	}
	s.w.Header().Del("Content-Length")
	s.w.WriteHeader(http.StatusOK)
	return s.flush()
}

// send waits the pause (except before the first event), then writes b and
// flushes. It returns the context's error when the client has left.
func (s *streamer) send(b []byte) error {
	if s.events > 0 && s.pause > 0 {
		if s.timer == nil {
			s.timer = time.NewTimer(s.pause)
		} else {
			s.timer.Reset(s.pause)
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-s.timer.C:
		}
	}
	// Checked even without a pause, so that a stream with pause 0 also stops.
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	s.events++
	return s.flush()
}

// flush pushes what was written to the client. A writer that cannot flush
// (some test recorders) still gets the whole reply, only not event by event.
func (s *streamer) flush() error {
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// sendSSE sends v as one SSE event `data: JSON`.
func (s *streamer) sendSSE(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.sendSSERaw(b)
}

// sendSSERaw sends data as one SSE event; data must be a single line.
func (s *streamer) sendSSERaw(data []byte) error {
	b := make([]byte, 0, len(data)+8)
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return s.send(b)
}

// sendEvent sends v as one named SSE event, `event: NAME` then `data: JSON`,
// as the Responses and Anthropic Messages APIs frame every event.
func (s *streamer) sendEvent(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b := make([]byte, 0, len(name)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return s.send(b)
}

// sendDone ends an OpenAI-style or UI message stream.
func (s *streamer) sendDone() error {
	return s.sendSSERaw([]byte("[DONE]"))
}

// sseHeader is what streaming gateways send; no-cache and X-Accel-Buffering
// keep proxies from holding the events back.
func sseHeader() map[string]string {
	return map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
	}
}

// words splits s after each space, so that the pieces join back to s.
func words(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// fragments splits s into pieces of at most n bytes, never inside a UTF-8
// sequence (a piece is a JSON string on the wire and must stay valid UTF-8).
func fragments(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
