package demogateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func durationPtr(d time.Duration) *caddy.Duration {
	p := caddy.Duration(d)
	return &p
}

func newTestContext(t *testing.T) (caddy.Context, context.CancelFunc) {
	return caddy.NewContext(caddy.Context{Context: t.Context()})
}

// newHandler returns a provisioned handler with the given pause.
func newHandler(t *testing.T, pause time.Duration) *Handler {
	t.Helper()
	h := &Handler{Pause: durationPtr(pause)}
	ctx, cancel := newTestContext(t)
	t.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	return h
}

// nextTeapot marks requests the demo passed on.
var nextTeapot = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	w.WriteHeader(http.StatusTeapot)
	return nil
})

// serve runs one request through h.
func serve(t *testing.T, h *Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, nextTeapot); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	return w
}

// chat posts body to /v1/chat/completions with no pause.
func chat(t *testing.T, body string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(t, newHandler(t, 0), http.MethodPost, "/v1/chat/completions", body)
}

// sseEvents splits a stream the demo wrote into its events: each ends with
// a blank line (the last one too), and none is empty.
func sseEvents(t *testing.T, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", body)
	}
	return strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n")
}

// sseData checks the SSE framing (every event one `data: ` line and a blank
// line, data JSON or [DONE], [DONE] last and only last) and returns the data.
func sseData(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, ev := range sseEvents(t, body) {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("event is not one data line: %q", ev)
		}
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			t.Fatalf("event data is not JSON: %q", data)
		}
		out = append(out, data)
	}
	for i, d := range out {
		if (d == "[DONE]") != (i == len(out)-1) {
			t.Fatalf("[DONE] must be the last event, and only it; event %d of %d is %q", i, len(out), d)
		}
	}
	return out
}

var dsLine = regexp.MustCompile(`^([0-9a-z]):(.*)$`)

// dataStreamParts checks that every line is CODE:JSON and returns the codes
// and the JSON values.
func dataStreamParts(t *testing.T, body string) (codes string, values []json.RawMessage) {
	t.Helper()
	if !strings.HasSuffix(body, "\n") {
		t.Fatalf("data stream does not end with a newline")
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(body, "\n"), "\n") {
		m := dsLine.FindStringSubmatch(line)
		if m == nil || !json.Valid([]byte(m[2])) {
			t.Fatalf("line is not CODE:JSON: %q", line)
		}
		codes += m[1]
		values = append(values, json.RawMessage(m[2]))
	}
	return codes, values
}

// decode unmarshals s into a fresh T.
func decode[T any](t *testing.T, s []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(s, &v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

// chunks decodes the chat.completion.chunk events of an SSE stream (not the
// meta-only event, not [DONE]).
func chunks(t *testing.T, data []string) []chunk {
	t.Helper()
	var out []chunk
	for _, d := range data {
		if d == "[DONE]" || strings.HasPrefix(d, `{"meta":`) {
			continue
		}
		c := decode[chunk](t, []byte(d))
		if c.Object != "chat.completion.chunk" || c.ID == "" || c.Created == 0 || c.Model == "" {
			t.Fatalf("not a complete chunk: %s", d)
		}
		out = append(out, c)
	}
	return out
}

// content joins the content deltas of choice 0.
func content(cs []chunk) string {
	var b strings.Builder
	for _, c := range cs {
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != nil {
			b.WriteString(*c.Choices[0].Delta.Content)
		}
	}
	return b.String()
}

func wantHeader(t *testing.T, w *httptest.ResponseRecorder, name, value string) {
	t.Helper()
	if got := w.Header().Get(name); got != value {
		t.Errorf("header %s = %q, want %q", name, got, value)
	}
}

// namedEvent is one event of a Responses or Anthropic stream.
type namedEvent struct {
	name string
	data []byte
}

// namedEvents checks the framing of those APIs (every event an `event:`
// line and one `data:` line of JSON whose "type" is the event's name, then a
// blank line; no [DONE]) and returns the events.
func namedEvents(t *testing.T, body string) []namedEvent {
	t.Helper()
	var out []namedEvent
	for _, ev := range sseEvents(t, body) {
		name, data, ok := strings.Cut(ev, "\n")
		name, okName := strings.CutPrefix(name, "event: ")
		data, okData := strings.CutPrefix(data, "data: ")
		if !ok || !okName || !okData || strings.Contains(data, "\n") {
			t.Fatalf("event is not an event line and one data line: %q", ev)
		}
		var typed struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &typed); err != nil || typed.Type != name {
			t.Fatalf("data of event %q is not JSON of that type (%v): %s", name, err, data)
		}
		out = append(out, namedEvent{name, []byte(data)})
	}
	return out
}

// post posts body to path with no pause.
func post(t *testing.T, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	return serve(t, newHandler(t, 0), http.MethodPost, path, body)
}
