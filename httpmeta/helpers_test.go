package httpmeta

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// The package's tests drive Handler.Serve directly, with a next handler
// that answers as an upstream would; the module's behaviour through Caddy
// is tested in package caddymodule.

const (
	chatRequest     = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}`
	replyPlain      = `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}`
	replyChoiceMeta = `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"meta":{"tools_used":["search"]}}]}`
)

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// chatPost is a chat request to the default path.
func chatPost() *http.Request {
	r := httptest.NewRequest(http.MethodPost, DefaultChatPath, strings.NewReader(chatRequest))
	r.Header.Set("Content-Type", "application/json")
	return r
}

// nextFunc is a function as a Next.
type nextFunc func(http.ResponseWriter, *http.Request) error

func (f nextFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) error { return f(w, r) }

// jsonNext answers every request with body as application/json.
func jsonNext(body string) Next {
	return nextFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, err := w.Write([]byte(body))
		return err
	})
}
