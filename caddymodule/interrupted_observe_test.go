package caddymodule

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-meta/llm_meta/httpmeta"
)

// A Responses stream that names its model and ends before its terminal
// event: cut short (SPEC 11.1). respCutFull is the same stream ended.
const (
	respCut = "event: response.created\n" +
		`data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-4.1-mini-2025-04-14","output":[]}}` + "\n\n" +
		"event: response.output_text.delta\n" +
		`data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"` + secretReply + `"}` + "\n\n"
	respCutEnd = "event: response.completed\n" +
		`data: {"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1-mini-2025-04-14","output":[]}}` + "\n\n"
)

// TestInterruptedOperators: a stream cut short counts in
// caddy_llm_meta_interrupted_total and sets {http.llm_meta.interrupted};
// a whole one does neither; {http.llm_meta.model_served} is the reply's
// model either way (SPEC 11.1, 11.2).
func TestInterruptedOperators(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, respCut)
		if r.URL.Query().Get("whole") != "" {
			io.WriteString(w, respCutEnd)
		}
	}))
	defer up.Close()
	logFile := filepath.Join(t.TempDir(), "access.log")
	addr := loadCaddyfile(t, func(addr string) string {
		return fmt.Sprintf(`{
	admin off
	persist_config off
}
http://%s {
	log {
		output file %s
		format json
	}
	log_append llm_cut {http.llm_meta.interrupted}
	log_append llm_model {http.llm_meta.model_served}
	llm_meta
	reverse_proxy %s
}`, addr, logFile, up.Listener.Addr().String())
	})

	cut0 := counterValue(t, metrics.interrupted)
	for _, q := range []string{"", "?whole=1"} {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/responses"+q, strings.NewReader(`{"model":"gpt-4.1-mini","input":"hi","stream":true}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := testClient.Do(req)
		must(t, err, "POST")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	entries := waitJSONLines(t, logFile, 2)
	if got := counterValue(t, metrics.interrupted) - cut0; got != 1 {
		t.Errorf("interrupted_total grew by %v, want 1 (the stream cut short only)", got)
	}
	for i, want := range []string{"true", ""} {
		if entries[i]["llm_cut"] != want {
			t.Errorf("access log line %d: llm_cut = %#v, want %q", i, entries[i]["llm_cut"], want)
		}
		if entries[i]["llm_model"] != "gpt-4.1-mini-2025-04-14" {
			t.Errorf("access log line %d: llm_model = %#v, want the reply's model", i, entries[i]["llm_model"])
		}
	}
}

// TestInterruptedWarning: a stream cut short logs one warning with its
// format and the bytes read, and no reply text (SPEC 8, 11.1).
func TestInterruptedWarning(t *testing.T) {
	h := &Handler{}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	must(t, h.Provision(ctx), "provision")
	core, logs := observer.New(zapcore.WarnLevel)
	cfg := h.core.Config
	cfg.Logger = zap.New(core)
	h.core = httpmeta.New(cfg)
	for _, body := range []string{respCut + respCutEnd, respCut} {
		next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, body)
			return nil
		})
		req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(`{"model":"gpt-4.1-mini","stream":true,"input":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), nil, &caddyhttp.Server{})
		must(t, h.ServeHTTP(httptest.NewRecorder(), req, next), "ServeHTTP")
	}
	var found int
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), secretReply) {
			t.Errorf("log line holds reply text: %s %v", e.Message, e.ContextMap())
		}
		if !strings.Contains(e.Message, "interrupted") {
			continue
		}
		found++
		f := e.ContextMap()
		if f["format"] != "responses" || f["bytes_in"] != int64(len(respCut)) {
			t.Errorf("warning fields %v, want format responses and bytes_in %d", f, len(respCut))
		}
	}
	if found != 1 {
		t.Errorf("%d interrupted warnings, want 1 (the stream cut short only)", found)
	}
}

// TestRunOnceInterrupted: run-once over a stream cut short, in a protocol
// with a terminal event and in a converted one, is the 502 of SPEC 6.4
// with the content so far and interrupted in its meta; over a stream whose
// connection failed, the meta does not say interrupted (SPEC 11.1).
func TestRunOnceInterrupted(t *testing.T) {
	cases := []struct {
		name, path, ctype, body string
		fail                    bool
	}{
		{"responses", "/v1/responses", "text/event-stream", respCut, false},
		{"data stream", "/v1/chat/completions", "text/plain", "0:\"Hel\"\n0:\"lo\"\n", false},
		{"data stream, connection failed", "/v1/chat/completions", "text/plain", "0:\"Hel\"\n0:\"lo\"\n", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newUnitHandler(t, "")
			next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(200)
				io.WriteString(w, c.body)
				if c.fail {
					panic(http.ErrAbortHandler) // reverse_proxy's upstream that broke off mid-body
				}
				return nil
			})
			req := httptest.NewRequest("POST", c.path, strings.NewReader(`{"model":"m","stream":true,"run_once":true,"input":"hi","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			_ = h.ServeHTTP(rec, req, next)
			var got struct {
				Content string         `json:"content"`
				Error   string         `json:"error"`
				Meta    map[string]any `json:"meta"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 502 {
				t.Fatalf("status %d, body %s (%v)", rec.Code, rec.Body.String(), err)
			}
			if got.Content == "" || got.Error == "" {
				t.Errorf("no content so far or no message: %s", rec.Body.String())
			}
			if (got.Meta["interrupted"] == true) == c.fail {
				t.Errorf("meta %v: interrupted should be there exactly for a clean end", got.Meta)
			}
		})
	}
}
