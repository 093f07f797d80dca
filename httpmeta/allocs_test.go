package httpmeta

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// These tests pin what a request allocates by comparing two requests that
// differ in one thing, each allocation counted over many runs
// (testing.AllocsPerRun): what the harness allocates is the same on both
// sides, so the difference is the handler's. Under the race detector
// sync.Pool drops a quarter of what is put back, so the two sides may
// differ by one allocation per request on average (allocDiffAllowed); the
// faults these tests pin cost two.

// viewObserver takes each exchange's view, as Caddy's placeholders do.
type viewObserver struct{ last *View }

func (o *viewObserver) Started(_ *http.Request, x *Exchange) { o.last = x.View() }
func (*viewObserver) Fallback(string)                        {}
func (*viewObserver) RunOnceAnswered(int)                    {}
func (*viewObserver) Done(*Exchange)                         {}

// allocDiffAllowed is how far two counts of allocsPerJSONRequest may be
// apart and still be the same: none, but one under the race detector.
func allocDiffAllowed() float64 {
	if raceEnabled {
		return 1
	}
	return 0
}

// allocsPerJSONRequest counts the allocations of one chat JSON request
// answered by next, through a handler whose observer takes the view.
func allocsPerJSONRequest(t *testing.T, next Next) float64 {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Observer = &viewObserver{}
	h := New(cfg)
	w := httptest.NewRecorder()
	serve := func() {
		w.Body.Reset()
		if err := h.Serve(w, chatPost(), next); err != nil {
			t.Fatal(err)
		}
	}
	serve()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	return testing.AllocsPerRun(200, serve)
}

// TestReplyModelCostsNoAllocation: a JSON reply that names its model is
// compared with the request's (SPEC 11.2), which is read from the request's
// body at the reply's end without copying it, and the view keeps the
// reply's model in its own memory: such a reply allocates no more than
// one that names none (copying the request's model, or the reply's for
// the view, would cost one each).
func TestReplyModelCostsNoAllocation(t *testing.T) {
	const usage = `,"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`
	named := `{"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]` + usage
	unnamed := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}]` + usage
	withModel := allocsPerJSONRequest(t, jsonNext(named))
	without := allocsPerJSONRequest(t, jsonNext(unnamed))
	if d := withModel - without; d > allocDiffAllowed() || -d > allocDiffAllowed() {
		t.Errorf("a reply naming its model: %v allocations per request, %v for one naming none", withModel, without)
	}
}

// noWriteTo is a reader without WriteTo, held by pointer (no allocation to
// pass as an io.Reader): io.Copy then needs a buffer.
type noWriteTo struct{ r *bytes.Reader }

func (n noWriteTo) Read(p []byte) (int, error) { return n.r.Read(p) }

// TestReadFromAllocatesNoBuffer: a reply that next hands over through
// ReadFrom (as http.ServeContent does) allocates what the same reply
// written with Write allocates: ReadFrom's copy buffer is a pooled one,
// not io.Copy's 32 KiB per call.
func TestReadFromAllocatesNoBuffer(t *testing.T) {
	body := []byte(replyPlain)
	src := bytes.NewReader(body)
	header := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
	}
	byWrite := allocsPerJSONRequest(t, nextFunc(func(w http.ResponseWriter, _ *http.Request) error {
		header(w)
		_, err := w.Write(body)
		return err
	}))
	byReadFrom := allocsPerJSONRequest(t, nextFunc(func(w http.ResponseWriter, _ *http.Request) error {
		header(w)
		src.Reset(body)
		_, err := w.(io.ReaderFrom).ReadFrom(noWriteTo{src})
		return err
	}))
	if d := byReadFrom - byWrite; d > allocDiffAllowed() || -d > allocDiffAllowed() {
		t.Errorf("a reply through ReadFrom: %v allocations per request, %v through Write", byReadFrom, byWrite)
	}
}
