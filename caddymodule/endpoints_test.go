package caddymodule

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// The JARVIS endpoints (SPEC 6.2, 6.3, 6.4) through a real in-process Caddy,
// with an upstream that records what it was sent.

// recordingUpstream answers every request with one canned reply and keeps
// what it received.
type recordingUpstream struct {
	mu       sync.Mutex
	calls    int
	path     string
	header   http.Header
	body     []byte
	status   int
	ctype    string
	response string
}

func (u *recordingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.calls++
	u.path, u.header, u.body = r.URL.RequestURI(), r.Header.Clone(), body
	status, ctype, response := u.status, u.ctype, u.response
	u.mu.Unlock()
	if status == 0 {
		status = 200
	}
	if ctype == "" {
		ctype = "application/json"
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, response)
}

// sent returns what the upstream got on its last call, decoded.
func (u *recordingUpstream) sent(t *testing.T) (path string, body map[string]any, calls int) {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.calls > 0 {
		if err := json.Unmarshal(u.body, &body); err != nil {
			t.Fatalf("upstream body is not a JSON object: %v\n%s", err, u.body)
		}
	}
	return u.path, body, u.calls
}

func (u *recordingUpstream) reset() {
	u.mu.Lock()
	u.calls, u.path, u.header, u.body = 0, "", nil, nil
	u.mu.Unlock()
}

// startEndpoints runs Caddy with llm_meta (config) and a recording upstream.
func startEndpoints(t *testing.T, config string, up *recordingUpstream) string {
	t.Helper()
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	return loadCaddy(t, llmMeta(t, []byte(config)), proxyTo(srv.Listener.Addr().String()))
}

// postEndpoint posts body to path and returns the status, headers and body.
func postEndpoint(t *testing.T, base, path, body string, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
	must(t, err, "building the request")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := testClient.Do(req)
	must(t, err, "request through Caddy")
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	must(t, err, "reading the reply")
	return resp.StatusCode, resp.Header, got
}

