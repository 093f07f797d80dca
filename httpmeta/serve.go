package httpmeta

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llm-meta/llm_meta/translate"
)

// exchange is the per-request state shared by the request side and the
// response writer. Nothing in it outlives the request.
type exchange struct {
	h     *Handler
	start time.Time

	kind       translate.RequestKind // the protocol the request speaks (SPEC 4.5, end)
	model      string                // model of the request sent upstream (see requestModel)
	reqBody    []byte                // the request body, when its model is read only if needed
	runOnce    bool                  // answer one {content, meta} JSON (SPEC 6.1)
	edgeStream bool                  // the edge endpoint with x-stream: true (SPEC 6.3)
	endpoint   bool                  // the request came to one of the two endpoints
	plainText  bool                  // run-once answer as text/plain (Accept)
	structured *translate.ReplyStream
	wantSplit  bool            // structured mode on (JSON replies split too)
	meta       translate.Meta  // derived from the request (prompt_trimmed_to)
	reply      translate.Reply // the record of the upstream's reply, whatever its protocol
	last       *lasting        // what may be read after the request (see lasting)

	withholdUsage bool   // the client did not ask for the usage chunk the module asked for (SPEC 9.1)
	openClawKey   string // the OpenClaw session of the request (SPEC 10), "" when off
}

// Serve handles one request in front of next (SPEC 2 to 6). An error is
// next's, returned untouched once the handler has written nothing; the
// caller's error handling takes it from there.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, next Next) error {
	if r.Method != http.MethodPost {
		return next.ServeHTTP(w, r)
	}
	st := h.newExchange()
	x := &st.x
	if p := r.URL.Path; p != "" && (p == h.RunOncePath || p == h.EdgePath) {
		if done := h.prepareEndpoint(w, r, x, p == h.EdgePath); done {
			st.release()
			return nil
		}
	} else {
		x.kind = translate.RequestKindOf(r.URL.Path, r.Header)
		x.model = x.kind.Model(r.URL.Path)
		h.prepareRequest(r, x)
	}
	// Read identity bodies from the upstream (SPEC 2); encode in front of us
	// still compresses towards the client.
	delete(r.Header, "Accept-Encoding")
	if x.runOnce {
		x.plainText = prefersText(canonicalHeader(r.Header, "Accept"))
		x.wantContent()
	}
	if x.wantSplit {
		x.structured = translate.NewReplyStream(int(h.MaxBufferBytes))
	}
	x.reply.Prices = h.Prices
	x.reply.Timing, x.reply.Start = h.Timing, x.start
	x.reply.ToolArguments = h.ToolArguments
	rw := st.writer(w, r)
	if h.Observer != nil {
		h.Observer.Started(r, st)
	}
	// Not deferred: after a panic the exchange is left to the garbage
	// collector, in whatever state it is, rather than used again.
	err := rw.serve(next)
	st.release()
	return err
}

// Exchange is everything one request needs, in one piece of memory. Its
// methods tell an Observer what the handler did with the reply, until Serve
// returns: the memory then goes back to a pool, and what may be read later
// is kept apart (View).
type Exchange struct {
	x     exchange
	rw    responseWriter
	parts translate.JSONReplyParts // a forwarded JSON reply, rewritten (forwardJSON)
}

// exchanges holds Exchanges between requests, zeroed. An Exchange is about
// 2 KiB, the largest allocation of a request: one allocated per request
// would have the garbage collector sweep and mark more than the module's
// own work costs.
var exchanges = sync.Pool{New: func() any { return new(Exchange) }}

// lasting is the part of an exchange that may be read after Serve
// returned, allocated on its own: net/http's RoundTrip may still read the
// request body after the response came (it closes it "even after RoundTrip
// returns"), and Caddy's access log reads the placeholders after the
// handlers returned.
type lasting struct {
	body bodyReader // the request body sent upstream, once read
	view View
}

func (h *Handler) newExchange() *Exchange {
	st := exchanges.Get().(*Exchange)
	st.x.h = h
	if h.clock {
		st.x.start = time.Now()
	}
	st.x.last = &lasting{view: View{ex: st}}
	return st
}

// release ends the exchange: the view keeps what it shows, nothing else
// refers to the exchange any more, and its memory goes back to the pool,
// zeroed, so that nothing of this request stays in it.
func (st *Exchange) release() {
	st.x.last.view.end()
	*st = Exchange{}
	exchanges.Put(st)
}

func (st *Exchange) writer(w http.ResponseWriter, r *http.Request) *responseWriter {
	st.rw.ResponseWriter = w
	st.rw.r = r
	st.rw.x = &st.x
	st.rw.ex = st
	return &st.rw
}

// prepareRequest applies SPEC 2 and 3 to an ordinary POST.
func (h *Handler) prepareRequest(r *http.Request, x *exchange) {
	if !isJSONContentType(canonicalHeader(r.Header, "Content-Type")) {
		return
	}
	body, whole := h.readBody(r, &x.last.body)
	if !whole {
		return
	}
	opts := h.Request
	opts.Kind = x.kind
	sent := body // the body as it goes upstream
	if h.OpenClaw != nil {
		defer func() { x.openClawKey = h.OpenClaw.PrepareSession(r, sent) }()
	}
	if translate.RequestUnchanged(body, opts) {
		// Nothing to change and no flag: forwarded as it came, and only a
		// converted stream ever asks for the model (requestModel).
		x.reqBody = body
		return
	}
	res, ok := translate.RewriteRequest(body, opts)
	if !ok {
		return
	}
	if x.model == "" { // a model the path names stays (SPEC 4.6)
		x.model = res.Model
	}
	x.runOnce = res.RunOnce
	x.wantSplit = res.Structured
	x.withholdUsage = res.WithholdUsage
	x.meta.Merge(&res.Meta)
	if res.Changed {
		sent = res.Body
		setBody(r, res.Body, &x.last.body)
	}
}

