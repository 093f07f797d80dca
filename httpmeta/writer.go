package httpmeta

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/llm-meta/llm_meta/translate"
)

// state is what the writer does with the body, decided once at WriteHeader
// or, while the format is undecided, by the start of the body
// (translate.Detector). What a buffered body is for follows from what
// decided it: the status, the format, whether the reply is held.
type state int

const (
	stNew    state = iota // no status yet
	stPass                // untouched: the body goes straight through
	stSniff               // holding the start of the body until it decides the format
	stStream              // through the streaming pipeline: to the client, or into a run-once reply
	stBuffer              // reading the whole body before answering
)

// responseWriter wraps the downstream writer the way Caddy's encode does:
// it decides at WriteHeader, routes Write, ReadFrom and FlushError through
// itself, keeps Unwrap, and never writes after next returned an error.
type responseWriter struct {
	http.ResponseWriter
	r  *http.Request
	x  *exchange
	ex *Exchange // the exchange x and this writer belong to

	state   state
	status  int
	format  translate.Format
	detect  translate.Detector // decides format, from the headers and the start of the body
	buf     bytes.Buffer
	bodyBuf *replyBuf // the pooled memory of buf, for a forwarded JSON reply

	chain io.WriteCloser // the streaming pipeline (translate.OpenStream)
	stats translate.Stats

	forwarded bool  // the status line went downstream
	produced  bool  // bytes went downstream since the last flush
	err       error // sticky downstream error
	over      bool  // a run-once reply outgrew max_buffer_bytes

	bytesIn, bytesOut int64
}

// serve calls next and completes the reply.
func (rw *responseWriter) serve(next Next) error {
	err, aborted := rw.callNext(next)
	if err != nil {
		if rw.answersUpstreamFailure(err) {
			return nil
		}
		// Never write after an error: Caddy's error handling (or the
		// client's broken connection) takes it from here.
		return err
	}
	if aborted {
		return rw.abort()
	}
	return rw.finish()
}

// callNext runs next. While nothing has gone downstream (buffering,
// sniffing, run-once), an upstream that breaks off mid-body makes
// reverse_proxy panic with http.ErrAbortHandler; that is caught so the
// module can still answer. Any other panic, or one after bytes went
// downstream, goes on up.
func (rw *responseWriter) callNext(next Next) (err error, aborted bool) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler && !rw.forwarded {
				aborted = true
				return
			}
			panic(v)
		}
	}()
	return next.ServeHTTP(rw, rw.r), false
}

// answersUpstreamFailure answers an error returned by next before any reply
// began (reverse_proxy's failed dial or round trip, a 502 or 504
// HandlerError) itself when the request is an endpoint's or a run-once one:
// those always answer in the edge function's shape, 502 {"error": …} (SPEC
// 6.4), as the edge function answers a failed fetch. It does so only while
// the client is still there; otherwise, for every other request, and after
// next began a reply, the error goes on to the caller (Caddy) as it came.
func (rw *responseWriter) answersUpstreamFailure(err error) bool {
	if !(rw.x.endpoint || rw.x.runOnce) || rw.state != stNew || rw.forwarded || rw.r.Context().Err() != nil {
		return false
	}
	code := http.StatusBadGateway
	if f := rw.x.h.UpstreamStatus; f != nil {
		if c := f(err); c != 0 {
			code = c
		}
	}
	if code == 499 { // reverse_proxy's "client closed the request"
		return false
	}
	msg := statusText(code)
	switch code {
	case http.StatusBadGateway:
		msg = "Upstream connection failed"
	case http.StatusGatewayTimeout:
		msg = "Upstream timed out"
	}
	if l := rw.x.h.Logger; l != nil {
		l.Warn("llm_meta upstream failed", append(errorFields(err), zap.Int("status", code))...) // the error's kind, never its text
	}
	defer rw.logDone()
	rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON(msg))
	return true
}

// WriteHeader records the status and decides what to do with the body.
func (rw *responseWriter) WriteHeader(status int) {
	if status >= 100 && status < 200 && status != http.StatusSwitchingProtocols {
		rw.ResponseWriter.WriteHeader(status) // 1xx pass at once; the final status follows
		return
	}
	if rw.state != stNew {
		return
	}
	rw.status = status
	rw.decide()
}

// Write routes the body by the decided state. It reports len(p) consumed
// unless the downstream write failed (sticky) or a run-once reply is over
// its limit, which stops the upstream read.
func (rw *responseWriter) Write(p []byte) (int, error) {
	if rw.err != nil {
		return 0, rw.err
	}
	if rw.state == stNew {
		rw.WriteHeader(http.StatusOK)
	}
	rw.bytesIn += int64(len(p))
	switch rw.state {
	case stPass:
		n, err := rw.ResponseWriter.Write(p)
		rw.bytesOut += int64(n)
		if err != nil {
			rw.err = err
		}
		return n, err
	case stSniff:
		rw.sniff(p, false)
	case stStream:
		rw.feed(p)
	case stBuffer:
		rw.bufferBody(p)
	}
	if rw.withheld() {
		// Nothing goes to the client yet, so no failed write would stop
		// the upstream read: the request's context does (SPEC 8.1).
		if err := rw.r.Context().Err(); err != nil && rw.err == nil {
			rw.err = err
		}
	}
	rw.flushIfProduced()
	if rw.err != nil {
		return 0, rw.err
	}
	return len(p), nil
}

