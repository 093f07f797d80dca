package httpmeta

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// recordingObserver keeps each exchange's pointer and view.
type recordingObserver struct {
	exchanges []*Exchange
	views     []*View
}

func (o *recordingObserver) Started(_ *http.Request, x *Exchange) {
	o.exchanges = append(o.exchanges, x)
	o.views = append(o.views, x.View())
}
func (*recordingObserver) Fallback(string)     {}
func (*recordingObserver) RunOnceAnswered(int) {}
func (*recordingObserver) Done(*Exchange)      {}

// replyWithTool is a chat reply naming tool and its usage.
func replyWithTool(tool string, input int) string {
	return `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"meta":{"tools_used":["` + tool +
		`"]}}],"usage":{"prompt_tokens":` + strconv.Itoa(input) + `,"completion_tokens":1,"total_tokens":` + strconv.Itoa(input+1) + `}}`
}

// TestExchangeMemoryUsedAgain: an exchange's memory serves later requests
// once Serve returned, and neither the later replies nor what was read of
// the earlier ones through their views show anything of another request.
// Replies alternate between a tool and usage and none of either, so stale
// meta in reused memory shows in the next reply.
func TestExchangeMemoryUsedAgain(t *testing.T) {
	obs := &recordingObserver{}
	cfg := DefaultConfig()
	cfg.Observer = obs
	h := New(cfg)
	const runs = 20
	for i := range runs {
		reply, tool := replyPlain, ""
		if i%2 == 0 {
			tool = "tool" + strconv.Itoa(i)
			reply = replyWithTool(tool, 100+i)
		}
		w := httptest.NewRecorder()
		must(t, h.Serve(w, chatPost(), jsonNext(reply)), "Serve")
		got := gjson.Get(w.Body.String(), "meta.tools_used.0").String()
		if got != tool {
			t.Fatalf("reply %d: tools_used %q, want %q: %s", i, got, tool, w.Body)
		}
	}
	reused := false
	seen := map[*Exchange]bool{}
	for i, x := range obs.exchanges {
		reused = reused || seen[x]
		seen[x] = true
		v := obs.views[i]
		want, wantIn := "", int64(0)
		if i%2 == 0 {
			want, wantIn = "tool"+strconv.Itoa(i), int64(100+i)
		}
		u := v.Usage()
		if v.Tools() != want || u.Input != wantIn || u.Known() != (i%2 == 0) || v.Mode() != ModeJSON {
			t.Errorf("view %d after the requests: tools %q, input %d, mode %v; want %q, %d, json", i, v.Tools(), u.Input, v.Mode(), want, wantIn)
		}
	}
	// sync.Pool may drop what it is given (always a quarter of it under
	// the race detector), but not 19 times in a row.
	if !reused {
		t.Errorf("%d requests in a row, each in new memory: exchanges are not used again", runs)
	}
}

// TestRequestBodyOutlivesExchange: net/http's RoundTrip may read a request
// body after it returned the response. The body the handler put in place
// must still read as that request's bytes after Serve returned and another
// request used the exchange's memory.
func TestRequestBodyOutlivesExchange(t *testing.T) {
	h := New(DefaultConfig())
	var bodies []io.Reader
	next := nextFunc(func(w http.ResponseWriter, r *http.Request) error {
		bodies = append(bodies, r.Body) // answered before reading it
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write([]byte(replyPlain))
		return err
	})
	requests := []string{
		`{"model":"first","messages":[{"role":"user","content":"one"}]}`,
		`{"model":"second-model","messages":[{"role":"user","content":"two two"}]}`,
	}
	for _, body := range requests {
		r := httptest.NewRequest(http.MethodPost, DefaultChatPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		must(t, h.Serve(httptest.NewRecorder(), r, next), "Serve")
	}
	for i, b := range bodies {
		got, err := io.ReadAll(b)
		must(t, err, "reading a body after the request")
		if string(got) != requests[i] {
			t.Errorf("request %d's body read after the request: %q, want %q", i, got, requests[i])
		}
	}
}

// TestViewKeepsReplyModel: each view read after its request shows the
// model its own reply named, kept in the view's memory when it fits and
// copied when it does not, whatever later requests wrote.
func TestViewKeepsReplyModel(t *testing.T) {
	obs := &recordingObserver{}
	cfg := DefaultConfig()
	cfg.Observer = obs
	h := New(cfg)
	long := strings.Repeat("a-long-model-name/", 4) // past the view's own room
	var models []string
	for i := range 12 {
		model := "model-" + strconv.Itoa(i)
		if i%3 == 0 {
			model = long + strconv.Itoa(i)
		}
		models = append(models, model)
		reply := `{"id":"c1","model":"` + model + `","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"}}]}`
		must(t, h.Serve(httptest.NewRecorder(), chatPost(), jsonNext(reply)), "Serve")
	}
	for i, v := range obs.views {
		if got := v.ModelServed(); got != models[i] {
			t.Errorf("view %d after the requests: model %q, want %q", i, got, models[i])
		}
	}
}