// jsonOf re-encodes a decoded value for comparisons.
func jsonOf(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestEdgeEndpointRequest(t *testing.T) {
	up := &recordingUpstream{response: `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hello!"}}]}`}
	base := startEndpoints(t, `{"default_model":"openclaw:main"}`, up)

	t.Run("message only", func(t *testing.T) {
		up.reset()
		status, hdr, got := postEndpoint(t, base, "/functions/v1/jarvis",
			`{"message":"Hi there","session_id":"sess-42","task":"Hi there","model_hint":"fast","temperature":0.2,"metadata":{"tags":["a",1,null]},"stream":true}`)
		if status != 200 || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("status %d, Content-Type %q, body %s", status, hdr.Get("Content-Type"), got)
		}
		if eq, err := jsonEqualBytes(got, []byte(`{"content":"Hello!"}`)); err != nil || !eq {
			t.Errorf("answer = %s, want {\"content\":\"Hello!\"} with no meta", got)
		}
		path, body, _ := up.sent(t)
		if path != "/v1/chat/completions" {
			t.Errorf("upstream path = %q", path)
		}
		want := `{"messages":[{"role":"user","content":"Hi there"}],"user":"sess-42","model":"openclaw:main","stream":false,"temperature":0.2,"metadata":{"tags":["a",1,null]}}`
		if eq, err := jsonEqualBytes(jsonOf(body), []byte(want)); err != nil || !eq {
			t.Errorf("upstream body = %s\nwant %s", jsonOf(body), want)
		}
	})

	t.Run("JSON sent as text/plain", func(t *testing.T) {
		// Browsers send text/plain to skip the CORS preflight; the edge
		// function read the body as JSON whatever its type.
		up.reset()
		status, _, got := postEndpoint(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`, "Content-Type", "text/plain;charset=UTF-8")
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		_, body, _ := up.sent(t)
		if eq, _ := jsonEqualBytes(jsonOf(body["messages"]), []byte(`[{"role":"user","content":"Hi"}]`)); !eq {
			t.Errorf("messages = %s", jsonOf(body["messages"]))
		}
		up.mu.Lock()
		ct := up.header.Get("Content-Type")
		up.mu.Unlock()
		if ct != "application/json" {
			t.Errorf("upstream Content-Type = %q, want application/json", ct)
		}
	})

	t.Run("default user, model and messages kept", func(t *testing.T) {
		up.reset()
		status, _, got := postEndpoint(t, base, "/functions/v1/jarvis",
			`{"message":"second","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"second"}],"model":"gpt-4o"}`)
		if status != 200 {
			t.Fatalf("status %d: %s", status, got)
		}
		_, body, _ := up.sent(t)
		if body["user"] != "jarvis-edge" {
			t.Errorf("user = %v, want jarvis-edge", body["user"])
		}
		if body["model"] != "gpt-4o" {
			t.Errorf("model = %v, want the body's gpt-4o", body["model"])
		}
		if msgs, _ := body["messages"].([]any); len(msgs) != 4 {
			t.Errorf("messages = %s, want the four given (message not added again)", jsonOf(body["messages"]))
		}
		if _, has := body["message"]; has {
			t.Errorf("message sent upstream")
		}
	})

	t.Run("user in body wins over session_id", func(t *testing.T) {
		up.reset()
		postEndpoint(t, base, "/functions/v1/jarvis", `{"message":"x","user":"u-1","session_id":"s-1"}`)
		_, body, _ := up.sent(t)
		if body["user"] != "u-1" {
			t.Errorf("user = %v, want u-1", body["user"])
		}
		if _, has := body["session_id"]; has {
			t.Errorf("session_id sent upstream")
		}
	})

	t.Run("image makes the last user message multimodal", func(t *testing.T) {
		up.reset()
		postEndpoint(t, base, "/functions/v1/jarvis",
			`{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},{"role":"user","content":"What is this?"},{"role":"assistant","content":"…"}],"image_data_url":"data:image/png;base64,iVBORw0KGgo="}`)
		_, body, _ := up.sent(t)
		want := `[{"role":"user","content":"first"},{"role":"assistant","content":"ok"},` +
			`{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]},` +
			`{"role":"assistant","content":"…"}]`
		if eq, err := jsonEqualBytes(jsonOf(body["messages"]), []byte(want)); err != nil || !eq {
			t.Errorf("messages = %s\nwant %s", jsonOf(body["messages"]), want)
		}
		if _, has := body["image_data_url"]; has {
			t.Errorf("image_data_url sent upstream")
		}
	})

	t.Run("image with a message already in parts keeps its parts", func(t *testing.T) {
		up.reset()
		postEndpoint(t, base, "/functions/v1/jarvis",
			`{"messages":[{"role":"user","content":[{"type":"text","text":"Compare these."},{"type":"image_url","image_url":{"url":"https://x/1.png"}}]}],"image_data_url":"data:image/png;base64,AAAA"}`)
		_, body, _ := up.sent(t)
		want := `[{"role":"user","content":[{"type":"text","text":"Compare these."},{"type":"image_url","image_url":{"url":"https://x/1.png"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}]`
		if eq, err := jsonEqualBytes(jsonOf(body["messages"]), []byte(want)); err != nil || !eq {
			t.Errorf("messages = %s\nwant %s", jsonOf(body["messages"]), want)
		}
	})

	t.Run("flags and JARVIS keys removed, unknown keys kept", func(t *testing.T) {
		up.reset()
		postEndpoint(t, base, "/functions/v1/jarvis",
			`{"message":"x","task":"x","model_hint":"best","image_data_url":null,"enable_structured_output":false,"return_final_only":true,"tools":[{"type":"function","function":{"name":"f"}}],"x-custom":"kept"}`)
		_, body, _ := up.sent(t)
		for _, k := range []string{"message", "session_id", "task", "model_hint", "image_data_url", "run_once", "return_final_only", "enable_structured_output"} {
			if _, has := body[k]; has {
				t.Errorf("%s sent upstream: %s", k, jsonOf(body))
			}
		}
		if body["x-custom"] != "kept" || body["tools"] == nil {
			t.Errorf("unknown keys lost: %s", jsonOf(body))
		}
	})
}

func TestEdgeEndpointAnswers(t *testing.T) {
	up := &recordingUpstream{response: `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"It is 4.","tool_calls":[{"id":"a","type":"function","function":{"name":"search","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"calculator","arguments":"{}"}}]}}]}`}
	base := startEndpoints(t, "", up)

	t.Run("Accept text/plain", func(t *testing.T) {
		up.reset()
		status, hdr, got := postEndpoint(t, base, "/functions/v1/jarvis", `{"message":"2+2?"}`, "Accept", "text/plain")
		if status != 200 || hdr.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("status %d, Content-Type %q", status, hdr.Get("Content-Type"))
		}
		if string(got) != "It is 4." {
			t.Errorf("body = %q, want the content alone", got)
		}
		if v := hdr.Get("X-Tools-Used"); v != "search, calculator" {
			t.Errorf("X-Tools-Used = %q", v)
		}
	})

	t.Run("JSON answer", func(t *testing.T) {
		up.reset()
		status, _, got := postEndpoint(t, base, "/functions/v1/jarvis", `{"message":"2+2?"}`, "Accept", "application/json, text/plain;q=0.5")
		if status != 200 {
			t.Fatalf("status %d", status)
		}
		if eq, err := jsonEqualBytes(got, []byte(`{"content":"It is 4.","meta":{"tools_used":["search","calculator"]}}`)); err != nil || !eq {
			t.Errorf("answer = %s", got)
		}
	})

	t.Run("invalid JSON", func(t *testing.T) {
		for _, body := range []string{`{"message":`, `[{"message":"x"}]`, `"hello"`, ``, `null`} {
			up.reset()
			status, hdr, got := postEndpoint(t, base, "/functions/v1/jarvis", body)
			if status != 400 || hdr.Get("Content-Type") != "application/json" || string(got) != `{"error":"Invalid JSON body"}` {
				t.Errorf("body %q: status %d, Content-Type %q, answer %s; want 400 {\"error\":\"Invalid JSON body\"}", body, status, hdr.Get("Content-Type"), got)
			}
			if _, _, calls := up.sent(t); calls != 0 {
				t.Errorf("body %q: upstream called", body)
			}
		}
	})

	t.Run("no message", func(t *testing.T) {
		for _, body := range []string{`{}`, `{"message":5}`, `{"messages":[]}`, `{"messages":"hi"}`} {
			up.reset()
			status, _, got := postEndpoint(t, base, "/functions/v1/jarvis", body)
			if status != 400 || string(got) != `{"error":"Body must include 'message' (string) or 'messages' (array)."}` {
				t.Errorf("body %s: status %d, answer %s", body, status, got)
			}
			if _, _, calls := up.sent(t); calls != 0 {
				t.Errorf("body %s: upstream called", body)
			}
		}
	})

	t.Run("upstream error", func(t *testing.T) {
		up.reset()
		up.mu.Lock()
		up.status, up.response = 429, `{"error":{"message":"Rate limit reached","type":"rate_limit"}}`
		up.mu.Unlock()
		defer func() { up.mu.Lock(); up.status = 0; up.mu.Unlock() }()
		status, _, got := postEndpoint(t, base, "/functions/v1/jarvis", `{"message":"x"}`)
		if status != 502 || string(got) != `{"error":"Rate limit reached"}` {
			t.Errorf("status %d, answer %s; want 502 with the upstream's message", status, got)
		}
	})
}

// TestEndpointPaths: the paths are configurable and "" turns an endpoint
// off, leaving its requests to pass as ordinary POSTs.
func TestEndpointPaths(t *testing.T) {
	up := &recordingUpstream{response: `{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}`}
	base := startEndpoints(t, `{"chat_path":"/api/chat","edge_path":"/jarvis","run_once_path":""}`, up)

	status, _, got := postEndpoint(t, base, "/jarvis", `{"message":"x"}`)
	if path, _, _ := up.sent(t); status != 200 || path != "/api/chat" {
		t.Errorf("edge at /jarvis: status %d, upstream path %q, answer %s", status, path, got)
	}
	if eq, _ := jsonEqualBytes(got, []byte(`{"content":"ok"}`)); !eq {
		t.Errorf("edge answer = %s", got)
	}

	for _, path := range []string{"/v1/run_once", "/functions/v1/jarvis"} {
		up.reset()
		in := `{"message":"x","session_id":"s"}`
		status, _, got := postEndpoint(t, base, path, in)
		upPath, _, _ := up.sent(t)
		up.mu.Lock()
		sentBody := string(up.body)
		up.mu.Unlock()
		if status != 200 || upPath != path || sentBody != in {
			t.Errorf("%s (off): status %d, upstream got %q %s; want the request passed as it came", path, status, upPath, sentBody)
		}
		if eq, _ := jsonEqualBytes(got, []byte(up.response)); !eq {
			t.Errorf("%s (off): answer %s, want the upstream's reply", path, got)
		}
	}
}

// TestUpstreamSentNoReply: an upstream 204 or 205 to an endpoint's request
// or a run-once reply gives the 502 of SPEC 6.4, {"error":"Upstream sent
// no reply"}; to an ordinary request it passes as it came.
func TestUpstreamSentNoReply(t *testing.T) {
	up := &recordingUpstream{}
	base := startEndpoints(t, `{}`, up)
	for _, status := range []int{http.StatusNoContent, http.StatusResetContent} {
		up.mu.Lock()
		up.status = status
		up.mu.Unlock()
		for _, tc := range []struct{ name, path, body, header string }{
			{"run-once endpoint", "/v1/run_once", `{"message":"hi"}`, ""},
			{"edge endpoint", "/functions/v1/jarvis", `{"message":"hi"}`, ""},
			{"edge endpoint streaming", "/functions/v1/jarvis", `{"message":"hi"}`, "true"},
			{"run_once flag", "/v1/chat/completions", `{"model":"m","run_once":true,"messages":[]}`, ""},
		} {
			code, _, got := postEndpoint(t, base, tc.path, tc.body, "x-stream", tc.header)
			if code != http.StatusBadGateway || string(got) != `{"error":"Upstream sent no reply"}` {
				t.Errorf("%d, %s: %d %s", status, tc.name, code, got)
			}
		}
		code, _, got := postEndpoint(t, base, "/v1/chat/completions", `{"model":"m","messages":[]}`)
		if code != status || len(got) != 0 {
			t.Errorf("%d to an ordinary request: %d %q", status, code, got)
		}
	}
}

// TestTimingThroughCaddy: with timing on, meta.timing reaches the client of
// a JSON reply (total_ms) and of a stream (first_token_ms too) (SPEC 9.3);
// off by default.
func TestTimingThroughCaddy(t *testing.T) {
	up := &recordingUpstream{}
	for _, cfg := range []string{`{"timing":true}`, `{}`} {
		base := startEndpoints(t, cfg, up)
		up.mu.Lock()
		up.ctype, up.response = "application/json", `{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}`
		up.mu.Unlock()
		sent := time.Now()
		_, _, got := postEndpoint(t, base, "/v1/chat/completions", `{"model":"m","messages":[]}`)
		took := time.Since(sent).Milliseconds()
		on := cfg != `{}`
		if has := gjson.GetBytes(got, "meta.timing.total_ms").Type == gjson.Number; has != on {
			t.Errorf("%s, JSON: meta.timing %v: %s", cfg, has, got)
		}
		// Measured from the request's start: never more than the client saw.
		if ms := gjson.GetBytes(got, "meta.timing.total_ms").Int(); ms < 0 || ms > took {
			t.Errorf("%s, JSON: total_ms %d, the client waited %d ms", cfg, ms, took)
		}
		up.mu.Lock()
		up.ctype, up.response = "text/event-stream", `data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}`+"\n\ndata: [DONE]\n\n"
		up.mu.Unlock()
		sent = time.Now()
		_, _, got = postEndpoint(t, base, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[]}`)
		took = time.Since(sent).Milliseconds()
		meta := streamMeta(parseClientEvents(got))
		if has := gjson.GetBytes(meta, "timing.first_token_ms").Type == gjson.Number && gjson.GetBytes(meta, "timing.total_ms").Type == gjson.Number; has != on {
			t.Errorf("%s, stream: meta %s", cfg, meta)
		}
		if first, total := gjson.GetBytes(meta, "timing.first_token_ms").Int(), gjson.GetBytes(meta, "timing.total_ms").Int(); first < 0 || first > total || total > took {
			t.Errorf("%s, stream: first_token_ms %d, total_ms %d, the client waited %d ms", cfg, first, total, took)
		}
	}
}

// TestAnthropicVersionHeaderKind: a request whose path does not end in
// /messages is an Anthropic request when it carries an anthropic-version
// header (SPEC 4.5): stream_usage, for chat requests only, leaves its body
// as it came; the same request without the header gains stream_options.
func TestAnthropicVersionHeaderKind(t *testing.T) {
	up := &recordingUpstream{ctype: "text/event-stream", response: "data: [DONE]\n\n"}
	base := startEndpoints(t, `{}`, up)
	const body = `{"model":"m","stream":true,"max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		hdr       []string
		wantUsage bool
	}{
		{[]string{"anthropic-version", "2023-06-01"}, false},
		{nil, true},
	} {
		up.reset()
		postEndpoint(t, base, "/v1/chat/completions", body, c.hdr...)
		_, sent, calls := up.sent(t)
		if calls != 1 {
			t.Fatalf("header %v: upstream called %d times", c.hdr, calls)
		}
		if _, has := sent["stream_options"]; has != c.wantUsage {
			t.Errorf("header %v: stream_options sent %v, want %v: %v", c.hdr, has, c.wantUsage, sent)
		}
	}
}
