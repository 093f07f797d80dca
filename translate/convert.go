package translate

import (
	"io"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// defaultMaxLine is max_event_bytes' default, used when ConvertOptions.MaxLine
// is not positive.
const defaultMaxLine = 1 << 20

// convCore is what both AI SDK stream converters (datastream.go,
// uistream.go) share: they write OpenAI chat-completion chunks (SPEC 5).
//
// A converter is an io.Writer fed with the upstream body in pieces of any
// size: lines, events and the UTF-8 characters in them may be split across
// writes. Each part is converted as soon as its end has been read, and all
// the events one Write produces reach the output in a single Write (write).
// Close ends the stream (close): what was left unended is converted, then
// data: [DONE], once. Writes after that are ignored. The meta, usage and
// cost go into the record (ConvertOptions.Reply), which the Rewriter
// the chunks are written to reads.
// Memory stays bounded by MaxLine: a longer line or event is dropped as it
// arrives, never held whole. A converter is not safe for concurrent use.
type convCore struct {
	out     io.Writer
	opts    ConvertOptions
	maxLine int // longest line or event kept

	rep    *Reply // ConvertOptions.Reply
	hustle Hustle

	// The usage of message metadata (UI stream, metadataUsage): that of
	// the finish chunk unless its part brings its own (mdUsage); once the
	// finish chunk has been written (finished), meta.usage's (lateUsage).
	mdUsage, lateUsage []byte
	finished           bool

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
	scratch []byte // the usage object being built
	err     error  // the output's first error, sticky
	ended   bool   // the stream has ended ([DONE] or the rewriter closed)

	// The stream's end (SPEC 11.1): the first that came (endNone until
	// then), and whether its last part so far is an e part that ends it
	// once the body ends (data stream).
	endKind uint8
	lastE   bool

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
	c.rep = opts.Reply
	c.hustle.Max = c.rep.Meta.MaxBytes() // bounded by the record's reader
	c.maxLine = opts.MaxLine
	if c.maxLine <= 0 {
		c.maxLine = defaultMaxLine
	}
	if c.opts.Stats == nil {
		c.opts.Stats = new(Stats) // read by no one: spares a check per event
	}
}

// write runs feed over p, the converter's reading of it, and writes the
// events it made in one Write. It returns len(p), nil unless the output
// failed; that error is then returned by every later call.
func (c *convCore) write(p []byte, feed func([]byte)) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.ended {
		return len(p), nil
	}
	c.buf = c.buf[:0]
	feed(p)
	if err := c.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// close ends the stream: rest converts what was left unended, then end
// writes [DONE] or closes the rewriter. Later calls write nothing and
// return the output's error, if any.
func (c *convCore) close(rest func()) error {
	if c.err != nil || c.ended {
		return c.err
	}
	c.buf = c.buf[:0]
	rest()
	c.end()
	return c.flush()
}

// count counts an event read (ConvertOptions.Stats).
func (c *convCore) count() { c.opts.Stats.Events++ }

// skip counts an event skipped and tells Debug why (never its content).
func (c *convCore) skip(msg string) {
	c.opts.Stats.Events++
	c.opts.Stats.Skipped++
	if c.opts.Debug != nil {
		c.opts.Debug(msg)
	}
}

// oversize skips a line or event longer than MaxLine, dropped.
func (c *convCore) oversize(msg string) {
	c.opts.Stats.Oversize++
	c.skip(msg)
}

// announce records a message id, when id is a string; only the first one
// announced before the first chunk becomes the stream's id.
func (c *convCore) announce(id gjson.Result) bool {
	if !c.started && c.id == "" && id.Str != "" {
		c.id = strings.Clone(id.Str)
	}
	return id.Type == gjson.String
}

// data hands a data element to Hustle, or each element of an array.
func (c *convCore) data(v gjson.Result) {
	if !v.IsArray() {
		c.hustle.AddElement(bytesView(v.Raw))
		return
	}
	v.ForEach(func(_, e gjson.Result) bool {
		c.hustle.AddElement(bytesView(e.Raw))
		return true
	})
}

// call records a tool call of part (SPEC 11.3): the text of its member
// args's value as it came is its arguments; when its member id is a
// string, a call is recorded once per id. Nothing is looked up unless
// arguments are kept; id "" names no member (gjson's Get("") would find a
// member named "").
func (c *convCore) call(name string, part gjson.Result, id, args string) {
	rep := c.rep
	if !rep.ToolArguments {
		return
	}
	key, keyed := callKey{}, false
	var v gjson.Result
	if id != "" {
		v = part.Get(id)
	}
	if v.Type == gjson.String {
		if key, keyed = idKey(v.Str), true; rep.calls.find(key) != nil {
			return
		}
	}
	rep.calls.addArgs(rep.beginCall(name, key, keyed), jsonscan.ObjectValue(part.Raw, args))
}

// errorEvent writes the error event of SPEC 5.1, an end that is no
// interruption (SPEC 11.1).
func (c *convCore) errorEvent(msg string) {
	c.reachEnd(endError)
	c.runOf(false)
	c.buf = AppendErrorEvent(c.buf, msg)
	c.flushFull()
}

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
	c.buf = jsonscan.AppendString(c.buf, text)
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
// event (Rewriter.WriteMadeDeltas).
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

// finish reaches an end of kind (endWhole, endCut) and writes a finish
// chunk with the mapped finish reason and, when usage (else the message
// metadata's) holds token counts, OpenAI's usage object made of them (SPEC
// 5.1, 5.2).
func (c *convCore) finish(kind uint8, reason string, usage gjson.Result) {
	c.reachEnd(kind)
	role := c.start()
	c.finished = true
	if !usage.IsObject() && c.mdUsage != nil {
		usage = gjson.ParseBytes(c.mdUsage)
	}
	c.rep.setCostFrom(usage) // the chunk's usage carries the counts only
	var counts Usage
	var u []byte
	if counts.ReadAISDK(usage) {
		c.scratch = counts.appendChat(c.scratch[:0])
		u = c.scratch
	}
	c.runOf(false)
	c.buf = c.head.AppendFinish(c.buf, mapFinishReason(reason), role, u)
	c.flushFull()
}

// The ends of a converted stream (SPEC 11.1).
const (
	endNone  = iota
	endWhole // d, finish
	endError // 3, error: the client sees an error already
	endCut   // abort: an end, and the stream is interrupted
)

// reachEnd records an end; the first one decides.
func (c *convCore) reachEnd(kind uint8) {
	if c.endKind == endNone {
		c.endKind = kind
	}
}

// end completes the record's meta and writes [DONE], once. The chunks
// written so far reach the record's reader first, so that usage that came
// after the last chunk wins.
func (c *convCore) end() {
	if c.ended {
		return
	}
	c.ended = true
	rep := c.rep
	c.hustle.AppendTo(&rep.Meta, c.opts.HustleSummary)
	// SPEC 11.1 is told through the record: its reader adds the meta and
	// the error event. The stream was cut short when its first end was an
	// abort, or none came and its last part was not an e part that ends it;
	// a connection that failed is not a clean end.
	cut := !rep.Broken && (c.endKind == endCut || c.endKind == endNone && !c.lastE)
	rep.Interrupted = rep.Interrupted || cut
	if c.flush() != nil {
		return
	}
	if c.lateUsage != nil {
		late := gjson.ParseBytes(c.lateUsage)
		rep.Usage.ReadAISDK(late)
		rep.setCostFrom(late)
	}
	c.hustle.usageInto(rep)
	c.runOf(false)
	if closer, ok := c.out.(io.Closer); ok && cut && c.opts.MarkInterrupted {
		// The rewriter ends the stream without [DONE]: its final meta
		// event, then the error event of SPEC 11.1.
		c.err = closer.Close()
		return
	}
	c.buf = append(c.buf, DoneEvent...)
}

// flush writes the events built since the last flush in one Write.
func (c *convCore) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		done := false
		if c.run && c.runCount > 0 {
			done, c.err = c.fast.WriteMadeDeltas(c.buf, c.runCount, strView(c.runText))
		}
		if !done {
			_, c.err = c.out.Write(c.buf)
		}
		c.buf, c.runCount, c.runText = c.buf[:0], 0, c.runText[:0]
	}
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

