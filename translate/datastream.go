package translate

import (
	"bytes"
	"io"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// defaultMaxLine is max_event_bytes' default, used when ConvertOptions.MaxLine
// is not positive.
const defaultMaxLine = 1 << 20

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
	convert: func(w *SSERewriter, opts ConvertOptions) io.WriteCloser {
		return NewDataStreamConverter(w, opts)
	},
}

// IsDataStreamLine reports whether line, given without its line end, is a
// Vercel AI SDK data stream part (SPEC 4): one character of [0-9a-z], a colon,
// then valid JSON. A leading BOM and a trailing CR are ignored.
func IsDataStreamLine(line []byte) bool {
	line = bytes.TrimPrefix(line, bom)
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return len(line) > 2 && isPartCode(line[0]) && line[1] == ':' &&
		jsonscan.Valid(strView(line[2:]))
}

// DataStreamConverter turns a Vercel AI SDK data stream v1 (SPEC 5.1) into
// OpenAI chat-completion-chunk SSE events.
//
// It is an io.Writer fed with the upstream body in pieces of any size: lines
// (and the UTF-8 characters in them) may be split across writes. Each part is
// converted as soon as its line end has been read, and all the events that
// one Write produces reach the output in a single Write. Close ends the
// stream: a last line without a line end is converted, then the meta-only
// event data: {"meta":{...}} (only when there is meta) and data: [DONE] are
// written. The final meta chunk is not the converter's business: the SSE
// rewriter that reads its output withholds the meta-only event and writes it.
//
// Lines end in LF or CRLF; blank lines are skipped; a BOM before the first
// line is ignored. A malformed line (no CODE: prefix, invalid JSON, JSON of
// the wrong type for its code) is skipped and the conversion goes on.
//
// Counting (ConvertOptions.Stats): Events counts every non-blank line read,
// Skipped the malformed lines and the parts the conversion ignores (codes a,
// c, e, h, i, j, k and unknown codes), Oversize the lines longer than MaxLine
// (also in Skipped). Memory stays bounded by MaxLine: a longer line is
// dropped as it arrives, never held whole.
//
// Writes after Close are ignored.
//
// A converter is not safe for concurrent use.
type DataStreamConverter struct {
	convCore

	max      int    // longest line kept, line end excluded
	line     []byte // the unfinished line carried from one Write to the next
	skipping bool   // the unfinished line outgrew max and is being dropped
	begun    bool   // the first line has been read (a BOM is only looked for there)
}

// NewDataStreamConverter returns a converter writing to out.
func NewDataStreamConverter(out io.Writer, opts ConvertOptions) *DataStreamConverter {
	c := &DataStreamConverter{}
	c.init(out, opts)
	c.max = opts.MaxLine
	if c.max <= 0 {
		c.max = defaultMaxLine
	}
	return c
}

// Write converts every line p completes. It returns len(p), nil unless the
// output failed; that error is then returned by every later call.
func (c *DataStreamConverter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.ended {
		return len(p), nil
	}
	n := len(p)
	c.buf = c.buf[:0]
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.keep(p)
			break
		}
		seg := p[:i]
		p = p[i+1:]
		switch {
		case c.skipping:
			c.skipping = false
			c.line = c.line[:0]
			c.tooLong()
		case len(c.line) == 0:
			c.handleLine(seg)
		case len(c.line)+len(seg) > c.max+1: // +1: a CR before the LF
			c.line = c.line[:0]
			c.tooLong()
		default:
			c.line = c.appendLine(seg)
			c.handleLine(c.line)
			c.line = c.line[:0]
		}
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	return n, nil
}

// keep holds the start of a line whose end has not come yet, or drops it once
// the line is longer than max (plus room for a CR).
func (c *DataStreamConverter) keep(p []byte) {
	if c.skipping {
		return
	}
	if len(c.line)+len(p) > c.max+1 {
		c.line = c.line[:0]
		c.skipping = true
		return
	}
	c.line = c.appendLine(p)
}

// appendLine appends p to the unfinished line, growing its storage no further
// than max+1 bytes.
func (c *DataStreamConverter) appendLine(p []byte) []byte {
	if n := len(c.line) + len(p); n > cap(c.line) {
		grown := make([]byte, len(c.line), min(max(n, 2*cap(c.line), 256), c.max+1))
		copy(grown, c.line)
		c.line = grown
	}
	return append(c.line, p...)
}

