package httpmeta

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/llm-meta/llm_meta/translate"
)

// buildChain makes the streaming pipeline for the format, writing to out
// and reading into the exchange's reply record (translate.OpenStream). The
// request's model is read already (begin).
func (rw *responseWriter) buildChain(out io.Writer, errorsAsContent bool) io.WriteCloser {
	h, x := rw.x.h, rw.x
	model := x.model
	if model == "" {
		model = "unknown"
	}
	chain, _ := translate.OpenStream(rw.format, out, translate.StreamOptions{
		MaxEvent:        int(x.maxEventBytes()),
		FinalMeta:       h.FinalMeta,
		Stats:           &rw.stats,
		Warn:            h.warn,
		MaxMeta:         int(h.MaxMetaBytes),
		Reply:           &x.reply,
		BeforeEnd:       rw.endHook(),
		MarkInterrupted: h.MarkInterrupted,
		Chat: translate.ChatOptions{
			BareMeta:        h.BareMeta,
			Model:           model,
			Structured:      x.structured,
			ErrorsAsContent: errorsAsContent,
			WithholdUsage:   x.withholdUsage,
		},
	}, translate.ConvertOptions{
		Model:         x.model,
		MaxLine:       int(x.maxEventBytes()),
		HustleSummary: h.HustleSummary,
		Stats:         &rw.stats,
		Debug:         h.debug,
	}, &x.meta)
	return chain
}

// endHook is beforeEnd when something runs at the end of a reply (the
// OpenClaw look-up), else nil: a reply with nothing to wait for is written
// without the method value's allocation.
func (rw *responseWriter) endHook() func(*translate.Reply) {
	if rw.x.h.OpenClaw == nil {
		return nil
	}
	return rw.beforeEnd
}

// beforeEnd runs when a reply has ended, before its ending (or, for a JSON
// reply, its meta) is written: what has gone downstream is flushed first,
// so that only the ending waits for the OpenClaw look-up, at most its
// timeout (SPEC 10).
func (rw *responseWriter) beforeEnd(rep *translate.Reply) {
	rw.flushIfProduced()
	rw.x.h.openClawTools(rw.r, rw.x.openClawKey, rep.ID, rep.Meta.AddTool)
}

// openClawTools adds to add the tools the run runID of the session
// sessionKey ran, read from the OpenClaw gateway when the reply has ended;
// runID is the reply's id. A look-up that fails, is too slow or cannot be
// read adds nothing and is logged as the fallback openclaw_history; the
// reply goes on either way.
func (h *Handler) openClawTools(r *http.Request, sessionKey, runID string, add func(string)) {
	if h.OpenClaw == nil || sessionKey == "" || runID == "" {
		return
	}
	names, err := h.OpenClaw.Tools(r, sessionKey, runID)
	if err != nil {
		h.fallbackErr(reasonOpenClawHistory, err)
		return
	}
	for _, n := range names {
		add(n)
	}
}

// startStream begins reading a stream through the pipeline: to the client,
// or, for a run-once reply, into the record, which collects the text while
// nothing goes downstream.
func (rw *responseWriter) startStream() {
	rw.state = stStream
	if rw.x.runOnce {
		rw.chain = rw.buildChain(io.Discard, false)
		return
	}
	hdr := rw.Header()
	dropStreamValidators(hdr)
	if rw.format.Converted() || rw.x.edgeStream {
		setStreamHeaders(hdr)
	}
	rw.chain = rw.buildChain(clientOut{rw}, rw.x.edgeStream)
	rw.forwardHeader()
}

// dropStreamValidators removes what describes the upstream's body as a
// whole from a stream the module rewrites: its length, its validators.
func dropStreamValidators(hdr http.Header) {
	hdr.Del("Content-Length")
	hdr.Del("ETag")
	hdr.Del("Accept-Ranges")
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

// finish completes the reply once next has returned without error.
func (rw *responseWriter) finish() error {
	defer rw.logDone()
	if rw.state == stSniff {
		rw.sniff(nil, true)
	}
	switch rw.state {
	case stStream:
		if err := rw.chain.Close(); err != nil {
			rw.fail(err)
		}
		if !rw.x.runOnce {
			rw.flushIfProduced()
			return nil
		}
		// A run-once reply, answered from the stream read into its record.
		if rw.over {
			rw.runOnceTooLarge()
			return nil
		}
		rep := &rw.x.reply
		if msg, bad := rep.Err(); bad {
			rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(rep.Content(), &rep.Meta, msg))
			return nil
		}
		if rep.Cut || rep.Interrupted {
			// Cut short (SPEC 6.4, 11.1): the content so far, and the
			// meta, with interrupted when the stream ended cleanly.
			msg := msgInterrupted
			if rep.Cut {
				msg = msgNoTerminal
			}
			rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(rep.Content(), &rep.Meta, msg))
			return nil
		}
		rw.answerRunOnce(rep.Content(), &rep.Meta)
	case stBuffer:
		rw.finishBuffered()
	}
	return nil
}

