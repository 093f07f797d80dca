package httpmeta

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/translate"
)

// canonicalHeader is hdr.Get for a key already in canonical form, without
// Get's canonicalisation of it on every call (which allocates for keys such
// as X-Vercel-AI-…, and costs a pass over the key for any other). Headers
// net/http parsed, and those set through Header's methods, are stored
// under canonical keys.
func canonicalHeader(hdr http.Header, key string) string {
	if v := hdr[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// untouchable reports whether the reply must pass as it came whatever the
// mode: a body that is not ours to read.
func (rw *responseWriter) untouchable() bool {
	if rw.r.Method == http.MethodHead || rw.status == http.StatusNoContent ||
		rw.status == http.StatusNotModified || rw.status == http.StatusSwitchingProtocols ||
		rw.status == http.StatusPartialContent {
		return true
	}
	ce := canonicalHeader(rw.Header(), "Content-Encoding")
	return ce != "" && !strings.EqualFold(ce, "identity")
}

// decide picks the state at WriteHeader: from the status, and for a 2xx
// reply from what translate's Detector answers to its headers.
func (rw *responseWriter) decide() {
	x := rw.x
	if x.held() && rw.noReply() {
		rw.startBuffer() // answered with the 502 of SPEC 6.4
		return
	}
	if rw.untouchable() {
		rw.pass()
		return
	}
	if rw.upstreamFailed() {
		if x.held() {
			rw.startBuffer()
			return
		}
		rw.pass()
		return
	}
	hdr := rw.Header()
	x.reply.SetCostHeader(canonicalHeader(hdr, "X-Litellm-Response-Cost")) // LiteLLM's own figure (SPEC 9.2)
	mt, _ := parseMediaType(canonicalHeader(hdr, "Content-Type"))
	rw.follow(rw.detect.Headers(x.kind, translate.ReplyHeaders{
		MediaType: mt,
		Header:    hdr,
		Path:      rw.r.URL.Path,
		Held:      x.held(),
	}, x.h.ConvertStreams, int(x.maxEventBytes())), nil, false)
}

// noReply reports whether the upstream answered 204 or 205: a held reply
// then has nothing to answer with.
func (rw *responseWriter) noReply() bool {
	return rw.status == http.StatusNoContent || rw.status == http.StatusResetContent
}

// upstreamFailed reports whether the upstream's status is outside 2xx.
func (rw *responseWriter) upstreamFailed() bool { return rw.status < 200 || rw.status >= 300 }

// sniff shows the Detector the start of the body with p, the bytes just
// come (none at the end of the body: end), and follows its answer. The
// start not yet passed on is p alone when nothing was held before, handled
// in place when it decides, as the first write usually does; else it is
// rw.buf, p appended.
func (rw *responseWriter) sniff(p []byte, end bool) {
	held, inBuf := p, rw.buf.Len() > 0
	if inBuf {
		growBuffer(&rw.buf, len(p), rw.x.maxEventBytes())
		rw.buf.Write(p)
		held = rw.buf.Bytes()
	}
	rw.follow(rw.detect.Body(held, len(p), end), held, inBuf)
}

// follow does what the Detector answered about held, the start of the body
// not yet passed on (inBuf: held is rw.buf's): the headers and the
// answer's lead go out when they may; once the format is decided its work
// begins with the rest of held; until then the rest is held in rw.buf.
func (rw *responseWriter) follow(a translate.Answer, held []byte, inBuf bool) {
	if a.Early {
		// Whichever protocol the first event names, the headers stay the
		// upstream's, so they go now with what does not decide it.
		dropStreamValidators(rw.Header())
		rw.forwardHeader()
		rw.writeOut(held[:a.Lead])
		held = held[a.Lead:]
		if inBuf {
			rw.buf.Next(a.Lead)
		}
	}
	rw.format = a.Format
	if !a.Decided() {
		rw.state = stSniff
		if !inBuf {
			rw.buf.Write(held)
		}
		return
	}
	rw.begin()
	switch {
	case len(held) == 0:
		return
	case rw.state == stBuffer && inBuf:
		return // the held bytes are already the start of the buffer
	case rw.state == stPass:
		rw.writeOut(held)
	case rw.state == stBuffer:
		rw.bufferBody(held)
	default:
		rw.feed(held) // the pipeline does not use rw.buf
	}
	if inBuf {
		rw.buf = bytes.Buffer{} // not needed any more: let its memory go with it
	}
}

// begin starts the work for a decided format, and tells the reply record
// what the request asked for, once.
func (rw *responseWriter) begin() {
	x := rw.x
	stream := rw.format.Stream()
	if stream {
		// A stream's pipeline names the model in the chunks it makes:
		// read now, and the record told it read, so that the request's
		// body is not read again at the end (model_served and cost, SPEC
		// 9.2, 11.2). A JSON reply's is read only if the reply names one.
		x.requestModel()
	}
	x.reply.SetRequest(x.model, x.reqBody)
	switch {
	case rw.format == translate.FormatJSON:
		if x.edgeStream {
			// One content chunk of the reply's text (SPEC 6.3), whatever
			// protocol the JSON is in (a Responses object's output text,
			// an Anthropic message's text blocks).
			x.wantContent()
		}
		rw.startBuffer()
	case stream:
		rw.startStream()
	case x.runOnce:
		rw.startBuffer() // its text is the content
	default:
		rw.pass()
	}
}

func (rw *responseWriter) pass() {
	rw.state = stPass
	rw.forwardHeader()
}

// startBuffer begins reading a body whole: a JSON reply forwarded with its
// meta (SPEC 4.2), or a held reply the module answers itself (SPEC 6).
func (rw *responseWriter) startBuffer() {
	rw.state = stBuffer
	// Size the buffer once when the length is known.
	n := int64(0)
	if cl := rw.Header()["Content-Length"]; len(cl) == 1 {
		if v, err := strconv.ParseInt(cl[0], 10, 64); err == nil && v > 0 && v <= rw.x.h.MaxBufferBytes {
			n = v
		}
	}
	if !rw.x.held() {
		// Given back by forwardJSON once written (bufpool.go).
		if rw.bodyBuf = getReplyBuf(int(n)); rw.bodyBuf != nil {
			rw.buf = *bytes.NewBuffer(rw.bodyBuf.b)
		}
	}
	rw.buf.Grow(firstCap(n, rw.x.h.MaxBufferBytes)) // the rest as bytes arrive
}
