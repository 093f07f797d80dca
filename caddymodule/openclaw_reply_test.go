package caddymodule

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// TestOpenClawToolsJoinReplies: with the openclaw option, the tools the
// agent ran (read from the gateway's transcript for the reply's run id)
// join meta.tools_used of JSON replies, streams, Responses replies, run-once
// replies and the endpoints (SPEC 10); a failing or slow look-up leaves the
// reply whole, without them.
func TestOpenClawToolsJoinReplies(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "openclaw", "testdata")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		must(t, err, "reading %s", name)
		return b
	}
	chatAnswer, respAnswer := read("tools-invoke-sessions_history.json"), read("tools-invoke-sessions_history-responses.json")
	chatReply, respReply := read("chat-json-run-of-sessions_history.json"), read("responses-json-run-of-sessions_history.json")
	chatID := gjson.GetBytes(chatReply, "id").Str

	// The gateway: the recorded transcript of the session asked for; a key
	// of the module's own stands for the chat session. mode: "ok", "401",
	// "slow".
	var mode atomic.Value
	mode.Store("ok")
	var keys atomic.Value
	keys.Store([]string(nil))
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := gjson.GetBytes(body, "args.sessionKey").Str
		keys.Store(append(keys.Load().([]string), key))
		switch mode.Load() {
		case "401":
			http.Error(w, `{"ok":false}`, http.StatusUnauthorized)
			return
		case "slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(key, "openresponses-user") {
			w.Write(respAnswer)
			return
		}
		w.Write(chatAnswer)
	}))
	t.Cleanup(gw.Close)

	// The upstream: OpenClaw's HTTP endpoints, answering with the recorded
	// replies (the run ids of the transcripts); streams carry the same id.
	var upstreamKey atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		upstreamKey.Store(r.Header.Get("X-Openclaw-Session-Key"))
		if strings.HasSuffix(r.URL.Path, "/responses") {
			w.Header().Set("Content-Type", "application/json")
			w.Write(respReply)
			return
		}
		if gjson.GetBytes(body, "stream").Bool() {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"`+chatID+`","object":"chat.completion.chunk","created":1,"model":"openclaw","choices":[{"index":0,"delta":{"role":"assistant","content":"MOCK"},"finish_reason":null}]}`+"\n\n"+
				`data: {"id":"`+chatID+`","object":"chat.completion.chunk","created":1,"model":"openclaw","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+
				`data: {"id":"`+chatID+`","object":"chat.completion.chunk","created":1,"model":"openclaw","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(chatReply)
	}))
	defer up.Close()
	base := loadCaddy(t, llmMeta(t, []byte(`{"openclaw":{"gateway":"`+gw.URL+`","token":"t","timeout":"300ms"}}`)), proxyTo(up.Listener.Addr().String()))

	post := func(path, body string) (string, *http.Response) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := testClient.Do(req)
		must(t, err, "POST %s", path)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b), resp
	}
	toolsOf := func(meta string) []string {
		var tools []string
		for _, v := range gjson.Get(meta, "tools_used").Array() {
			tools = append(tools, v.Str)
		}
		return tools
	}
	streamMetaOf := func(body string) string { return string(streamMeta(parseClientEvents([]byte(body)))) }

	for _, tc := range []struct {
		name, path, body string
		meta             func(string) string // the meta of the client's body
		content          string
	}{
		{"chat JSON", "/v1/chat/completions", `{"model":"openclaw","user":"u1","messages":[{"role":"user","content":"hi"}]}`,
			func(b string) string { return gjson.Get(b, "meta").Raw }, ""},
		{"chat stream without user", "/v1/chat/completions", `{"model":"openclaw","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			streamMetaOf, ""},
		{"Responses JSON", "/v1/responses", `{"model":"openclaw","user":"r1","input":"hi"}`,
			func(b string) string { return gjson.Get(b, "meta").Raw }, ""},
		{"run-once flag", "/v1/chat/completions", `{"model":"openclaw","user":"u1","run_once":true,"messages":[{"role":"user","content":"hi"}]}`,
			func(b string) string { return gjson.Get(b, "meta").Raw }, "MOCK FINAL ANSWER after tool. Tool result length=87."},
		{"run-once endpoint", "/v1/run_once", `{"message":"hi","session_id":"u1"}`,
			func(b string) string { return gjson.Get(b, "meta").Raw }, "MOCK FINAL ANSWER after tool. Tool result length=87."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []string{"ok", "401", "slow"} {
				mode.Store(m)
				keys.Store([]string(nil))
				body, resp := post(tc.path, tc.body)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: status %d: %s", m, resp.StatusCode, body)
				}
				meta := tc.meta(body)
				tools := toolsOf(meta)
				if m == "ok" && (len(tools) != 1 || tools[0] != "ls") {
					t.Errorf("%s: tools_used %q, want [ls] from the transcript; meta %s", m, tools, meta)
				}
				if m != "ok" && len(tools) != 0 {
					t.Errorf("%s: a failed look-up added %q", m, tools)
				}
				if !gjson.Get(meta, "usage.total_tokens").Exists() {
					t.Errorf("%s: the rest of the meta is lost: %s", m, meta)
				}
				if tc.content != "" && gjson.Get(body, "content").Str != tc.content {
					t.Errorf("%s: content %q", m, gjson.Get(body, "content").Str)
				}
				if k := keys.Load().([]string); len(k) != 1 {
					t.Errorf("%s: %d look-ups, want 1 (keys %q)", m, len(k), k)
				} else if tc.name == "chat stream without user" && (!strings.HasPrefix(k[0], "agent:main:llm-meta:") || upstreamKey.Load() != k[0]) {
					t.Errorf("made session key %q, sent upstream as %q", k[0], upstreamKey.Load())
				}
			}
		})
	}
}
