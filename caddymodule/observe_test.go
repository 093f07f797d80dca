package caddymodule

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-meta/llm_meta/httpmeta"
)

const (
	secretPrompt = "SECRET-PROMPT-TEXT"
	secretReply  = "SECRET-REPLY-TEXT"
	secretHeader = "SECRET-HEADER-VALUE"
)

// TestLogsNeverHoldContent: one debug line per reply with the fields SPEC 8
// names, a warning per fallback with its reason, and never prompt or reply
// text or header values.
func TestLogsNeverHoldContent(t *testing.T) {
	h := &Handler{MaxEventBytes: 1024}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	must(t, h.Provision(ctx), "provision")
	core, logs := observer.New(zapcore.DebugLevel)
	// Made again with the debug logger, as Caddy makes it when the log
	// level is debug: the handler reads the clock only then.
	cfg := h.core.Config
	cfg.Logger = zap.New(core)
	h.core = httpmeta.New(cfg)

	big := strings.Repeat("x", 2000) // over max_event_bytes: a fallback
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Upstream-Secret", secretHeader)
		w.WriteHeader(200)
		io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"`+secretReply+`","tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"launcher","arguments":""}}]},"finish_reason":null}]}`+"\n\n")
		io.WriteString(w, "data: "+big+"\n\n")
		io.WriteString(w, "data: [DONE]\n\n")
		return nil
	})
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"`+secretPrompt+`"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secretHeader)
	repl := caddy.NewReplacer()
	req = caddyhttp.PrepareRequest(req, repl, nil, &caddyhttp.Server{})
	rec := httptest.NewRecorder()
	must(t, h.ServeHTTP(rec, req, next), "ServeHTTP")

	var replyLines, warnings int
	for _, e := range logs.All() {
		text := fmt.Sprintf("%s %v", e.Message, e.ContextMap())
		for _, secret := range []string{secretPrompt, secretReply, secretHeader} {
			if strings.Contains(text, secret) {
				t.Errorf("log line holds %q: %s", secret, text)
			}
		}
		switch {
		case e.Message == "llm_meta reply" && e.Level == zapcore.DebugLevel:
			replyLines++
			f := e.ContextMap()
			if f["mode"] != "stream" || f["format"] != "sse" || f["tools"] != int64(1) || f["events"] != int64(3) {
				t.Errorf("reply line fields %v", f)
			}
			for _, k := range []string{"bytes_in", "bytes_out", "duration", "status"} {
				if _, ok := f[k]; !ok {
					t.Errorf("reply line lacks %s: %v", k, f)
				}
			}
			if d, _ := f["duration"].(time.Duration); d <= 0 {
				t.Errorf("reply line's duration %v: the request was not timed", f["duration"])
			}
		case e.Level == zapcore.WarnLevel:
			warnings++
			if e.ContextMap()["reason"] != "event_too_large" {
				t.Errorf("warning without the expected reason: %v", e.ContextMap())
			}
		}
	}
	if replyLines != 1 || warnings != 1 {
		t.Fatalf("got %d reply lines and %d warnings, want 1 and 1", replyLines, warnings)
	}
	if got, _ := repl.GetString("http.llm_meta.tools_used"); got != "launcher" {
		t.Errorf("{http.llm_meta.tools_used} = %q", got)
	}
	if got, _ := repl.GetString("http.llm_meta.mode"); got != "stream" {
		t.Errorf("{http.llm_meta.mode} = %q", got)
	}
}

