package httpmeta

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/translate"
)

// formatOf reads the format from the headers alone (translate's mode
// table, SPEC 4, for a reply to a request of the exchange's protocol).
func (rw *responseWriter) formatOf(hdr http.Header) translate.Format {
	mt, _ := parseMediaType(canonicalHeader(hdr, "Content-Type"))
	return translate.DetectHeaders(rw.x.kind, translate.ReplyHeaders{
		MediaType: mt,
		Header:    hdr,
		Path:      rw.r.URL.Path,
		Held:      rw.x.runOnce || rw.x.edgeStream,
	}, rw.x.h.ConvertStreams)
}

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

// decide picks the state at WriteHeader.
func (rw *responseWriter) decide() {
	x := rw.x
	ok := rw.status >= 200 && rw.status < 300
	if (x.runOnce || x.edgeStream) && (rw.status == http.StatusNoContent || rw.status == http.StatusResetContent) {
		rw.startBuffer(bufNoReply) // answered with the 502 of SPEC 6.4
		return
	}
	if rw.untouchable() {
		rw.pass()
		return
	}
	if !ok {
		if x.runOnce || x.edgeStream {
			rw.startBuffer(bufUpstreamErr)
			return
		}
		rw.pass()
		return
	}
	x.reply.SetCostHeader(canonicalHeader(rw.Header(), "X-Litellm-Response-Cost")) // LiteLLM's own figure (SPEC 9.2)
	// The model that prices the reply (SPEC 9.2) and that the reply's is
	// compared with (SPEC 11.2): read from the body only if needed.
	if x.model != "" || x.reqBody == nil {
		x.reply.SetRequest(x.model, nil)
	} else {
		x.reply.SetRequest("", x.reqBody)
	}
	rw.format = rw.formatOf(rw.Header())
	if rw.format.Undecided() {
		rw.state = stSniff
		if rw.format.HeadersSettled(x.h.ConvertStreams) && !x.runOnce && !x.edgeStream {
			// Whichever protocol the first event names, the headers stay
			// the upstream's, so they go now.
			dropStreamValidators(rw.Header())
			rw.forwardHeader()
		}
		return
	}
	rw.begin()
}

// passEventsWithoutData forwards the complete events without data at the
// start of held (comments, a lone retry:), which do not decide the mode
// and are not held back (SPEC 4), and returns the rest.
func (rw *responseWriter) passEventsWithoutData(held []byte) []byte {
	if rw.x.runOnce || rw.x.edgeStream {
		return held
	}
	n := translate.LeadingEventsWithoutData(rw.format, held)
	if n == 0 {
		return held
	}
	dropStreamValidators(rw.Header())
	rw.forwardHeader()
	rw.writeOut(held[:n])
	return held[n:]
}

// begin starts the work for a known format.
func (rw *responseWriter) begin() {
	x := rw.x
	switch {
	case rw.format == translate.FormatJSON:
		switch {
		case x.runOnce:
			rw.startBuffer(bufRunOnce)
		case x.edgeStream:
			// One content chunk of the reply's text (SPEC 6.3), whatever
			// protocol the JSON is in (a Responses object's output text,
			// an Anthropic message's text blocks).
			x.wantContent()
			rw.startBuffer(bufEdgeJSON)
		default:
			rw.startBuffer(bufJSON)
		}
	case rw.format.Stream():
		if x.runOnce {
			rw.startCollect()
		} else {
			rw.startStream()
		}
	default:
		if x.runOnce {
			rw.startBuffer(bufRunOnceText)
			return
		}
		rw.pass()
	}
}

func (rw *responseWriter) pass() {
	rw.state = stPass
	rw.forwardHeader()
}

func (rw *responseWriter) startBuffer(k bufKind) {
	rw.state = stBuffer
	rw.kind = k
	// Size the buffer once when the length is known.
	n := int64(0)
	if cl := rw.Header()["Content-Length"]; len(cl) == 1 {
		if v, err := strconv.ParseInt(cl[0], 10, 64); err == nil && v > 0 && v <= rw.x.h.MaxBufferBytes {
			n = v
		}
	}
	if k == bufJSON {
		// Given back by finishBuffered once written (bufpool.go).
		if rw.bodyBuf = getReplyBuf(int(n)); rw.bodyBuf != nil {
			rw.buf = *bytes.NewBuffer(rw.bodyBuf.b)
		}
	}
	rw.buf.Grow(firstCap(n, rw.x.h.MaxBufferBytes)) // the rest as bytes arrive
}

// sniff decides a text/plain or text/event-stream format from the first
// complete line or event (SPEC 4 table); at the end of the stream (end
// true) it decides on what there is. The held bytes then go through.
func (rw *responseWriter) sniff(end bool) {
	held := rw.passEventsWithoutData(rw.buf.Bytes())
	if len(held) < rw.buf.Len() {
		rw.buf.Next(rw.buf.Len() - len(held))
	}
	f, decided := translate.DetectStart(rw.format, held, int(rw.x.maxEventBytes()), end, rw.x.h.ConvertStreams)
	if !decided {
		return
	}
	rw.format = f
	rw.begin()
	if rw.state == stBuffer {
		return // the held bytes are already the start of the buffer
	}
	if rw.state == stPass {
		rw.writeOut(held)
	} else {
		rw.feed(held) // the pipeline does not use rw.buf
	}
	rw.buf = bytes.Buffer{} // not needed any more: let its memory go with it
}

// sniffIn decides the format from p alone when p is enough, as it usually
// is (the first write holds the first line or event), and then handles p
// at once instead of holding a copy of it. It reports whether it decided.
func (rw *responseWriter) sniffIn(p []byte) bool {
	f, decided := translate.DetectStart(rw.format, p, int(rw.x.maxEventBytes()), false, rw.x.h.ConvertStreams)
	if !decided {
		return false
	}
	rw.format = f
	rw.begin()
	switch rw.state {
	case stPass:
		rw.writeOut(p)
	case stBuffer:
		rw.bufferBody(p)
	default:
		rw.feed(p)
	}
	return true
}
