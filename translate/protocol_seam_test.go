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
