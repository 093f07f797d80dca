package caddymodule

import (
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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

// mode is what the module did with the reply, for logs, metrics and the
// {http.llm_meta.mode} placeholder.
type mode uint8

const (
	modeNone mode = iota
	modeRunOnce
	modeEdgeStream
	modeStream
	modeJSON
	modePass
	numModes
)

func (m mode) String() string {
	switch m {
	case modeRunOnce:
		return "run_once"
	case modeEdgeStream:
		return "edge_stream"
	case modeStream:
		return "stream"
	case modeJSON:
		return "json"
	case modePass:
		return "passthrough"
	}
	return "none"
}

func (rw *responseWriter) mode() mode {
	switch {
	case rw.x.runOnce:
		return modeRunOnce
	case rw.x.edgeStream:
		return modeEdgeStream
	}
	switch rw.state {
	case stStream:
		return modeStream
	case stBuffer:
		return modeJSON
	case stPass:
		return modePass
	}
	return modeNone
}

// The placeholders the module answers (SPEC 8).
const (
	phMode  = "http.llm_meta.mode"
	phFmt   = "http.llm_meta.format"
	phTools = "http.llm_meta.tools_used"
	phIn    = "http.llm_meta.input_tokens"
	phOut   = "http.llm_meta.output_tokens"
	phCost  = "http.llm_meta.cost_usd"
)

// placeholder answers the module's placeholders from the state of the
// reply when they are read: by `header` as the status goes downstream (the
// values of a buffered reply are known by then), by log fields once the
// reply is done. Nothing is built for a request whose placeholders nobody
// reads. Installed as a replacer provider by mapPlaceholders.
func (rw *responseWriter) placeholder(key string) (any, bool) {
	switch key {
	case phMode:
		return boxName(rw.mode().String()), true
	case phFmt:
		return boxName(rw.format.String()), true
	case phTools:
		return rw.x.reply.Meta.ToolsPlaceholder(), true
	case phIn, phOut, phCost:
		// Empty when unknown (SPEC 9.4).
		rep := &rw.x.reply
		switch {
		case key == phCost && rep.HasCost:
			return strconv.FormatFloat(rep.Cost, 'f', -1, 64), true
		case key == phIn && rep.Usage.Known():
			return rep.Usage.Input, true
		case key == phOut && rep.Usage.Known():
			return rep.Usage.Output, true
		}
		return "", true
	}
	return nil, false
}

// mapPlaceholders makes the request's replacer ask rw for the module's
// placeholders. Caddy's own providers come first; ours is the last asked,
// so other look-ups do not pass through it.
func (rw *responseWriter) mapPlaceholders() {
	if repl, ok := rw.r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(rw.placeholder)
	}
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
	case "responses":
		return "responses"
	case "anthropic":
		return "anthropic"
	case "other":
		return "other"
	case "undecided":
		return "undecided"
	}
	return s
}

// logDone ends the request: metrics and one debug line.
func (rw *responseWriter) logDone() {
	h := rw.x.h
	mode, format := rw.mode(), rw.format
	if metrics.requests != nil {
		requestCounter(mode, format).Inc()
		if rw.stats.Events > 0 {
			eventCounter(format).Add(float64(rw.stats.Events))
		}
		if rw.stats.FinalMeta > 0 {
			metrics.finalMeta.Add(float64(rw.stats.FinalMeta))
		}
		if rep := &rw.x.reply; rep.Usage.Known() {
			metrics.inputTokens.Add(float64(rep.Usage.Input))
			metrics.outputTokens.Add(float64(rep.Usage.Output))
		}
		if rep := &rw.x.reply; rep.HasCost {
			metrics.cost.Add(rep.Cost)
		}
	}
	if h.logger == nil {
		return
	}
	if c := h.logger.Check(zapcore.DebugLevel, "llm_meta reply"); c != nil {
		c.Write(
			zap.String("mode", mode.String()),
			zap.String("format", format.String()),
			zap.Int("status", rw.status),
			zap.Int64("events", rw.stats.Events),
			zap.Int64("skipped", rw.stats.Skipped),
			zap.Int("tools", len(rw.x.reply.Meta.Tools())),
			zap.Int64("bytes_in", rw.bytesIn),
			zap.Int64("bytes_out", rw.bytesOut),
			zap.Duration("duration", time.Since(rw.x.start)),
		)
	}
}