// TestPlaceholdersInHeaderAndLogAppend uses the placeholders the way an
// operator would: in a deferred `header` on a buffered reply, and in an
// access-log field with `log_append` on a stream.
func TestPlaceholdersInHeaderAndLogAppend(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"websearch","arguments":""}}]},"finish_reason":null}]}`+"\n\n"+
				`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Litellm-Response-Cost", "0.0125")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok","tool_calls":[{"id":"a","type":"function","function":{"name":"launcher","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"calculator","arguments":"{}"}}]}}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}`)
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
	header >X-LLM-Mode {http.llm_meta.mode}
	header >X-LLM-Tools {http.llm_meta.tools_used}
	log_append llm_tools {http.llm_meta.tools_used}
	log_append llm_format {http.llm_meta.format}
	log_append llm_in {http.llm_meta.input_tokens}
	log_append llm_out {http.llm_meta.output_tokens}
	log_append llm_cost {http.llm_meta.cost_usd}
	llm_meta {
		prices {
			m 1 2
		}
	}
	reverse_proxy %s
}`, addr, logFile, up.Listener.Addr().String())
	})

	// The counters as the vectors hold them (the module keeps its own
	// handles to them, looked up once per label set): each request counts
	// once, under its own mode and format.
	counter := func(c prometheus.Counter) float64 { return counterValue(t, c) }
	jsonReqs, sseReqs := metrics.requests.WithLabelValues("json", "json"), metrics.requests.WithLabelValues("stream", "sse")
	jsonEvents, sseEvents := metrics.events.WithLabelValues("json"), metrics.events.WithLabelValues("sse")
	jsonReqs0, sseReqs0, jsonEvents0, sseEvents0 := counter(jsonReqs), counter(sseReqs), counter(jsonEvents), counter(sseEvents)
	in0, out0, cost0 := counter(metrics.inputTokens), counter(metrics.outputTokens), counter(metrics.cost)

	post := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := testClient.Do(req)
		must(t, err, "POST")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	if got := resp.Header.Get("X-LLM-Tools"); got != "launcher,calculator" {
		t.Errorf("X-LLM-Tools = %q, want launcher,calculator", got)
	}
	if got := resp.Header.Get("X-LLM-Mode"); got != "json" {
		t.Errorf("X-LLM-Mode = %q, want json", got)
	}
	post(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)

	// The access log is written when each request ends; wait for both lines.
	entries := waitJSONLines(t, logFile, 2)
	// Both requests have ended (their access log lines are written after
	// the handlers return), so their metrics are counted.
	if got := counter(jsonReqs) - jsonReqs0; got != 1 {
		t.Errorf("requests_total{mode=json,format=json} grew by %v, want 1", got)
	}
	if got := counter(sseReqs) - sseReqs0; got != 1 {
		t.Errorf("requests_total{mode=stream,format=sse} grew by %v, want 1", got)
	}
	if got := counter(jsonEvents) - jsonEvents0; got != 1 {
		t.Errorf("events_total{format=json} grew by %v, want 1 (the reply)", got)
	}
	if got := counter(sseEvents) - sseEvents0; got < 1 {
		t.Errorf("events_total{format=sse} grew by %v, want the stream's events", got)
	}

	// Tokens and cost (SPEC 9.4): the JSON reply's cost is LiteLLM's header;
	// the stream's comes from the prices table, (7×1 + 3×2) / 1e6.
	if got := counter(metrics.inputTokens) - in0; got != 47 {
		t.Errorf("tokens_total{direction=input} grew by %v, want 40+7", got)
	}
	if got := counter(metrics.outputTokens) - out0; got != 5 {
		t.Errorf("tokens_total{direction=output} grew by %v, want 2+3", got)
	}
	if got := counter(metrics.cost) - cost0; got < 0.012513-1e-12 || got > 0.012513+1e-12 {
		t.Errorf("cost_usd_total grew by %v, want 0.0125 + 0.000013", got)
	}
	for i, want := range []map[string]any{
		{"llm_in": float64(40), "llm_out": float64(2), "llm_cost": "0.0125"},
		{"llm_in": float64(7), "llm_out": float64(3), "llm_cost": "0.000013"},
	} {
		for k, v := range want {
			if entries[i][k] != v {
				t.Errorf("access log line %d: %s = %#v, want %#v", i, k, entries[i][k], v)
			}
		}
	}
	if entries[0]["llm_tools"] != "launcher,calculator" || entries[0]["llm_format"] != "json" {
		t.Errorf("first access log line: llm_tools=%v llm_format=%v", entries[0]["llm_tools"], entries[0]["llm_format"])
	}
	if entries[1]["llm_tools"] != "websearch" || entries[1]["llm_format"] != "sse" {
		t.Errorf("stream access log line: llm_tools=%v llm_format=%v", entries[1]["llm_tools"], entries[1]["llm_format"])
	}
}

// counterValue is what a counter counts now.
func counterValue(t *testing.T, c prometheus.Counter) float64 {
	var m dto.Metric
	must(t, c.Write(&m), "reading a counter")
	return m.GetCounter().GetValue()
}

// waitJSONLines waits for an access log's n lines: each is written when
// its request ends, after the handlers returned.
func waitJSONLines(t *testing.T, path string, n int) []map[string]any {
	var entries []map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if entries = readJSONLines(t, path); len(entries) >= n {
			return entries
		}
	}
	t.Fatalf("access log has %d lines, want %d", len(entries), n)
	return nil
}

func readJSONLines(t *testing.T, path string) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
