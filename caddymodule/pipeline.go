package caddymodule

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/llm-meta/llm_meta/translate"
)

// buildChain makes the streaming pipeline for the format, writing OpenAI
// events to out: converter (for Vercel AI SDK streams), then the SSE
// rewriter that collects meta and writes the final meta event.
func (rw *responseWriter) buildChain(out io.Writer, errorsAsContent bool) stage {
	h, x := rw.x.h, rw.x
	model := x.requestModel()
	if model == "" {
		model = "unknown"
	}
	rw.rewriter = translate.NewSSERewriter(out, translate.SSEOptions{
		MaxEvent:        int(h.MaxEventBytes),
		FinalMeta:       h.finalMeta,
		BareMeta:        h.bareMeta,
		Model:           model,
		Structured:      x.structured,
		ErrorsAsContent: errorsAsContent,
		Stats:           &rw.stats,
		Warn:            h.warn,
		MaxMeta:         int(h.MaxMetaBytes),
	}, &x.meta)
	conv := translate.ConvertOptions{
		Model:         x.model,
		MaxLine:       int(h.MaxEventBytes),
		HustleSummary: h.hustle,
		Stats:         &rw.stats,
		Debug:         h.debug,
		Warn:          h.warn,
		MaxMeta:       int(h.MaxMetaBytes),
		MetaSink:      rw.rewriter.Meta(), // the meta never crosses a text boundary, whatever its size
	}
	switch rw.format {
	case fmtDataStream:
		return translate.NewDataStreamConverter(rw.rewriter, conv)
	case fmtUIStream:
		return translate.NewUIStreamConverter(rw.rewriter, conv)
	}
	return rw.rewriter
}

// startStream begins rewriting a stream to the client.
func (rw *responseWriter) startStream() {
	hdr := rw.Header()
	hdr.Del("Content-Length")
	hdr.Del("ETag")
	hdr.Del("Accept-Ranges")
	if rw.format != fmtSSE || rw.x.edgeStream {
		setStreamHeaders(hdr)
	}
	rw.state = stStream
	rw.chain = rw.buildChain(clientOut{rw}, rw.x.edgeStream)
	rw.forwardHeader()
}

// setStreamHeaders gives a converted or made-up stream the headers of an
// event stream (SPEC 5).
func setStreamHeaders(hdr http.Header) {
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Accel-Buffering", "no")
	hdr.Del("Content-Length")
	hdr.Del("X-Vercel-AI-Data-Stream")
	hdr.Del("X-Vercel-AI-UI-Message-Stream")
}

// startCollect begins reading a stream into a run-once reply.
func (rw *responseWriter) startCollect() {
	h := rw.x.h
	rw.state = stCollect
	rw.collector = translate.NewRunOnceCollector(int(h.MaxBufferBytes), int(h.MaxEventBytes))
	rw.chain = rw.buildChain(rw.collector, false)
}

// finish completes the reply once next has returned without error.
func (rw *responseWriter) finish() error {
	defer rw.logDone()
	if rw.state == stSniff {
		rw.sniff(true)
	}
	switch rw.state {
	case stStream:
		if err := rw.chain.Close(); err != nil {
			rw.fail(err)
		}
		rw.flushIfProduced()
	case stCollect:
		if err := rw.chain.Close(); err != nil {
			rw.fail(err)
		}
		if rw.over {
			rw.runOnceTooLarge()
			return nil
		}
		meta := rw.rewriter.Meta()
		if msg, bad := rw.collector.Err(); bad {
			rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(rw.collector.Content(), meta, msg))
			return nil
		}
		rw.answerRunOnce(rw.collector.Content(), meta)
	case stBuffer:
		rw.finishBuffered()
	}
	return nil
}

// finishBuffered answers from a whole buffered body.
func (rw *responseWriter) finishBuffered() {
	x := rw.x
	body := rw.buf.Bytes()
	switch rw.kind {
	case bufUpstreamErr:
		rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON(translate.UpstreamErrorMessage(body, statusText(rw.status))))
	case bufRunOnceText:
		rw.answerRunOnce(string(body), &x.meta)
	case bufJSON, bufRunOnce, bufEdgeJSON:
		// A pooled buffer for the rewritten reply, when it is forwarded.
		var outBuf *replyBuf
		var scratch []byte
		if rw.kind == bufJSON {
			if outBuf = getReplyBuf(len(body) + 256); outBuf != nil {
				scratch = outBuf.b
			}
		}
		x.replyMeta.Limit(int(x.h.MaxMetaBytes), x.h.warn)
		out, meta, ok := translate.RewriteJSONReply(body, &x.meta, translate.JSONOptions{
			Structured:  x.wantSplit,
			Warn:        x.h.warn,
			ForwardOnly: rw.kind == bufJSON,
			Buf:         scratch,
			Meta:        &x.replyMeta,
		})
		if !ok {
			if rw.kind == bufJSON {
				rw.forwardBody(body, false)
				rw.releaseBufs(body, outBuf, scratch)
				return
			}
			meta = &x.meta // not JSON: its text is the content
			rw.answerContent(string(body), meta, nil)
			return
		}
		rw.stats.Events = 1
		rw.x.finalMeta = meta
		switch rw.kind {
		case bufJSON:
			changed := len(out) != len(body) || len(out) > 0 && &out[0] != &body[0]
			rw.forwardBody(out, changed)
			if changed && !sameMemory(out, body) {
				// out is memory of our own: the scratch buffer, or one
				// made in its place.
				scratch = out
			}
			rw.releaseBufs(body, outBuf, scratch)
		default:
			rw.answerContent(translate.ReplyContent(out), meta, out)
		}
	}
}

