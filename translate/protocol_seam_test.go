package translate_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/httpmeta"
	"github.com/llm-meta/llm_meta/translate"
)

// TestFakeProtocolThroughHandler runs the protocol protocol_fake_test.go
// registers (RegisterTally) through the handler: nothing else knows it.
func TestFakeProtocolThroughHandler(t *testing.T) {
	translate.RegisterTally()
	cases := []struct {
		name, path, ctype, body, want string
		request                       string
	}{{
		name:  "stream: terminal event decided by the protocol, meta spliced, CRLF kept, later events untouched",
		path:  "/v1/models/m1:tallyStream",
		ctype: "text/event-stream",
		body: "data: {\"tally\":{\"tool\":\"a\"}}\r\n\r\n" +
			"data: {\"tally\":{\"tool\":\"b\",\"done\":true}}\r\n\r\n" +
			"data: {\"tally\":{\"tool\":\"c\"}}\r\n\r\n",
		want: "data: {\"tally\":{\"tool\":\"a\"}}\r\n\r\n" +
			"data: {\"tally\":{\"tool\":\"b\",\"done\":true},\"meta\":{\"tools_used\":[\"a\",\"b\"]}}\r\n\r\n" +
			"data: {\"tally\":{\"tool\":\"c\"}}\r\n\r\n",
	}, {
		name:  "json reply: recognised by its top level, meta added",
		path:  "/v1/models/m1:tally",
		ctype: "application/json",
		body:  `{"tally":{"calls":[{"kind":"tool","name":"x"},{"name":"no","kind":"text"},{"kind":"search_tool"}]}}`,
		want:  `{"tally":{"calls":[{"kind":"tool","name":"x"},{"name":"no","kind":"text"},{"kind":"search_tool"}]},"meta":{"tools_used":["x","search"]}}`,
	}, {
		name:    "run-once over a json reply: its text read by the protocol",
		path:    "/v1/models/m1:tally",
		request: `{"contents":[],"run_once":true}`,
		ctype:   "application/json",
		body:    `{"tally":{"text":"T","calls":[{"kind":"tool","name":"x"}]}}`,
		want:    `{"content":"T","meta":{"tools_used":["x"]}}`,
	}, {
		name:  "json reply with choices: a chat completion",
		path:  "/v1/models/m1:tally",
		ctype: "application/json",
		body:  `{"tally":{"calls":[{"kind":"tool","name":"x"}]},"choices":[]}`,
		want:  `{"tally":{"calls":[{"kind":"tool","name":"x"}]},"choices":[]}`,
	}, {
		name:  "a streaming request's reply that is no event stream passes untouched",
		path:  "/v1/models/m1:tallyStream",
		ctype: "application/x-ndjson",
		body:  `[{"tally":{"tool":"a"}}]`,
		want:  `[{"tally":{"tool":"a"}}]`,
	}, {
		name:    "run-once over that reply: its elements read as the protocol's events",
		path:    "/v1/models/m1:tallyStream",
		request: `{"contents":[],"run_once":true}`,
		ctype:   "application/x-ndjson",
		body:    `[{"tally":{"tool":"a","text":"A"}},{"tally":{"text":"B","done":true}}]`,
		want:    `{"content":"AB","meta":{"tools_used":["a"]}}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := httpmeta.DefaultConfig()
			cfg.FinalMeta = true
			h := httpmeta.New(cfg)
			body := c.request
			if body == "" {
				body = `{"contents":[]}`
			}
			req := httptest.NewRequest(http.MethodPost, c.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			err := h.Serve(rec, req, next(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(http.StatusOK)
				// The body in pieces: the first reaches the client before
				// the rest is written when the reply is not held.
				half := len(c.body) / 2
				if _, err := io.WriteString(w, c.body[:half]); err != nil {
					return err
				}
				if c.ctype == "application/x-ndjson" && c.request == "" && rec.Body.Len() == 0 {
					t.Errorf("the first half was held back")
				}
				_, err := io.WriteString(w, c.body[half:])
				return err
			}))
			if err != nil {
				t.Fatal(err)
			}
			if got := rec.Body.String(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

type next func(http.ResponseWriter, *http.Request) error

func (f next) ServeHTTP(w http.ResponseWriter, r *http.Request) error { return f(w, r) }

// TestFakeNDJSONProtocolThroughHandler runs the NDJSON protocol
// protocol_fake_ndjson_test.go registers (RegisterLines) through the
// handler, its body written whole and in pieces of 1 to 7 bytes: each
// line passes as it came, a meta-only line is withheld, the terminal line
// gains the meta as its last member (and an LF when the body ended before
// it), the lines after it pass untouched.
func TestFakeNDJSONProtocolThroughHandler(t *testing.T) {
	translate.RegisterLines()
	cases := []struct{ name, body, want string }{{
		name: "terminal line within the body",
		body: "{\"tool\":\"a\"}\n{\"meta\":{\"x\":1}}\n\n{\"tool\":\"b\",\"done\":true}\r\n{\"tool\":\"c\"}\n",
		want: "{\"tool\":\"a\"}\n\n{\"tool\":\"b\",\"done\":true,\"meta\":{\"tools_used\":[\"a\",\"b\"],\"x\":1}}\r\n{\"tool\":\"c\"}\n",
	}, {
		name: "terminal line without its LF, a meta of its own replaced",
		body: "{\"tool\":\"a\"}\n{\"done\":true,\"meta\":{\"y\":\"\u2028\"},\"n\":1}",
		want: "{\"tool\":\"a\"}\n{\"done\":true,\"meta\":{\"tools_used\":[\"a\"],\"y\":\"\\u2028\"},\"n\":1}\n",
	}, {
		name: "no terminal line: no meta",
		body: "{\"tool\":\"a\"}\n{\"tool\":\"b\"}",
		want: "{\"tool\":\"a\"}\n{\"tool\":\"b\"}",
	}}
	for _, c := range cases {
		for piece := 0; piece <= 7; piece++ {
			if got := servePieces(t, "/v1/lines", "application/x-ndjson", c.body, piece); got != c.want {
				t.Errorf("%s, pieces of %d: got  %q\nwant %q", c.name, piece, got, c.want)
			}
		}
	}
}

// TestFakeProtocolStreamInPieces runs the tally stream of
// TestFakeProtocolThroughHandler written whole and in pieces of 1 to 7
// bytes.
func TestFakeProtocolStreamInPieces(t *testing.T) {
	translate.RegisterTally()
	body := "data: {\"tally\":{\"tool\":\"a\"}}\r\n\r\n" +
		"data: {\"tally\":{\"tool\":\"b\",\"done\":true}}\r\n\r\n" +
		"data: {\"tally\":{\"tool\":\"c\"}}\r\n\r\n"
	want := "data: {\"tally\":{\"tool\":\"a\"}}\r\n\r\n" +
		"data: {\"tally\":{\"tool\":\"b\",\"done\":true},\"meta\":{\"tools_used\":[\"a\",\"b\"]}}\r\n\r\n" +
		"data: {\"tally\":{\"tool\":\"c\"}}\r\n\r\n"
	for piece := 0; piece <= 7; piece++ {
		if got := servePieces(t, "/v1/models/m1:tallyStream", "text/event-stream", body, piece); got != want {
			t.Errorf("pieces of %d: got  %q\nwant %q", piece, got, want)
		}
	}
}

// servePieces serves body as a reply of type ctype to a streaming request
// to path through the handler, written in pieces of piece bytes (0:
// whole), and returns what the client got.
func servePieces(t *testing.T, path, ctype, body string, piece int) string {
	t.Helper()
	cfg := httpmeta.DefaultConfig()
	cfg.FinalMeta = true
	h := httpmeta.New(cfg)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	err := h.Serve(rec, req, next(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		for rest := body; rest != ""; {
			n := len(rest)
			if piece > 0 {
				n = min(n, piece)
			}
			if _, err := io.WriteString(w, rest[:n]); err != nil {
				return err
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			rest = rest[n:]
		}
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return rec.Body.String()
}
