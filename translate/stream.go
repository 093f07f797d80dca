package translate

import (
	"crypto/rand"
	"encoding/hex"
)

// Stats counts what one stream processor saw, for the module's log line and
// metrics. It never holds prompt or reply text.
type Stats struct {
	Events    int64 // events or parts read from the upstream
	Skipped   int64 // malformed or unknown parts skipped by a converter
	Oversize  int64 // events forwarded uninspected because of max_event_bytes
	FinalMeta int64 // final meta events written
}

// Fallback reasons, for logs and the fallbacks metric.
const (
	ReasonEventTooLarge      = "event_too_large"
	ReasonStructuredUnparsed = "structured_unparsed"
	// ReasonMetaTooLarge: something was dropped from a reply's meta to
	// keep it within max_meta_bytes or MaxMetaTools (SPEC 8.1).
	ReasonMetaTooLarge = "meta_too_large"
)

// ConvertOptions configure the stream converters of SPEC 5.
type ConvertOptions struct {
	// Model is the model of the request sent upstream; "" becomes "unknown".
	Model string
	// MaxLine is max_event_bytes: a longer line or event is skipped.
	MaxLine int
	// HustleSummary derives structured_result from Hustle metadata (SPEC 5.1).
	HustleSummary bool
	// Created is the chunks' "created" time (Unix seconds); 0 means now.
	Created int64
	// Stats, when set, receives the counts.
	Stats *Stats
	// Debug, when set, is told of each skipped part (never its content).
	Debug func(msg string)
	// Warn, when set, is told of each fallback by a short reason code.
	Warn func(reason string)
	// MaxMeta is max_meta_bytes, the bound of the meta collected (0: the
	// default, SPEC 8.1).
	MaxMeta int
	// MetaSink, when set, gets the stream's meta merged into it at the end,
	// instead of a meta-only event in the output: the SSE rewriter that
	// reads the output then writes it as its final meta event whatever its
	// size (an event that large would pass it uninspected).
	MetaSink *Meta
}

// NewChatID returns a fresh chat-completion id, "chatcmpl-" and 24 hex digits.
func NewChatID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}