// releaseBufs gives the buffers of a forwarded JSON reply back to the pool
// once written: nothing refers to them any more (the meta keeps copies of
// what it took from them). Each holder goes back once.
func (rw *responseWriter) releaseBufs(body []byte, outBuf *replyBuf, out []byte) {
	putReplyBuf(outBuf, out)
	putReplyBuf(rw.bodyBuf, body)
	rw.bodyBuf = nil
	rw.buf = bytes.Buffer{}
}

// answerContent answers a run-once reply, or the edge endpoint's stream.
func (rw *responseWriter) answerContent(content string, meta *translate.Meta, reply []byte) {
	if rw.kind == bufEdgeJSON {
		h := rw.x.h
		model := rw.x.requestModel()
		body := translate.StreamFromReply(reply, content, meta, model, h.finalMeta, h.bareMeta)
		hdr := rw.Header()
		setStreamHeaders(hdr)
		hdr.Del("ETag")
		rw.status = http.StatusOK
		rw.forwardHeader()
		rw.writeOut(body)
		rw.flushIfProduced()
		return
	}
	rw.answerRunOnce(content, meta)
}

// forwardBody writes a buffered JSON reply, rewritten or as it came.
func (rw *responseWriter) forwardBody(body []byte, changed bool) {
	hdr := rw.Header()
	if changed {
		// The canonical forms, deleted directly: Del("ETag") would build
		// "Etag" anew on every request.
		delete(hdr, "Etag")
		delete(hdr, "Content-Md5")
		delete(hdr, "Digest")
	}
	setContentLength(hdr, len(body))
	rw.forwardHeader()
	rw.writeOut(body)
}

// setContentLength sets Content-Length to n, leaving the header alone (and
// unallocated) when it already says exactly that.
func setContentLength(hdr http.Header, n int) {
	var b [20]byte
	v := strconv.AppendInt(b[:0], int64(n), 10)
	cl := hdr["Content-Length"]
	switch {
	case len(cl) == 1 && cl[0] == string(v):
	case len(cl) == 1:
		// The upstream's length, in a slice of this reply's own header
		// (reverse_proxy copies values with Add): changed in place.
		cl[0] = string(v)
	default:
		hdr.Set("Content-Length", string(v))
	}
}

// answerRunOnce writes the run-once answer (SPEC 6.1).
func (rw *responseWriter) answerRunOnce(content string, meta *translate.Meta) {
	rw.x.finalMeta = meta
	if rw.x.plainText {
		hdr := rw.Header()
		rw.resetHeaders()
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		if tools := toolsHeader(meta); tools != "" {
			hdr.Set("X-Tools-Used", tools)
		}
		hdr.Set("Content-Length", strconv.Itoa(len(content)))
		metrics.runOnceBytes.Observe(float64(len(content)))
		rw.status = http.StatusOK
		rw.forwardHeader()
		rw.writeOut([]byte(content))
		return
	}
	body := translate.RunOnceJSON(content, meta, "")
	metrics.runOnceBytes.Observe(float64(len(body)))
	rw.answerJSON(http.StatusOK, body)
}

// answerJSON writes an answer the module made itself.
func (rw *responseWriter) answerJSON(status int, body []byte) {
	hdr := rw.Header()
	rw.resetHeaders()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.status = status
	rw.forwardHeader()
	rw.writeOut(body)
}

// resetHeaders drops the upstream's body headers before the module answers
// with a body of its own.
func (rw *responseWriter) resetHeaders() {
	hdr := rw.Header()
	for _, k := range []string{"Content-Length", "Content-Encoding", "ETag", "Last-Modified", "Accept-Ranges",
		"Content-MD5", "Digest", "X-Vercel-AI-Data-Stream", "X-Vercel-AI-UI-Message-Stream", "Cache-Control", "X-Accel-Buffering"} {
		hdr.Del(k)
	}
}

// runOnceTooLarge answers a run-once reply that outgrew max_buffer_bytes.
func (rw *responseWriter) runOnceTooLarge() {
	msg := "Reply larger than max_buffer_bytes (" + strconv.FormatInt(rw.x.h.MaxBufferBytes, 10) + " bytes)"
	content := ""
	var meta *translate.Meta
	if rw.collector != nil {
		content = rw.collector.Content()
		meta = rw.rewriter.Meta()
	}
	rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(content, meta, msg))
}

// abort handles an upstream that broke off mid-body before anything went
// downstream.
func (rw *responseWriter) abort() error {
	defer rw.logDone()
	rw.err = nil
	if rw.over {
		rw.runOnceTooLarge()
		return nil
	}
	switch {
	case rw.state == stCollect:
		_ = rw.chain.Close()
		msg := "Upstream connection failed mid-stream"
		if m, bad := rw.collector.Err(); bad {
			msg = m
		}
		rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(rw.collector.Content(), rw.rewriter.Meta(), msg))
		return nil
	case rw.state == stBuffer && rw.kind != bufJSON:
		rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON("Upstream connection failed before the reply was complete"))
		return nil
	}
	// A plain proxied reply: give the client what came, then break the
	// connection as reverse_proxy itself would.
	if rw.state != stNew {
		rw.forwardHeader()
		rw.writeOut(rw.buf.Bytes())
		rw.flushIfProduced()
	}
	panic(http.ErrAbortHandler)
}