// finishBuffered answers from a whole buffered body.
func (rw *responseWriter) finishBuffered() {
	x := rw.x
	body := rw.buf.Bytes()
	switch {
	case !x.held():
		rw.forwardJSON(body)
	case rw.noReply():
		rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON(msgNoReply))
	case rw.upstreamFailed():
		rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON(translate.UpstreamErrorMessage(body, statusText(rw.status))))
	case rw.format != translate.FormatJSON:
		x.reply.Meta.Merge(&x.meta)
		rw.answerRunOnce(string(body), &x.reply.Meta)
	default:
		x.reply.Meta.Limit(int(x.h.MaxMetaBytes), x.h.warn)
		out, meta, ok := translate.RewriteJSONReply(body, &x.meta, translate.JSONOptions{
			Structured: x.wantSplit,
			Warn:       x.h.warn,
			Reply:      &x.reply,
			BeforeEnd:  rw.endHook(),
		})
		if !ok {
			x.reply.Meta.Merge(&x.meta) // not JSON: its text is the content
			rw.answerContent(string(body), &x.reply.Meta, nil)
			return
		}
		rw.stats.Events = 1
		content, errMsg, isErr := translate.JSONReplyText(out, &x.reply)
		if isErr {
			if _, protoErr := x.reply.Err(); protoErr {
				// An error its protocol read (a blocked Gemini prompt,
				// SPEC 4.6) answers as an error event does: the
				// message, the content (none) and the meta (6.4).
				rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON("", meta, errMsg))
				return
			}
			// A 2xx reply that carries only an error (SPEC 6.4).
			rw.answerJSON(http.StatusBadGateway, translate.ErrorJSON(errMsg))
			return
		}
		rw.answerContent(content, meta, out)
	}
}

// forwardJSON forwards a whole JSON reply with its meta (SPEC 4.2), written
// as pieces of the body around the few new bytes: a reply is held once,
// never copied (translate.JSONReplyParts). A body that is not JSON goes as
// it came.
func (rw *responseWriter) forwardJSON(body []byte) {
	x := rw.x
	x.reply.Meta.Limit(int(x.h.MaxMetaBytes), x.h.warn)
	parts := &rw.ex.parts
	if _, ok := parts.Rewrite(body, &x.meta, translate.JSONOptions{
		Structured: x.wantSplit,
		Warn:       x.h.warn,
		Reply:      &x.reply,
		BeforeEnd:  rw.endHook(),
	}); ok {
		rw.stats.Events = 1
		hdr := rw.Header()
		if parts.Changed() {
			// The canonical forms, deleted directly: Del("ETag") would
			// build "Etag" anew on every request.
			delete(hdr, "Etag")
			delete(hdr, "Content-Md5")
			delete(hdr, "Digest")
		}
		setContentLength(hdr, parts.Len())
		rw.forwardHeader()
		rw.writeParts(parts)
	} else {
		rw.forwardBody(body)
	}
	// Written: the pieces pointed into the body, which may now go back.
	putReplyBuf(rw.bodyBuf, body)
	rw.bodyBuf = nil
	rw.buf = bytes.Buffer{}
}

// writeParts writes a rewritten reply to the client in one Write: as it is
// when it is one piece of memory, copied into a pooled buffer when its
// pieces are small enough, and piece by piece otherwise, so that a large
// reply is still held only once. One Write matters: Caddy's server sets the
// connection's write deadline again on every Write
// (caddyhttp.IdleTimeoutWriter), which costs more than copying a few
// kilobytes.
func (rw *responseWriter) writeParts(parts *translate.JSONReplyParts) {
	if rw.err != nil {
		return
	}
	if whole, ok := parts.Whole(); ok {
		rw.writeOut(whole)
		return
	}
	if rb := getReplyBuf(parts.Len()); rb != nil {
		out := parts.AppendTo(rb.b)
		rw.writeOut(out)
		putReplyBuf(rb, out)
		return
	}
	_, _ = parts.WriteTo(clientOut{rw}) // a failure is rw.err
}

// answerContent answers a run-once reply, or the edge endpoint's stream.
func (rw *responseWriter) answerContent(content string, meta *translate.Meta, reply []byte) {
	if rw.x.edgeStream {
		h := rw.x.h
		model := rw.x.requestModel()
		body := translate.StreamFromReply(reply, content, meta, model, h.FinalMeta, h.BareMeta)
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

// forwardBody writes a buffered reply as it came.
func (rw *responseWriter) forwardBody(body []byte) {
	setContentLength(rw.Header(), len(body))
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
	if rw.x.plainText {
		hdr := rw.Header()
		rw.resetHeaders()
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
		if tools := toolsHeader(meta); tools != "" {
			hdr.Set("X-Tools-Used", tools)
		}
		hdr.Set("Content-Length", strconv.Itoa(len(content)))
		rw.x.h.answered(len(content))
		rw.status = http.StatusOK
		rw.forwardHeader()
		rw.writeOut([]byte(content))
		return
	}
	body := translate.RunOnceJSON(content, meta, "")
	rw.x.h.answered(len(body))
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
	if rw.chain != nil {
		content = rw.x.reply.Content()
		meta = &rw.x.reply.Meta
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
	case rw.state == stStream && rw.x.runOnce:
		rw.x.reply.Broken = true // not a clean end: not interrupted (SPEC 11.1)
		_ = rw.chain.Close()
		msg := "Upstream connection failed mid-stream"
		rep := &rw.x.reply
		if m, bad := rep.Err(); bad {
			msg = m
		}
		rw.answerJSON(http.StatusBadGateway, translate.RunOnceJSON(rep.Content(), &rep.Meta, msg))
		return nil
	case rw.state == stBuffer && rw.x.held():
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
