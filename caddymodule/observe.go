package caddymodule

import (
	"time"

	"go.uber.org/zap/zapcore"
)

var timeSince = time.Since

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

func (rw *responseWriter) toolCount() int {
	if m := rw.x.finalMeta; m != nil {
		return len(m.Tools())
	}
	if rw.rewriter != nil {
		return len(rw.rewriter.Meta().Tools())
	}
	return 0
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
