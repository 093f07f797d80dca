package translate

import (
	"bytes"
	"strings"
)

// IsDataStreamLine reports whether line, given without its line end, is a
// Vercel AI SDK data stream part (SPEC 4): one character of [0-9a-z], a colon,
// then valid JSON. A leading BOM and a trailing CR are ignored.
func IsDataStreamLine(line []byte) bool {
	line = bytes.TrimPrefix(line, bom)
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return len(line) > 2 && isPartCode(line[0]) && line[1] == ':' &&
		ValidJSON(unsafeString(line[2:]))
}

// IsUIStreamEvent reports whether an SSE event's data is a part of the AI SDK
// UI message stream (SPEC 4): a JSON object whose "type" is a string naming
// one of its part types.
func IsUIStreamEvent(data []byte) bool {
	t, ok := typeOf(data)
	return ok && isUIPartType(t)
}

// isUIPartType reports whether t is a UI message stream part type: start,
// start-step, text-*, reasoning-*, tool-*, data-*, source-*, file, error,
// finish, finish-step, abort, message-metadata.
func isUIPartType(t string) bool {
	switch t {
	case "start", "start-step", "text-start", "text-delta", "text-end",
		"file", "error", "finish", "finish-step", "abort", "message-metadata",
		"custom", "steering-message", "reset-step":
		return true
	}
	for _, p := range [...]string{"reasoning-", "tool-", "data-", "source-"} {
		if len(t) > len(p) && strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}