// Close ends the stream: the last line, if it had no line end, is converted,
// then the meta-only event (when there is meta) and [DONE] are written. Later
// calls write nothing and return the output's error, if any.
func (c *DataStreamConverter) Close() error {
	if c.err != nil || c.ended {
		return c.err
	}
	c.buf = c.buf[:0]
	switch {
	case c.skipping:
		c.skipping = false
		c.tooLong()
	case len(c.line) > 0:
		c.handleLine(c.line)
	}
	c.line = c.line[:0]
	c.end()
	return c.flush()
}

func (c *DataStreamConverter) tooLong() {
	c.oversize("llm_meta: data stream line longer than max_event_bytes skipped")
}

// handleLine converts one line, given without its LF.
func (c *DataStreamConverter) handleLine(line []byte) {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if !c.begun {
		c.begun = true
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) == 0 {
		return // blank lines are skipped, not counted
	}
	if len(line) > c.max {
		c.tooLong()
		return
	}
	if len(line) < 2 || line[1] != ':' || !isPartCode(line[0]) {
		c.malformed("llm_meta: data stream line without a CODE: prefix skipped")
		return
	}
	code := line[0]
	val := strView(line[2:])
	if !jsonscan.Valid(val) {
		c.malformed("llm_meta: data stream part with invalid JSON skipped")
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
	switch c.part(code, val) {
	case partWrongType:
		c.malformed("llm_meta: data stream part of the wrong JSON type skipped")
	case partIgnored:
		c.malformed(skipMessages[codeIndex(code)])
	default:
		c.count(false)
	}
}

const (
	partConverted = iota
	partWrongType // the JSON has the wrong type for the code
	partIgnored   // the code has no OpenAI equivalent
)

// part converts one part whose JSON is valid.
func (c *DataStreamConverter) part(code byte, val string) int {
	switch code {
	case '0', 'g', '3':
		// Text is decoded here rather than by gjson, which would allocate
		// for every string with an escape in it.
		text, ok := c.text(val)
		if !ok {
			return partWrongType
		}
		switch code {
		case '0':
			c.delta("content", text)
		case 'g':
			c.delta("reasoning_content", text)
		default:
			c.reachEnd(endError)
			c.runOf(false)
			c.buf = AppendErrorEvent(c.buf, text)
			c.flushFull()
		}
		return partConverted
	case '2', '8', '9', 'b', 'f', 'd':
	default:
		return partIgnored
	}
	v := gjson.Parse(val)
	switch code {
	case '2', '8':
		if !v.IsArray() {
			return partWrongType
		}
		v.ForEach(func(_, e gjson.Result) bool {
			c.hustle.AddElement(bytesView(e.Raw))
			return true
		})
	case '9', 'b':
		if !v.IsObject() {
			return partWrongType
		}
		name := v.Get("toolName")
		if name.Type != gjson.String {
			return partWrongType
		}
		c.addTool(name.Str)
		if rep := c.opts.Reply; code == '9' && rep != nil && rep.ToolArguments {
			// A 9 part is a call, its args value's text as it came its
			// arguments (SPEC 11.3).
			rep.calls.addArgs(rep.beginCall(name.Str, callKey{}, false), jsonscan.ObjectValue(val, "args"))
		}
	case 'f':
		if !v.IsObject() {
			return partWrongType
		}
		id := v.Get("messageId")
		if id.Type != gjson.String {
			return partWrongType
		}
		c.announce(id.Str)
	case 'd':
		if !v.IsObject() {
			return partWrongType
		}
		c.reachEnd(endWhole)
		c.finish(v.Get("finishReason").Str, v.Get("usage"))
	}
	return partConverted
}

func (c *DataStreamConverter) malformed(msg string) {
	c.count(true)
	c.debug(msg)
}

// isPartCode reports whether b is a data stream part code: [0-9a-z].
func isPartCode(b byte) bool { return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' }

func codeIndex(b byte) int {
	if b <= '9' {
		return int(b - '0')
	}
	return 10 + int(b-'a')
}

// skipMessages are the debug messages for codes without an OpenAI
// equivalent, built once so that a skipped part costs no allocation.
var skipMessages = func() (m [36]string) {
	const codes = "0123456789abcdefghijklmnopqrstuvwxyz"
	for i := range m {
		m[i] = "llm_meta: data stream part with code " + codes[i:i+1] + " skipped"
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
	if len(b) == 0 {
		return true
	}
	if c := b[0]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
		return false
	}
	return len(b) < 2 || b[1] == ':'
}
