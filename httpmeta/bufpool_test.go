package httpmeta

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/llm-meta/llm_meta/translate"
)

// TestReplyBuffersGoBackOnce: after each kind of JSON reply, no buffer is in
// the pool twice (two requests would then share one).
func TestReplyBuffersGoBackOnce(t *testing.T) {
	for name, body := range map[string]string{
		"tool calls (meta added)":               replyTools(0, 0, 40),
		"nothing to change":                     replyPlain,
		"choice meta (moved)":                   replyChoiceMeta,
		"not JSON":                              `{"choices":[{"meta":{"a":1}`,
		"meta too large for the scratch buffer": `{"choices":[{"meta":{"big":"` + strings.Repeat("x", 2000) + `"}}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			h := New(DefaultConfig())
			must(t, h.Serve(httptest.NewRecorder(), chatPost(), jsonNext(body)), "Serve")
			var got []*replyBuf
			for range 4 {
				rb := getReplyBuf(16)
				for _, o := range got {
					if rb == o || sameMemory(rb.b, o.b) {
						t.Fatal("the pool gave the same buffer twice")
					}
				}
				got = append(got, rb)
			}
			for _, rb := range got {
				putReplyBuf(rb, rb.b)
			}
		})
	}
}

// replyTools is a JSON reply with one tool call named after g and i, and
// content of n bytes.
func replyTools(g, i, n int) string {
	return fmt.Sprintf(`{"id":"c%d_%d","choices":[{"index":0,"message":{"role":"assistant","content":%q,"tool_calls":[{"id":"x","type":"function","function":{"name":"tool_%d_%d","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
		g, i, strings.Repeat(string(rune('a'+g)), n), g, i)
}

// TestConcurrentJSONRepliesKeepTheirBytes: many JSON replies at once, of
// different sizes, through pooled buffers: each client gets exactly its own
// reply, rewritten.
func TestConcurrentJSONRepliesKeepTheirBytes(t *testing.T) {
	h := New(DefaultConfig())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				reply := replyTools(g, i, (i*37)%3000)
				want, _, ok := translate.RewriteJSONReply([]byte(reply), nil, translate.JSONOptions{})
				if !ok {
					t.Errorf("test reply is not JSON: %s", reply)
					return
				}
				rec := httptest.NewRecorder()
				if err := h.Serve(rec, chatPost(), jsonNext(reply)); err != nil {
					t.Error(err)
					return
				}
				if rec.Body.String() != string(want) {
					t.Errorf("goroutine %d request %d:\n got %s\nwant %s", g, i, rec.Body.String(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// sameMemory reports whether a and b start at the same array element.
func sameMemory(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}
