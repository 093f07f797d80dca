package caddymodule

import (
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llm-meta/llm_meta/translate"
)

// Fallback reasons of the module itself (translate has its own).
const (
	reasonRequestTooLarge = "request_too_large"
	reasonReplyTooLarge   = "reply_too_large"
)

// fallback records a fallback: a warning (a reason, never content or
// header values) and the fallbacks metric.
func (h *Handler) fallback(reason string) {
	if metrics.fallbacks != nil {
		metrics.fallbacks.WithLabelValues(reason).Inc()
	}
	if h.logger != nil {
		h.logger.Warn("llm_meta fallback", zap.String("reason", reason))
	}
}

// debug logs a debug line with no content in it.
func (h *Handler) debug(msg string) {
	if h.logger == nil {
		return
	}
	if c := h.logger.Check(zapcore.DebugLevel, msg); c != nil {
		c.Write()
	}
}

// mode names what the module did with the reply, for logs, metrics and
// the {http.llm_meta.mode} placeholder.
func (rw *responseWriter) mode() string {
	switch {
	case rw.x.runOnce:
		return "run_once"
	case rw.x.edgeStream:
		return "edge_stream"
	}
	switch rw.state {
	case stStream:
		return "stream"
	case stBuffer:
		return "json"
	case stPass:
		return "passthrough"
	}
	return "none"
}

// replyMeta is the reply's meta once known.
func (rw *responseWriter) replyMeta() *translate.Meta {
	if m := rw.x.finalMeta; m != nil {
		return m
	}
	if rw.rewriter != nil {
		return rw.rewriter.Meta()
	}
	return nil
}

// setPlaceholders publishes what is known of the reply. It runs when the
// status goes downstream (so that `header` can use the values of buffered
// replies) and again when the reply is done (for log fields).
func (rw *responseWriter) setPlaceholders() []string {
	var tools []string
	if m := rw.replyMeta(); m != nil {
		tools = m.Tools()
	}
	if repl, ok := rw.r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set("http.llm_meta.mode", boxName(rw.mode()))
		repl.Set("http.llm_meta.format", boxName(rw.format.String()))
		// tools_used only grows: set it again only when there are more.
		if m := rw.replyMeta(); !rw.toolsSet || m != rw.toolsMeta || len(tools) != rw.toolsN {
			repl.Set("http.llm_meta.tools_used", boxName(strings.Join(tools, ",")))
			rw.toolsSet, rw.toolsMeta, rw.toolsN = true, m, len(tools)
		}
	}
	return tools
}

// boxName returns a placeholder value as an interface. The fixed names of
// modes and formats come back as constants, which Go boxes without
// allocating; anything else is boxed as usual.
func boxName(s string) any {
	switch s {
	case "":
		return ""
	case "run_once":
		return "run_once"
	case "edge_stream":
		return "edge_stream"
	case "stream":
		return "stream"
	case "json":
		return "json"
	case "passthrough":
		return "passthrough"
	case "none":
		return "none"
	case "data_stream":
		return "data_stream"
	case "ui_stream":
		return "ui_stream"
	case "sse":
		return "sse"
	case "other":
		return "other"
	case "undecided":
		return "undecided"
	}
	return s
}

// logDone ends the request: placeholders, metrics and one debug line.
func (rw *responseWriter) logDone() {
	h := rw.x.h
	mode, format := rw.mode(), rw.format.String()
	tools := rw.setPlaceholders()
	if metrics.requests != nil {
		metrics.requests.WithLabelValues(mode, format).Inc()
		if rw.stats.Events > 0 {
			metrics.events.WithLabelValues(format).Add(float64(rw.stats.Events))
		}
		if rw.stats.FinalMeta > 0 {
			metrics.finalMeta.Add(float64(rw.stats.FinalMeta))
		}
	}
	if h.logger == nil {
		return
	}
	if c := h.logger.Check(zapcore.DebugLevel, "llm_meta reply"); c != nil {
		c.Write(
			zap.String("mode", mode),
			zap.String("format", format),
			zap.Int("status", rw.status),
			zap.Int64("events", rw.stats.Events),
			zap.Int64("skipped", rw.stats.Skipped),
			zap.Int("tools", len(tools)),
			zap.Int64("bytes_in", rw.bytesIn),
			zap.Int64("bytes_out", rw.bytesOut),
			zap.Duration("duration", time.Since(rw.x.start)),
		)
	}
}
