package caddymodule

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/translate"
)

// format is the upstream reply's format (SPEC 4 table).
type format int

const (
	fmtNone       format = iota // not inspected
	fmtJSON                     // application/json, */*+json
	fmtDataStream               // Vercel AI SDK data stream v1
	fmtUIStream                 // AI SDK UI message stream
	fmtSSE                      // OpenAI-style event stream
	fmtOther                    // anything else
	fmtSniffPlain               // text/plain: the first line decides
	fmtSniffSSE                 // text/event-stream: the first event decides
	numFormats
)

func (f format) String() string {
	switch f {
	case fmtJSON:
		return "json"
	case fmtDataStream:
		return "data_stream"
	case fmtUIStream:
		return "ui_stream"
	case fmtSSE:
		return "sse"
	case fmtOther:
		return "other"
	case fmtSniffPlain, fmtSniffSSE:
		return "undecided"
	}
	return "none"
}

// formatOf reads the format from the headers alone.
func (rw *responseWriter) formatOf(hdr http.Header) format {
	mt, _ := parseMediaType(hdr.Get("Content-Type"))
	convert := rw.x.h.convert
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return fmtJSON
	case convert && strings.EqualFold(hdr.Get("X-Vercel-AI-Data-Stream"), "v1"):
		return fmtDataStream
	case mt == "text/event-stream":
		if convert && strings.EqualFold(hdr.Get("X-Vercel-AI-UI-Message-Stream"), "v1") {
			return fmtUIStream
		}
		if convert {
			return fmtSniffSSE
		}
		return fmtSSE
	case mt == "text/plain" && convert:
		return fmtSniffPlain
	}
	return fmtOther
}

// untouchable reports whether the reply must pass as it came whatever the
// mode: a body that is not ours to read.
func (rw *responseWriter) untouchable() bool {
	if rw.r.Method == http.MethodHead || rw.status == http.StatusNoContent ||
		rw.status == http.StatusNotModified || rw.status == http.StatusSwitchingProtocols ||
		rw.status == http.StatusPartialContent {
		return true
	}
	ce := rw.Header().Get("Content-Encoding")
	return ce != "" && !strings.EqualFold(ce, "identity")
}

// decide picks the state at WriteHeader.
func (rw *responseWriter) decide() {
	x := rw.x
	ok := rw.status >= 200 && rw.status < 300
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
	rw.format = rw.formatOf(rw.Header())
	switch rw.format {
	case fmtSniffPlain, fmtSniffSSE:
		rw.state = stSniff
	default:
		rw.begin()
	}
}

// begin starts the work for a known format.
func (rw *responseWriter) begin() {
	x := rw.x
	switch rw.format {
	case fmtJSON:
		switch {
		case x.runOnce:
			rw.startBuffer(bufRunOnce)
		case x.edgeStream:
			rw.startBuffer(bufEdgeJSON)
		default:
			rw.startBuffer(bufJSON)
		}
	case fmtDataStream, fmtUIStream, fmtSSE:
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
	held := rw.buf.Bytes()
	f, decided := sniffFormat(rw.format, held, int(rw.x.h.MaxEventBytes), end)
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
	f, decided := sniffFormat(rw.format, p, int(rw.x.h.MaxEventBytes), false)
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

// sniffFormat looks at the start of a body. decided is false while more
// bytes are needed.
func sniffFormat(f format, held []byte, max int, end bool) (format, bool) {
	if f == fmtSniffPlain || f == fmtSniffSSE {
		if line, complete := firstLine(held); complete || end {
			if complete || len(line) > 0 {
				if translate.IsDataStreamLine(line) {
					return fmtDataStream, true
				}
				if f == fmtSniffPlain {
					return fmtOther, true
				}
			}
		}
	}
	if f == fmtSniffPlain {
		if end || len(held) > max || !mayBeDataStream(held) {
			return fmtOther, true
		}
		return f, false
	}
	// text/event-stream: wait for the first complete event.
	ev, complete := firstEvent(held)
	if !complete && !end && len(held) <= max {
		return f, false
	}
	if data, ok, _ := translate.EventData(ev, nil); ok && translate.IsUIStreamEvent(data) {
		return fmtUIStream, true
	}
	return fmtSSE, true
}

// mayBeDataStream reports whether the start of a text/plain body can still
// be a data-stream part (^[0-9a-z]: after a BOM and blank lines), so that a
// plain-text stream is passed on at once rather than held until its first
// line ends.
func mayBeDataStream(b []byte) bool {
	const bom = "\xEF\xBB\xBF"
	if len(b) < len(bom) && bom[:len(b)] == string(b) {
		return true // part of a BOM so far
	}
	b = bytes.TrimLeft(bytes.TrimPrefix(b, []byte(bom)), "\r\n")
	if len(b) == 0 {
		return true
	}
	if c := b[0]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
		return false
	}
	return len(b) < 2 || b[1] == ':'
}

// firstLine returns the first non-empty line and whether it is complete.
func firstLine(b []byte) ([]byte, bool) {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		if i < 0 {
			return b, false
		}
		if i > 0 {
			return b[:i], true
		}
		b = b[1:]
	}
	return nil, false
}

// firstEvent returns the bytes of the first event and whether it is complete.
type eventGrab struct {
	ev   []byte
	done bool
}

func (g *eventGrab) Event(raw []byte) {
	if !g.done {
		// One Feed on a fresh splitter: an event it completes lies in the
		// fed bytes, so raw stays valid after the call.
		g.ev, g.done = raw, true
	}
}
func (g *eventGrab) Oversize([]byte, bool) {}

func firstEvent(b []byte) ([]byte, bool) {
	var g eventGrab
	s := translate.SSESplitter{Max: len(b) + 1}
	s.Feed(b, &g)
	if g.done {
		return g.ev, true
	}
	return b, false
}
