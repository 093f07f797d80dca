package translate

import (
	"crypto/rand"
	"encoding/hex"
	"io"
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
	// Reply is the record the converter's meta, usage and cost go into
	// (OpenStream sets it: the Rewriter the chunks are written to
	// reads the same record, and bounds its meta). Required.
	Reply *Reply
	// MarkInterrupted ends a stream cut short with the chat stream's
	// error event instead of [DONE] (mark_interrupted, SPEC 5, 11.1).
	MarkInterrupted bool
}

// NewChatID returns a fresh chat-completion id, "chatcmpl-" and 24 hex digits.
func NewChatID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "chatcmpl-" + hex.EncodeToString(b[:])
}

// OpenStream makes the pipeline that reads a stream of format f and writes
// what the client gets to out: for the AI SDK streams a converter in front,
// writing chat chunks; then the rewriter in the stream's protocol. Both
// read into sse.Reply (conv.Reply is set to it). The rewriter is returned
// too, for what it knows of the stream.
func OpenStream(f Format, out io.Writer, sse StreamOptions, conv ConvertOptions, requestMeta *Meta) (io.WriteCloser, *Rewriter) {
	sse.Protocol = f
	p := protocolOf(f)
	if p != nil && p.convert != nil {
		sse.Protocol = FormatSSE // converters write chat chunks
		if p.into != nil {
			sse.Protocol = *p.into // or another protocol's events
		}
	}
	rw := NewRewriter(out, sse, requestMeta)
	conv.Reply = rw.Reply()
	conv.MarkInterrupted = sse.MarkInterrupted
	if p != nil && p.convert != nil {
		rw.u.ownChunks = sse.Protocol == FormatSSE
		return p.convert(rw, conv), rw
	}
	return rw, rw
}
