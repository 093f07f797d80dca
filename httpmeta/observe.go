package httpmeta

import (
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llm-meta/llm_meta/translate"
)

// Fallback reasons of the handler itself (translate has its own).
const (
	reasonRequestTooLarge = "request_too_large"
	reasonReplyTooLarge   = "reply_too_large"
	reasonOpenClawHistory = "openclaw_history" // a look-up that gave nothing
)

// fallback records a fallback: a warning (a reason, never content or
// header values) and the observer's count.
func (h *Handler) fallback(reason string) { h.fallbackErr(reason, nil) }

// fallbackErr is fallback with an error whose text holds no secret or
// content (the OpenClaw look-up's), so operators see why.
func (h *Handler) fallbackErr(reason string, err error) {
	if h.Observer != nil {
		h.Observer.Fallback(reason)
	}
	if h.Logger == nil {
		return
	}
	if err != nil {
		h.Logger.Warn("llm_meta fallback", zap.String("reason", reason), zap.String("error", err.Error()))
		return
	}
	h.Logger.Warn("llm_meta fallback", zap.String("reason", reason))
}

// answered tells the observer of a run-once answer of n bytes.
func (h *Handler) answered(n int) {
	if h.Observer != nil {
		h.Observer.RunOnceAnswered(n)
	}
}

// debug logs a debug line with no content in it.
func (h *Handler) debug(msg string) {
	if h.Logger == nil {
		return
	}
	if c := h.Logger.Check(zapcore.DebugLevel, msg); c != nil {
		c.Write()
	}
}

// Mode is what the handler did with the reply, for logs, metrics and
// placeholders.
type Mode uint8

// The modes; NumModes counts them.
const (
	ModeNone Mode = iota
	ModeRunOnce
	ModeEdgeStream
	ModeStream
	ModeJSON
	ModePass
	NumModes
)

func (m Mode) String() string {
	switch m {
	case ModeRunOnce:
		return "run_once"
	case ModeEdgeStream:
		return "edge_stream"
	case ModeStream:
		return "stream"
	case ModeJSON:
		return "json"
	case ModePass:
		return "passthrough"
	}
	return "none"
}

// Mode is what the handler did, or is doing, with the reply.
func (st *Exchange) Mode() Mode {
	switch {
	case st.x.runOnce:
		return ModeRunOnce
	case st.x.edgeStream:
		return ModeEdgeStream
	}
	switch st.rw.state {
	case stStream:
		return ModeStream
	case stBuffer:
		return ModeJSON
	case stPass:
		return ModePass
	}
	return ModeNone
}

// Format is the reply's format as far as it is known.
func (st *Exchange) Format() translate.Format { return st.rw.format }

// Reply is the record of the upstream's reply: meta, usage, cost.
func (st *Exchange) Reply() *translate.Reply { return &st.x.reply }

// Stats counts the events read and the final meta events written.
func (st *Exchange) Stats() *translate.Stats { return &st.rw.stats }

// logDone ends the request: the observer, then one debug line.
func (rw *responseWriter) logDone() {
	h := rw.x.h
	st := rw.ex
	if h.Observer != nil {
		h.Observer.Done(st)
	}
	if h.Logger == nil {
		return
	}
	if rw.x.reply.Interrupted {
		// SPEC 11.1: the format and how much came, never the content.
		h.Logger.Warn("llm_meta stream interrupted: the upstream ended it before its end",
			zap.String("format", rw.format.String()),
			zap.Int64("bytes_in", rw.bytesIn))
	}
	if c := h.Logger.Check(zapcore.DebugLevel, "llm_meta reply"); c != nil {
		var took time.Duration // 0 when debug logging came on after the handler was made (h.clock)
		if !rw.x.start.IsZero() {
			took = time.Since(rw.x.start)
		}
		c.Write(
			zap.String("mode", st.Mode().String()),
			zap.String("format", rw.format.String()),
			zap.Int("status", rw.status),
			zap.Int64("events", rw.stats.Events),
			zap.Int64("skipped", rw.stats.Skipped),
			zap.Int("tools", len(rw.x.reply.Meta.Tools())),
			zap.Int64("bytes_in", rw.bytesIn),
			zap.Int64("bytes_out", rw.bytesOut),
			zap.Duration("duration", took),
		)
	}
}