// withheld reports whether the body is read whole before anything goes
// downstream: buffered, or a stream read into a run-once reply.
func (rw *responseWriter) withheld() bool {
	return rw.state == stBuffer || rw.state == stStream && rw.x.runOnce
}

// feed writes upstream bytes into the pipeline.
func (rw *responseWriter) feed(p []byte) {
	if _, err := rw.chain.Write(p); err != nil {
		rw.fail(err)
	}
}

// fail records a pipeline error: a downstream write error, or a run-once
// reply over its limit.
func (rw *responseWriter) fail(err error) {
	if err == translate.ErrContentTooLarge || err == errTooLarge {
		rw.over = true
		err = errTooLarge
	}
	rw.err = err
}

// bufferBody keeps a body that is answered whole, within max_buffer_bytes.
func (rw *responseWriter) bufferBody(p []byte) {
	max := rw.x.h.MaxBufferBytes
	if int64(rw.buf.Len()+len(p)) <= max {
		growBuffer(&rw.buf, len(p), max) // never past the limit
		rw.buf.Write(p)
		return
	}
	switch {
	case !rw.x.held():
		// A JSON reply too large to rewrite: forwarded untouched from here on.
		rw.x.h.fallback(reasonReplyTooLarge)
		rw.state = stPass
		rw.forwardHeader()
		rw.writeOut(rw.buf.Bytes())
		rw.buf.Reset()
		rw.writeOut(p)
	case rw.noReply():
		// A body after 204 or 205 is not read.
	case rw.upstreamFailed():
		// Only the message is needed: keep the start, drop the rest.
		if room := int(max) - rw.buf.Len(); room > 0 {
			rw.buf.Write(p[:room])
		}
	default:
		rw.fail(errTooLarge)
	}
}

// FlushError flushes downstream only once bytes may go there; while the
// writer buffers or sniffs it is a no-op, so that the status is not
// committed early (caddy#6144). When rewriting a stream it flushes only
// what the writer wrote since its own last flush: it flushes after each
// write that produced output, so the flush reverse_proxy makes right after
// that write has nothing left to do. (Each flush costs a write deadline
// reset in Caddy's IdleTimeoutWriter.)
func (rw *responseWriter) FlushError() error {
	if !rw.forwarded || rw.withheld() {
		return nil
	}
	if rw.state != stPass && !rw.produced {
		return nil
	}
	rw.produced = false
	return http.NewResponseController(rw.ResponseWriter).Flush()
}

func (rw *responseWriter) flushIfProduced() {
	if rw.produced && rw.err == nil {
		rw.produced = false
		if err := http.NewResponseController(rw.ResponseWriter).Flush(); err != nil {
			rw.err = err
		}
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (rw *responseWriter) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// Push passes HTTP/2 server push through, as Caddy's own wrappers do.
func (rw *responseWriter) Push(target string, opts *http.PushOptions) error {
	if p, ok := rw.ResponseWriter.(http.Pusher); ok {
		return p.Push(target, opts)
	}
	return http.ErrNotSupported
}

// ReadFrom sends the body through Write, so nothing bypasses the rewrite.
// The copy's buffer is a pooled one: io.Copy would allocate 32 KiB on every
// call from a reader that has no WriteTo (reverse_proxy never calls
// ReadFrom, but a handler such as file_server behind the module does).
func (rw *responseWriter) ReadFrom(r io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer(writerOnly{rw}, r, buf[:])
}

// copyBufSize is io.Copy's own buffer size.
const copyBufSize = 32 << 10

// copyBufs holds ReadFrom's buffers (as arrays: a pointer goes into a
// sync.Pool without a box).
var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// writerOnly hides ReadFrom so io.Copy uses Write (as encode does). It
// holds the writer's pointer alone, so that it goes into an io.Writer
// without an allocation.
type writerOnly struct{ rw *responseWriter }

func (w writerOnly) Write(p []byte) (int, error) { return w.rw.Write(p) }

// forwardHeader sends the status line downstream once.
func (rw *responseWriter) forwardHeader() {
	if rw.forwarded {
		return
	}
	rw.forwarded = true
	rw.ResponseWriter.WriteHeader(rw.status)
	rw.produced = true // the status line is waiting for a flush too
}

// writeOut writes bytes downstream.
func (rw *responseWriter) writeOut(p []byte) {
	if rw.err != nil || len(p) == 0 {
		return
	}
	n, err := rw.ResponseWriter.Write(p)
	rw.bytesOut += int64(n)
	rw.produced = true
	if err != nil {
		rw.err = err
	}
}

// clientOut is the last stage of a streaming pipeline: the client.
type clientOut struct{ rw *responseWriter }

func (c clientOut) Write(p []byte) (int, error) {
	c.rw.writeOut(p)
	if c.rw.err != nil {
		return 0, c.rw.err
	}
	return len(p), nil
}

// statusText is the text of an upstream status, for error messages.
func statusText(code int) string {
	if t := http.StatusText(code); t != "" {
		return strconv.Itoa(code) + " " + t
	}
	return "upstream status " + strconv.Itoa(code)
}

// toolsHeader is the X-Tools-Used value of a text/plain run-once answer.
func toolsHeader(m *translate.Meta) string { return translate.ToolsHeader(m.Tools()) }