// wantContent asks the reply's protocol for its text (SPEC 6.1): a
// run-once reply's, or the edge stream's made from a whole JSON reply.
func (x *exchange) wantContent() {
	x.reply.WantContent = true
	x.reply.MaxContent = int(x.h.MaxBufferBytes)
}

// held reports whether the reply is answered in the shape of SPEC 6
// (run-once, the edge endpoint): its start is held until its format is
// known, and a failed or empty upstream reply is answered with a 502.
func (x *exchange) held() bool { return x.runOnce || x.edgeStream }

// maxEventBytes is the largest event or data-stream line read whole: a
// run-once reply is held anyway, so its events are read up to
// max_buffer_bytes (SPEC 6.1); a forwarded stream's up to max_event_bytes.
func (x *exchange) maxEventBytes() int64 {
	if x.runOnce {
		return x.h.MaxBufferBytes
	}
	return x.h.MaxEventBytes
}

// requestModel is the model of the request sent upstream, read from the
// body the first time it is asked for when prepareRequest left it unread.
func (x *exchange) requestModel() string {
	if x.reqBody != nil && x.model == "" {
		x.model = translate.RequestModel(x.reqBody)
		x.reqBody = nil
	}
	return x.model
}

// readBody reads the request body up to max_request_bytes. whole is false
// when the body is larger; the bytes read are then stitched back in front of
// the rest, so that the upstream still gets every byte. Either way r.Body is
// left readable from the start: a whole body from br.
func (h *Handler) readBody(r *http.Request, br *bodyReader) (body []byte, whole bool) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, true
	}
	max := h.MaxRequestBytes
	if r.ContentLength > max {
		h.fallback(reasonRequestTooLarge)
		return nil, false
	}
	var buf []byte
	if r.ContentLength > 0 {
		// One spare byte: the read that meets the end needs no new room.
		// Past firstRoom the buffer grows as bytes arrive (memlimit.go).
		buf = make([]byte, 0, firstCap(r.ContentLength+1, max+1))
	}
	buf, err := readUpTo(r.Body, buf, max+1)
	n := int64(len(buf))
	rest := r.Body
	if err != nil || n > max {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf), rest), rest}
		if err != nil {
			// The client's body broke off: the upstream gets what there was
			// and then the same error, as it would without us.
			return nil, false
		}
		h.fallback(reasonRequestTooLarge)
		return nil, false
	}
	br.Reset(buf)
	r.Body = br
	return buf, true
}

// readUpTo appends what rd yields to b until the end or until b holds limit
// bytes (io.Copy into a bytes.Buffer through io.LimitReader, without the
// buffer's own growth policy: b's capacity is used as it is).
func readUpTo(rd io.Reader, b []byte, limit int64) ([]byte, error) {
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = growTo(b, 1, limit)
		}
		room := b[len(b):cap(b)]
		if left := limit - int64(len(b)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := rd.Read(room)
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// bodyReader is a request body read from memory: io.NopCloser and
// bytes.NewReader in one, keeping bytes.Reader's WriteTo. The exchange
// holds the one a request is sent with.
type bodyReader struct{ bytes.Reader }

func newBodyReader(b []byte) *bodyReader {
	br := new(bodyReader)
	br.Reset(b)
	return br
}

// Close implements io.Closer.
func (*bodyReader) Close() error { return nil }

// setBody replaces the request body with body, read from br, keeping
// Content-Length consistent.
func setBody(r *http.Request, body []byte, br *bodyReader) {
	br.Reset(body)
	r.Body = br
	r.GetBody = func() (io.ReadCloser, error) { return newBodyReader(body), nil }
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.Header.Del("Transfer-Encoding")
	r.TransferEncoding = nil
}

// isJSONContentType: absent, application/json or */*+json (SPEC 2).
func isJSONContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, err := parseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// parseMediaType is mime.ParseMediaType without the parameters, answering
// the usual Content-Type values without the map that ParseMediaType
// allocates.
func parseMediaType(ct string) (string, error) {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return "application/json", nil
	case "text/event-stream", "text/event-stream; charset=utf-8", "text/event-stream;charset=utf-8":
		return "text/event-stream", nil
	case "text/plain", "text/plain; charset=utf-8", "text/plain;charset=utf-8":
		return "text/plain", nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	return mt, err
}

// prefersText reports whether an Accept header prefers text/plain over JSON;
// on equal weight the one listed first wins.
func prefersText(accept string) bool {
	if accept == "" {
		return false
	}
	bestText, bestJSON := -1.0, -1.0
	textPos, jsonPos := 0, 0
	for i, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		switch mt {
		case "text/plain":
			if q > bestText {
				bestText, textPos = q, i
			}
		case "application/json":
			if q > bestJSON {
				bestJSON, jsonPos = q, i
			}
		}
	}
	if bestText <= 0 {
		return false
	}
	return bestText > bestJSON || (bestText == bestJSON && textPos < jsonPos)
}

// errTooLarge stops the upstream read of a run-once reply over the limit.
var errTooLarge = errors.New("llm_meta: reply larger than max_buffer_bytes")