// text returns the text of raw, a valid JSON value, when it is a string. The
// text is a view of raw, or of c.str when raw has escapes: it is only valid
// until the next call.
func (c *convCore) text(raw string) (string, bool) {
	raw = jsonscan.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	lit := raw[1 : len(raw)-1]
	if strings.IndexByte(lit, '\\') < 0 {
		return lit, true
	}
	c.str = jsonscan.AppendUnescaped(c.str[:0], lit)
	return strView(c.str), true
}

// ReadAISDK replaces u with an AI SDK usage object (data stream d:, UI
// stream finish or message-metadata): promptTokens/completionTokens (AI SDK
// 4), inputTokens/outputTokens (5 and later) or their snake_case forms.
func (u *Usage) ReadAISDK(usage gjson.Result) bool {
	in, okIn := firstCount(usage, "inputTokens", "promptTokens", "input_tokens", "prompt_tokens")
	out, okOut := firstCount(usage, "outputTokens", "completionTokens", "output_tokens", "completion_tokens")
	if !u.replace(in, okIn, out, okOut) {
		return false
	}
	if n, ok := firstCount(usage, "totalTokens", "total_tokens"); ok {
		u.setTotal(n)
	}
	if n, ok := firstCount(usage, "cachedInputTokens", "cached_input_tokens"); ok {
		u.setCached(n)
	}
	if n, ok := firstCount(usage, "reasoningTokens", "reasoning_tokens"); ok {
		u.setReasoning(n)
	}
	return true
}

// appendChat appends OpenAI's chat usage object of u's counts (SPEC 5.1).
func (u *Usage) appendChat(dst []byte) []byte {
	return append(u.appendCounts(dst, `{"prompt_tokens":`, `,"completion_tokens":`), '}')
}
