package httpmeta

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestWrapInFrontOfReverseProxy: Wrap puts the handler in front of a plain
// net/http handler, here the standard library's reverse proxy: a JSON
// reply with a tool call gets its meta, a stream its final meta chunk, and
// the run-once endpoint answers with one JSON object.
func TestWrapInFrontOfReverseProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if gjson.GetBytes(body, "stream").Bool() {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`+"\n\n")
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`+"\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"x","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	}))
	t.Cleanup(up.Close)
	target, err := url.Parse(up.URL)
	must(t, err, "parsing the upstream's URL")
	front := httptest.NewServer(New(DefaultConfig()).Wrap(httputil.NewSingleHostReverseProxy(target)))
	t.Cleanup(front.Close)

	post := func(path, body string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Post(front.URL+path, "application/json", strings.NewReader(body))
		must(t, err, "POST "+path)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		must(t, err, "reading the reply")
		return resp, string(b)
	}
	if _, got := post(DefaultChatPath, chatRequest); gjson.Get(got, "meta.tools_used").Raw != `["search"]` {
		t.Errorf("JSON reply: %s", got)
	}
	_, got := post(DefaultChatPath, `{"model":"m","stream":true,"messages":[]}`)
	var last string
	for _, ev := range strings.Split(got, "\n\n") {
		if d, ok := strings.CutPrefix(ev, "data: "); ok && d != "[DONE]" {
			last = d
		}
	}
	if gjson.Get(last, "meta.tools_used").Raw != `["search"]` || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("stream: %s", got)
	}
	resp, got := post(DefaultRunOncePath, `{"message":"hi"}`)
	if resp.StatusCode != http.StatusOK || gjson.Get(got, "content").Str != "Hi" || gjson.Get(got, "meta.tools_used").Raw != `["search"]` {
		t.Errorf("run-once: %d %s", resp.StatusCode, got)
	}
}
