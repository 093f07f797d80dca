package httpmeta

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestLargeJSONReplyHeldOnce: a 1 MiB JSON reply with a tool call is
// forwarded with its meta without a second copy of it (held at most
// once): the handler allocates the buffer that receives it (the
// upstream writes it at once here, so it is sized once) and little else; a
// rewritten copy would double that. The upstream's bytes and the client's
// memory are made before counting, so only the handler's allocations count.
func TestLargeJSONReplyHeldOnce(t *testing.T) {
	const size = 1 << 20
	reply := []byte(`{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"` +
		strings.Repeat("x", size) + `","tool_calls":[{"id":"x","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`)
	next := nextFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		_, err := w.Write(reply)
		return err
	})
	h := New(DefaultConfig())
	client := &sink{body: make([]byte, 0, len(reply)+1024)}
	serve := func() {
		client.reset()
		must(t, h.Serve(client, chatPost(), next), "Serve")
	}
	serve()
	if len(client.body) <= len(reply) || gjson.GetBytes(client.body, "meta.tools_used").Raw != `["search"]` {
		t.Fatalf("the reply came back without its meta (%d bytes)", len(client.body))
	}
	const runs = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		serve()
	}
	runtime.ReadMemStats(&after)
	perReply := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("the handler allocated %d bytes per reply", perReply)
	if perReply > size*3/2 {
		t.Errorf("the handler allocated %d bytes for a %d-byte reply: it was copied", perReply, len(reply))
	}
}

// sink is a client end whose memory is made once: it keeps the last body.
type sink struct {
	hdr  http.Header
	body []byte
}

func (s *sink) reset() {
	s.hdr = http.Header{}
	s.body = s.body[:0]
}

func (s *sink) Header() http.Header { return s.hdr }
func (s *sink) WriteHeader(int)     {}
func (s *sink) Write(p []byte) (int, error) {
	s.body = append(s.body, p...)
	return len(p), nil
}
