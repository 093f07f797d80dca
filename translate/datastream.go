package translate

import (
	"bytes"
	"io"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// FormatDataStream is a Vercel AI SDK data stream v1, converted (SPEC 5.1;
// numbered at registration).
var FormatDataStream Format

var dataStreamProtocol = protocol{
	name:   "data_stream",
	format: &FormatDataStream,
	// Under convert_streams: a reply with x-vercel-ai-data-stream: v1, or a
	// text/plain or event-stream body whose first line is a part.
	needsConvert: true,
	byHeaders:    func(h ReplyHeaders) bool { return strings.EqualFold(header(h.Header, "X-Vercel-Ai-Data-Stream"), "v1") },
	startsLine:   IsDataStreamLine,
	mayStartLine: mayBeDataStream,
	convert: func(w *Rewriter, opts ConvertOptions) io.WriteCloser {
		return NewDataStreamConverter(w, opts)
	},
}

// IsDataStreamLine reports whether line, given without its line end, is a
// Vercel AI SDK data stream part (SPEC 4): one character of [0-9a-z], a colon,
// then valid JSON. A leading BOM and a trailing CR are ignored.
func IsDataStreamLine(line []byte) bool {
	line = bytes.TrimSuffix(bytes.TrimPrefix(line, bom), []byte("\r"))
	return len(line) > 2 && isPartCode(line[0]) && line[1] == ':' &&
		jsonscan.Valid(strView(line[2:]))
}

// DataStreamConverter turns a Vercel AI SDK data stream v1 (SPEC 5.1) into
// OpenAI chat-completion-chunk SSE events, as convCore says.
//
// Lines end in LF or CRLF; blank lines are skipped; a BOM before the first
// line is ignored. A malformed line (no CODE: prefix, invalid JSON, JSON of
// the wrong type for its code) is skipped and the conversion goes on.
//
// Counting (ConvertOptions.Stats): Events counts every non-blank line read,
// Skipped the malformed lines and the parts the conversion ignores (codes a,
// c, e, h, i, j, k and unknown codes), Oversize the lines longer than MaxLine
// (also in Skipped).
type DataStreamConverter struct {
	convCore
	split lineSplitter
}

// NewDataStreamConverter returns a converter writing to out.
func NewDataStreamConverter(out io.Writer, opts ConvertOptions) *DataStreamConverter {
	c := &DataStreamConverter{}
	c.init(out, opts)
	c.split.max = c.maxLine
	return c
}

// Write converts every line p completes.
func (c *DataStreamConverter) Write(p []byte) (int, error) {
	return c.write(p, func(p []byte) { c.split.feed(p, c) })
}

// Close converts a last line without a line end (a CR ends it) and ends
// the stream.
func (c *DataStreamConverter) Close() error {
	return c.close(func() { c.split.close(c, true) })
}

// longLine drops a line longer than MaxLine.
func (c *DataStreamConverter) longLine(_ []byte, _ int, first bool) {
	if first {
		c.oversize("llm_meta: data stream line longer than max_event_bytes skipped")
	}
}

// line converts one line.
func (c *DataStreamConverter) line(_, line []byte, _ int) {
	if len(line) == 0 {
		return // blank lines are skipped, not counted
	}
	if len(line) < 2 || line[1] != ':' || !isPartCode(line[0]) {
		c.skip("llm_meta: data stream line without a CODE: prefix skipped")
		return
	}
	code := line[0]
	val := strView(line[2:])
	if !jsonscan.Valid(val) {
		c.skip("llm_meta: data stream part with invalid JSON skipped")
		return
	}
	// An e part ends the stream if nothing but 2 and 8 parts (and skipped
	// lines) follows it to the body's end (SPEC 11.1).
	switch code {
	case '2', '8':
	case 'e':
		c.lastE = jsonscan.ObjectValue(val, "isContinued") != "true"
	default:
		c.lastE = false
	}
	if msg := c.part(code, val); msg != "" {
		c.skip(msg)
	} else {
		c.count()
	}
}

// wrongType is why a part whose JSON has the wrong type for its code is
// skipped.
const wrongType = "llm_meta: data stream part of the wrong JSON type skipped"

// part converts one part whose JSON is valid. It returns why the part was
// skipped, "" when it was not.
func (c *DataStreamConverter) part(code byte, val string) string {
	switch code {
	case '0', 'g', '3':
		// Text is decoded here rather than by gjson, which would allocate
		// for every string with an escape in it.
		text, ok := c.text(val)
		switch {
		case !ok:
			return wrongType
		case code == '0':
			c.delta("content", text)
		case code == 'g':
			c.delta("reasoning_content", text)
		default:
			c.errorEvent(text)
		}
		return ""
	case '2', '8', '9', 'b', 'f', 'd':
	default:
		return skipMessages[strings.IndexByte(partCodes, code)]
	}
	v := gjson.Parse(val)
	if code == '2' || code == '8' {
		if !v.IsArray() {
			return wrongType
		}
		c.data(v)
		return ""
	}
	if !v.IsObject() {
		return wrongType
	}
	switch code {
	case '9', 'b':
		name := v.Get("toolName")
		if name.Type != gjson.String {
			return wrongType
		}
		c.rep.Meta.AddTool(name.Str)
		if code == '9' {
			// A 9 part is a call, its args value's text as it came its
			// arguments (SPEC 11.3).
			c.call(name.Str, v, "", "args")
		}
	case 'f':
		if !c.announce(v.Get("messageId")) {
			return wrongType
		}
	case 'd':
		c.finish(endWhole, v.Get("finishReason").Str, v.Get("usage"))
	}
	return ""
}

// partCodes are the codes a data stream part may have: [0-9a-z].
const partCodes = "0123456789abcdefghijklmnopqrstuvwxyz"

// isPartCode reports whether b is one of partCodes.
func isPartCode(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' }

// skipMessages are the debug messages for codes without an OpenAI
// equivalent, built once so that a skipped part costs no allocation.
var skipMessages = func() (m [len(partCodes)]string) {
	for i := range m {
		m[i] = "llm_meta: data stream part with code " + partCodes[i:i+1] + " skipped"
	}
	return m
}()

// mayBeDataStream reports whether the start of a text/plain body can still
// be a data-stream part (^[0-9a-z]: after a BOM and blank lines), so that a
// plain-text stream is passed on at once rather than held until its first
// line ends.
func mayBeDataStream(b []byte) bool {
	if len(b) < len(bom) && string(bom[:len(b)]) == string(b) {
		return true // part of a BOM so far
	}
	b = bytes.TrimLeft(bytes.TrimPrefix(b, bom), "\r\n")
	return len(b) == 0 || isPartCode(b[0]) && (len(b) < 2 || b[1] == ':')
}
