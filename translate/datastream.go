package translate

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

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
		ValidJSON(unsafeString(line[2:]))
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

// Meta returns the meta derived so far: tools_used while the stream runs,
// plus hustle and structured_result once it has ended.
func (c *DataStreamConverter) Meta() *Meta { return c.meta }

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
	c.count(true)
	if s := c.opts.Stats; s != nil {
		s.Oversize++
	}
	c.debug("llm_meta: data stream line longer than max_event_bytes skipped")
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
	val := unsafeString(line[2:])
	if !ValidJSON(val) {
		c.malformed("llm_meta: data stream part with invalid JSON skipped")
		return
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
			c.hustle.AddElement(unsafeBytes(e.Raw))
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

// unsafeBytes views s as bytes without copying; the bytes must not be changed.
func unsafeBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// convCore is what both stream converters share: the chunk head and the id
// rule of SPEC 5, the meta being built, and the output buffer that collects
// the events of one Write so that they go out in one piece.
type convCore struct {
	out  io.Writer
	opts ConvertOptions

	meta   *Meta // the record's, or ownMeta
	hustle Hustle

	ownMeta   Meta
	lateUsage []byte // usage that came after the last chunk (UI message-metadata)

	head    ChunkHead
	id      string // the first message id announced before the first chunk
	started bool   // a chunk has been written: the head is fixed, the role given

	// deltaHead is a delta chunk up to its text (appendDeltaHead), for
	// deltaField ("" until one is built), once the head is fixed: what
	// most events repeat.
	deltaHead  []byte
	deltaField string

	buf     []byte // events produced by the current Write
	str     []byte // a decoded JSON string with escapes
	scratch []byte // usage and meta being built
	err     error  // the output's first error, sticky
	ended   bool   // the meta-only event and [DONE] have been written

	// When out takes text deltas unread (madeDeltaWriter), buf holds
	// either only text deltas after the stream's first chunk (run: counted,
	// their content joined in runText) or only other events.
	fast     madeDeltaWriter
	run      bool
	runCount int
	runText  []byte
}

func (c *convCore) init(out io.Writer, opts ConvertOptions) {
	c.out = out
	c.fast, _ = out.(madeDeltaWriter)
	c.opts = opts
	c.meta = &c.ownMeta
	if opts.Reply != nil {
		c.meta = &opts.Reply.Meta // bounded by the record's reader
	} else {
		c.meta.Limit(opts.MaxMeta, opts.Warn)
	}
	c.hustle.Max = opts.MaxMeta
}

func (c *convCore) count(skipped bool) {
	if s := c.opts.Stats; s != nil {
		s.Events++
		if skipped {
			s.Skipped++
		}
	}
}

func (c *convCore) debug(msg string) {
	if c.opts.Debug != nil {
		c.opts.Debug(msg)
	}
}

// announce records a message id; only the first one announced before the
// first chunk becomes the stream's id.
func (c *convCore) announce(id string) {
	if !c.started && c.id == "" && id != "" {
		c.id = strings.Clone(id)
	}
}

// addTool adds a tool name to tools_used (AddTool keeps its own copy).
func (c *convCore) addTool(name string) { c.meta.AddTool(name) }

// start fixes the chunk head at the first chunk and reports whether the role
// is still to be given.
func (c *convCore) start() bool {
	if c.started {
		return false
	}
	c.started = true
	c.head = NewChunkHead(c.id, c.opts.Created, c.opts.Model)
	return true
}

func (c *convCore) delta(field, text string) {
	role := c.start()
	// The first chunk (with the role) is read by the rewriter as any other:
	// it takes the stream's id from it. The rest can skip the reading.
	c.runOf(!role)
	switch {
	case role:
		c.buf = c.head.appendDeltaHead(c.buf, field, true)
	default:
		if field != c.deltaField {
			if n := c.head.deltaHeadLen(field); cap(c.deltaHead) < n {
				c.deltaHead = make([]byte, 0, n)
			}
			c.deltaHead = c.head.appendDeltaHead(c.deltaHead[:0], field, false)
			c.deltaField = field
		}
		c.buf = append(c.buf, c.deltaHead...)
	}
	c.buf = appendJSONString(c.buf, text)
	c.buf = append(c.buf, deltaTail...)
	if c.run {
		c.runCount++
		if field == "content" {
			c.runText = append(c.runText, text...)
		}
	}
	c.flushFull()
}

// runOf makes buf hold only events of one kind, text deltas (delta) or any
// other, writing out what it holds when the kind changes.
func (c *convCore) runOf(delta bool) {
	if c.fast == nil {
		return // one Write for all: nothing to tell apart
	}
	if c.run != delta && len(c.buf) > 0 {
		_ = c.flush() // the error is sticky: Write returns it
	}
	c.run = delta
}

// madeDeltaWriter takes chat chunks a converter made that carry nothing but
// a text delta: count of them, content their content deltas joined. It
// reports false, having done nothing, when it must read them as any other
// event (SSERewriter.WriteMadeDeltas).
type madeDeltaWriter interface {
	WriteMadeDeltas(p []byte, count int, content string) (bool, error)
}

// convFlushAt is how many bytes of chunks one upstream write may build
// before they are written out. A part of a few bytes becomes a chunk of
// over a hundred, so the chunks of one upstream write (up to 32 KiB from
// reverse_proxy) could otherwise take a megabyte to hold (SPEC 8.1); and
// the buffer stays small enough to be kept for the whole stream.
const convFlushAt = 4 << 10

// flushFull writes the chunks built so far once they fill convFlushAt.
func (c *convCore) flushFull() {
	if len(c.buf) >= convFlushAt {
		_ = c.flush() // the error is sticky: Write returns it
	}
}

// finish writes a finish chunk with the mapped finish reason and, when usage
// holds token counts, the OpenAI usage object.
func (c *convCore) finish(reason string, usage gjson.Result) {
	role := c.start()
	if rep := c.opts.Reply; rep != nil {
		rep.setCostFrom(usage) // the chunk's usage carries the counts only
	}
	var u []byte
	c.scratch, u = appendUsage(c.scratch[:0], usage)
	c.runOf(false)
	c.buf = c.head.AppendFinish(c.buf, mapFinishReason(reason), role, u)
	c.flushFull()
}

// end completes the meta and writes [DONE], once. With a shared record the
// meta goes into it (the chunks written so far reach the record's reader
// first, so that usage that came after the last chunk wins); without one,
// a meta-only event goes before [DONE].
func (c *convCore) end() {
	if c.ended {
		return
	}
	c.ended = true
	c.hustle.AppendTo(c.meta, c.opts.HustleSummary)
	if rep := c.opts.Reply; rep != nil {
		if c.flush() != nil {
			return
		}
		if c.lateUsage != nil {
			late := gjson.ParseBytes(c.lateUsage)
			rep.Usage.ReadAISDK(late)
			rep.setCostFrom(late)
		}
		c.hustle.usageInto(rep)
	}
	c.runOf(false)
	if c.opts.Reply == nil && !c.meta.Empty() {
		c.scratch = c.meta.AppendJSON(c.scratch[:0])
		c.buf = AppendBareMeta(c.buf, c.scratch)
	}
	c.buf = append(c.buf, DoneEvent...)
}

// flush writes the events built since the last flush in one Write.
func (c *convCore) flush() error {
	if c.err != nil {
		return c.err
	}
	if len(c.buf) == 0 {
		return nil
	}
	done := false
	if c.run && c.runCount > 0 {
		done, c.err = c.fast.WriteMadeDeltas(c.buf, c.runCount, unsafeString(c.runText))
	}
	if !done {
		if _, err := c.out.Write(c.buf); err != nil {
			c.err = err
		}
	}
	c.buf, c.runCount, c.runText = c.buf[:0], 0, c.runText[:0]
	return c.err
}

// mapFinishReason maps an AI SDK finish reason to OpenAI's: tool-calls and
// content-filter get underscores, a missing one is "stop", others stay.
func mapFinishReason(r string) string {
	switch r {
	case "tool-calls":
		return "tool_calls"
	case "content-filter":
		return "content_filter"
	case "":
		return "stop"
	}
	return r
}

// appendUsage appends OpenAI's usage object built from an AI SDK usage
// object: prompt_tokens from promptTokens, prompt_tokens or inputTokens;
// completion_tokens from completionTokens, completion_tokens or outputTokens;
// total_tokens from totalTokens or total_tokens, else their sum. It returns
// the grown dst and the usage bytes, or nil when usage is not an object with
// at least one of those numbers.
func appendUsage(dst []byte, usage gjson.Result) ([]byte, []byte) {
	if !usage.IsObject() {
		return dst, nil
	}
	var p, c, t int64
	var hasP, hasC, hasT bool
	usage.ForEach(func(k, v gjson.Result) bool {
		if v.Type != gjson.Number {
			return true
		}
		switch k.Str {
		case "promptTokens", "prompt_tokens", "inputTokens":
			if !hasP {
				p, hasP = int64(v.Num), true
			}
		case "completionTokens", "completion_tokens", "outputTokens":
			if !hasC {
				c, hasC = int64(v.Num), true
			}
		case "totalTokens", "total_tokens":
			if !hasT {
				t, hasT = int64(v.Num), true
			}
		}
		return true
	})
	if !hasP && !hasC && !hasT {
		return dst, nil
	}
	if !hasT {
		t = p + c
	}
	start := len(dst)
	dst = append(dst, `{"prompt_tokens":`...)
	dst = strconv.AppendInt(dst, p, 10)
	dst = append(dst, `,"completion_tokens":`...)
	dst = strconv.AppendInt(dst, c, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, t, 10)
	dst = append(dst, '}')
	return dst, dst[start:]
}

// text returns the text of raw, a valid JSON value, when it is a string. The
// text is a view of raw, or of c.str when raw has escapes: it is only valid
// until the next call.
func (c *convCore) text(raw string) (string, bool) {
	raw = trimJSONSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	lit := raw[1 : len(raw)-1]
	if strings.IndexByte(lit, '\\') < 0 {
		return lit, true
	}
	c.str = appendUnescaped(c.str[:0], lit)
	return unsafeString(c.str), true
}

func trimJSONSpace(s string) string {
	for len(s) > 0 && isJSONSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isJSONSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// appendUnescaped appends the text of lit, the inside of a valid JSON string
// literal, decoded as encoding/json does: a \u escape of a surrogate that is
// not part of a pair becomes U+FFFD. Bytes that are not valid UTF-8 are kept;
// appendJSONString replaces them when the text is written out again.
func appendUnescaped(dst []byte, lit string) []byte {
	for i := 0; i < len(lit); {
		j := strings.IndexByte(lit[i:], '\\')
		if j < 0 {
			return append(dst, lit[i:]...)
		}
		dst = append(dst, lit[i:i+j]...)
		i += j
		if i+1 >= len(lit) {
			return dst // cannot happen in a valid literal
		}
		e := lit[i+1]
		i += 2
		switch e {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(lit, i)
			if !ok {
				return dst
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+6 <= len(lit) && lit[i] == '\\' && lit[i+1] == 'u' {
					r2, ok = hex4(lit, i+2)
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, e)
		}
	}
	return dst
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// objectValue returns the raw JSON value of key at the top level of obj, a
// valid JSON object, or "" when obj has no such key. Unlike gjson it never
// decodes the strings it passes over, so it costs no allocation.
func objectValue(obj, key string) string {
	i := walkSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ""
	}
	i++
	for {
		i = walkSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return ""
		}
		kEnd := walkString(obj, i)
		k := obj[i+1 : kEnd-1]
		i = walkSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return ""
		}
		i = walkSpace(obj, i+1)
		vEnd := walkValue(obj, i)
		if k == key || strings.IndexByte(k, '\\') >= 0 && string(appendUnescaped(nil, k)) == key {
			return obj[i:vEnd]
		}
		i = walkSpace(obj, vEnd)
		if i >= len(obj) || obj[i] != ',' {
			return ""
		}
		i++
	}
}
