package translate

import (
	"encoding/binary"
	"io"
	"math/bits"
	"unsafe"

	"github.com/tidwall/gjson"
)

// SSEOptions configure an SSERewriter (SPEC 4.3).
type SSEOptions struct {
	// MaxEvent is max_event_bytes: larger events pass uninspected.
	MaxEvent int
	// FinalMeta writes the final meta event (final_meta).
	FinalMeta bool
	// BareMeta writes it as data: {"meta":…} instead of a chunk (meta_event bare).
	BareMeta bool
	// Model is the fallback model of the final meta chunk when no chunk came.
	Model string
	// Structured, when set, splits a structured reply out of the content
	// deltas of choice 0 (SPEC 7).
	Structured *ReplyStream
	// ErrorsAsContent also shows an upstream error event to the user as a
	// content chunk "Error: <message>" (the edge endpoint, SPEC 6.3).
	ErrorsAsContent bool
	// Stats, when set, receives the counts.
	Stats *Stats
	// Warn, when set, is told of each fallback by a short reason code
	// (never content).
	Warn func(reason string)
	// MaxMeta is max_meta_bytes, the bound of the meta collected (0: the
	// default, SPEC 8.1).
	MaxMeta int
}

// SSERewriter is the streaming rewriter of SPEC 4.3. It is an io.Writer for
// the upstream's event stream: each complete event goes to out with its
// original bytes, in the same Write that completed it; meta-only events are
// withheld; tool names and meta are collected; and exactly one final meta
// event is written before [DONE] (or at Close when the upstream sent none).
type SSERewriter struct {
	out  io.Writer
	opts SSEOptions

	split   SSESplitter
	meta    Meta
	scratch []byte // joined data of multi-line events
	wbuf    []byte // output of the current Write that is not a slice of its input
	last    []byte // data of the last chunk, for the final meta chunk's head

	// Pending output: a run of untouched events that lie one after another in
	// the caller's buffer, written with one call.
	pend []byte
	in   []byte // the caller's buffer during Write

	done     bool // [DONE] seen
	finished bool // final meta written (or due to be skipped)
	err      error

	// Line endings stay whole (SPEC 8.1): lastRaw is set when the last
	// event went out as its own bytes, so that the LF completing its CRLF
	// in the next write follows it (EventTail); dropLF when the module
	// completed that CRLF itself before writing an event of its own.
	lastRaw bool
	dropLF  bool

	// The last bytes written to out (tail[3-ntail:]), to start our own
	// events on a fresh event when the upstream's last one is unterminated.
	tail  [3]byte
	ntail int
}

// NewSSERewriter returns a rewriter writing to out. meta, when not nil, is
// merged first (what the module derived from the request).
func NewSSERewriter(out io.Writer, opts SSEOptions, meta *Meta) *SSERewriter {
	r := &SSERewriter{out: out, opts: opts}
	r.split.Max = opts.MaxEvent
	r.meta.Limit(opts.MaxMeta, opts.Warn)
	if meta != nil {
		r.meta.Merge(meta)
	}
	return r
}

// Meta is the meta collected so far.
func (r *SSERewriter) Meta() *Meta { return &r.meta }

// Write consumes upstream bytes. It reports len(p) unless writing to out
// failed; that error is sticky.
func (r *SSERewriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.in = p
	r.split.Feed(p, r)
	r.in = nil
	r.flushPending()
	if r.err != nil {
		return 0, r.err
	}
	return len(p), nil
}

// Close ends the upstream stream: an unterminated last event is handled, and
// the final meta event is written if [DONE] never came.
func (r *SSERewriter) Close() error {
	if r.err != nil {
		return r.err
	}
	r.split.Close(r)
	r.writeFinalMeta()
	r.flushPending()
	return r.err
}

// Event implements SSEHandler.
func (r *SSERewriter) Event(raw []byte) {
	r.lastRaw, r.dropLF = false, false
	if r.opts.Stats != nil {
		r.opts.Stats.Events++
	}
	if r.done {
		r.emit(raw)
		return
	}
	var data []byte
	var ok bool
	data, ok, r.scratch = EventData(raw, r.scratch)
	if !ok {
		r.emit(raw)
		return
	}
	if len(data) == 6 && string(data) == "[DONE]" {
		r.writeFinalMeta()
		r.done = true
		r.emit(raw)
		return
	}
	if !startsObject(data) {
		r.emit(raw)
		return
	}
	r.objectEvent(raw, data)
}

// deltaToolNames calls add with each name in
// choices[*].delta.tool_calls[*].function.name and
// choices[*].delta.function_call.name of a chunk (the # queries of gjson,
// walked without building their result strings).
func deltaToolNames(s string, keys uint8, add func(string)) {
	choices := gjson.Get(s, "choices")
	if !choices.IsArray() {
		return
	}
	if keys&hasToolCall != 0 {
		choices.ForEach(func(_, c gjson.Result) bool {
			if calls := c.Get("delta.tool_calls"); calls.IsArray() {
				calls.ForEach(func(_, call gjson.Result) bool {
					if n := call.Get("function.name"); n.Type == gjson.String {
						add(n.Str)
					}
					return true
				})
			}
			return true
		})
	}
	if keys&hasFuncCall != 0 {
		choices.ForEach(func(_, c gjson.Result) bool {
			if n := c.Get("delta.function_call.name"); n.Type == gjson.String {
				add(n.Str)
			}
			return true
		})
	}
}

// startsObject reports whether the first byte after JSON white space is '{'.
func startsObject(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == '{'
	}
	return false
}

// EventTail implements SSETailHandler: the LF of the last event's CRLF,
// which came in this write. It follows the event when the event went out
// as it came; it goes with the event when the event was withheld or
// replaced, or when the module already completed the CRLF.
func (r *SSERewriter) EventTail(lf []byte) {
	if r.lastRaw && !r.dropLF {
		r.emit(lf)
	}
	r.dropLF = false
}

// Oversize implements SSEHandler: a huge event passes as it arrives.
func (r *SSERewriter) Oversize(p []byte, first bool) {
	r.lastRaw, r.dropLF = true, false
	if first {
		if r.opts.Stats != nil {
			r.opts.Stats.Events++
			r.opts.Stats.Oversize++
		}
		if r.opts.Warn != nil {
			r.opts.Warn(ReasonEventTooLarge)
		}
	}
	r.emitCopy(p)
}

// Keys an event's JSON is looked up for, found by scanKeys.
const (
	hasMeta     = 1 << iota // "meta"
	hasToolCall             // "tool_calls"
	hasFuncCall             // "function_call"
	hasError                // "error"
	hasName                 // "name"
)

// scanKeys reports which of the quoted strings "meta", "tool_calls",
// "function_call", "error" and "name" occur in data, exactly as
// bytes.Contains would for each, in one pass: it visits every '"' (eight
// bytes at a time, SWAR) and looks at what follows. Most events of a stream have none of them, so this
// is what keeps them off gjson's path.
func scanKeys(data []byte) (set uint8) {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:]) ^ (lo * '"')
		m := (x - lo) &^ x & hi // high bit set in each byte that was '"'
		for m != 0 {
			k := i + bits.TrailingZeros64(m)>>3 + 1
			m &= m - 1
			if k < len(data) && keyFirst[data[k]] {
				set |= keyAt(data[k:])
			}
		}
	}
	for ; i < len(data); i++ {
		if data[i] == '"' && i+1 < len(data) && keyFirst[data[i+1]] {
			set |= keyAt(data[i+1:])
		}
	}
	return set
}

// keyFirst marks the first letters of the keys scanKeys looks for: most
// strings start with another one and are passed over without a call.
var keyFirst = [256]bool{'m': true, 't': true, 'f': true, 'e': true, 'n': true}

// keyAt tells which key, with its closing quote, r starts with.
func keyAt(r []byte) uint8 {
	if len(r) < 5 {
		return 0
	}
	switch r[0] {
	case 'm':
		if string(r[:5]) == `meta"` {
			return hasMeta
		}
	case 't':
		if len(r) >= 11 && string(r[:11]) == `tool_calls"` {
			return hasToolCall
		}
	case 'f':
		if len(r) >= 14 && string(r[:14]) == `function_call"` {
			return hasFuncCall
		}
	case 'e':
		if len(r) >= 6 && string(r[:6]) == `error"` {
			return hasError
		}
	case 'n':
		if string(r[:5]) == `name"` {
			return hasName
		}
	}
	return 0
}

// objectEvent handles an event whose data looks like a JSON object.
func (r *SSERewriter) objectEvent(raw, data []byte) {
	s := unsafeString(data)
	keys := scanKeys(data)
	if keys&hasMeta != 0 {
		if m := gjson.Get(s, "meta"); m.IsObject() && ValidJSON(s) {
			r.meta.MergeJSON([]byte(m.Raw))
			// Withheld: its meta joins the final one. With final_meta off
			// there is no final one, so the upstream's event passes and its
			// meta survives (SPEC 4.1).
			if r.opts.FinalMeta && onlyKey(s, "meta") {
				return
			}
		}
	}
	if keys&(hasToolCall|hasFuncCall) != 0 && keys&hasName != 0 {
		deltaToolNames(s, keys, r.meta.AddTool)
	}
	isError := keys&hasError != 0 && gjson.Get(s, "error").Exists() && !gjson.Get(s, "choices").Exists()
	if !isError {
		r.last = append(r.last[:0], data...)
	}
	if r.opts.Structured != nil && !isError {
		if r.structuredEvent(raw, data) {
			return
		}
	}
	r.emit(raw)
	if isError && r.opts.ErrorsAsContent {
		msg := gjson.Get(s, "error.message")
		text := msg.Str
		if msg.Type != gjson.String {
			text = gjson.Get(s, "error").String()
		}
		r.emitOwn(r.head().AppendDelta(r.ownBuf(), "content", "Error: "+text, false))
	}
}

// structuredEvent runs the content delta of choice 0 through the structured
// reply decoder. It reports whether it wrote (or dropped) the event itself.
func (r *SSERewriter) structuredEvent(raw, data []byte) bool {
	s := unsafeString(data)
	choice, ok := choiceZero(s)
	if !ok {
		return false
	}
	c := choice.Get("delta.content")
	if c.Type != gjson.String {
		return false
	}
	text := r.opts.Structured.Feed(c.Str)
	if text == c.Str {
		return false
	}
	if text == "" && !carriesMore(s, choice) {
		return true // only raw JSON of the structured reply: nothing to show
	}
	buf, ok := appendReplaced(append(r.ownBuf(), "data: "...), data, c.Raw, text)
	if !ok {
		return false
	}
	r.emitOwn(append(buf, "\n\n"...))
	return true
}

// appendReplaced appends data with the JSON value raw (a substring of it)
// replaced by the string text, spliced where it lies: what sjson.SetBytes
// makes of data for that value's path, without its copies and look-ups.
func appendReplaced(buf, data []byte, raw, text string) ([]byte, bool) {
	if len(data) == 0 || len(raw) == 0 {
		return buf, false
	}
	off := int(uintptr(unsafe.Pointer(unsafe.StringData(raw))) - uintptr(unsafe.Pointer(&data[0])))
	if off < 0 || off+len(raw) > len(data) {
		return buf, false
	}
	buf = append(buf, data[:off]...)
	buf = appendSJSONString(buf, text)
	return append(buf, data[off+len(raw):]...), true
}

// appendSJSONString appends s as a JSON string the way sjson writes a string
// value: as it is between quotes when that is valid JSON, else as
// encoding/json marshals it.
func appendSJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > 0x7f || c == '"' || c == '\\' {
			return appendMarshalString(buf, s)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// appendMarshalString appends what json.Marshal(s) returns, without its
// allocations: HTML characters escaped, invalid UTF-8 as U+FFFD, U+2028 and
// U+2029 escaped.
func appendMarshalString(dst []byte, s string) []byte { return appendJSONStr(dst, s, true) }

// choiceZero returns choice 0 of a chunk: the element of choices whose index
// is 0, or that has no index (some providers omit it).
func choiceZero(s string) (choice gjson.Result, ok bool) {
	gjson.Get(s, "choices").ForEach(func(_, c gjson.Result) bool {
		if idx := c.Get("index"); !idx.Exists() || (idx.Type == gjson.Number && idx.Num == 0) {
			choice, ok = c, true
			return false
		}
		return true
	})
	return choice, ok
}

// carriesMore reports whether a chunk carries something besides content that
// a client needs: the role, a finish reason, usage, tool calls, or another
// choice.
func carriesMore(s string, choice gjson.Result) bool {
	for _, v := range [...]gjson.Result{
		choice.Get("delta.role"), choice.Get("finish_reason"), gjson.Get(s, "usage"),
		choice.Get("delta.tool_calls"), gjson.Get(s, "choices.1"),
	} {
		if v.Exists() && v.Type != gjson.Null {
			return true
		}
	}
	return false
}

// onlyKey reports whether the JSON object s has no key but key.
func onlyKey(s, key string) bool {
	only := true
	gjson.Parse(s).ForEach(func(k, _ gjson.Result) bool {
		if k.Str != key {
			only = false
		}
		return only
	})
	return only
}

// head is the id, created and model the final chunks repeat: the last
// chunk's, else fresh ones.
func (r *SSERewriter) head() ChunkHead {
	return chunkHeadFrom(r.last, func() ChunkHead { return NewChunkHead("", 0, r.opts.Model) })
}

// writeFinalMeta writes the one final meta event, when there is something to
// say and final_meta is on, and the structured metadata when the reply was
// structured.
func (r *SSERewriter) writeFinalMeta() {
	if r.finished {
		return
	}
	r.finished = true
	if r.opts.Structured != nil {
		if md, ok := r.opts.Structured.Metadata(); ok {
			r.meta.Set(KeyStructuredMetadata, md)
		} else if r.opts.Structured.Structured() && r.opts.Warn != nil {
			r.opts.Warn(ReasonStructuredUnparsed)
		}
	}
	if !r.opts.FinalMeta || r.meta.Empty() {
		return
	}
	if r.opts.Stats != nil {
		r.opts.Stats.FinalMeta++
	}
	meta := r.meta.JSON()
	buf := r.ownBuf()
	if r.opts.BareMeta {
		buf = AppendBareMeta(buf, meta)
	} else {
		buf = r.head().AppendMeta(buf, meta)
	}
	r.emitOwn(buf)
}

// ownBuf returns the rewriter's scratch output buffer, emptied after any
// pending output has been written. When what was written so far does not
// end with a blank line (an unterminated last event at Close, or the rest
// of an oversize one), the buffer starts with what ends that event, so that
// an event of ours never runs into the upstream's.
func (r *SSERewriter) ownBuf() []byte {
	r.flushPending()
	if r.lastRaw && r.split.AwaitingLF() && !r.dropLF {
		// The last event went out ending in a CR whose LF has not come
		// yet: complete the CRLF here, so that nothing of ours lands
		// between the two, and drop the LF when it comes.
		r.dropLF = true
		return append(r.wbuf[:0], '\n')
	}
	return append(r.wbuf[:0], r.openEventEnd()...)
}

// openEventEnd returns the line ends that make the output written so far
// end with a blank line: "" when it does (or nothing was written).
func (r *SSERewriter) openEventEnd() string {
	t := r.tail[3-r.ntail:]
	n := len(t)
	if n == 0 {
		return ""
	}
	last := t[n-1]
	if last != '\n' && last != '\r' {
		return "\n\n" // inside a line
	}
	k := n - 1 // start of the last line end
	if last == '\n' && k > 0 && t[k-1] == '\r' {
		k--
	}
	if k == 0 || t[k-1] == '\n' || t[k-1] == '\r' {
		return "" // that line is blank (or the output is one line end)
	}
	if last == '\r' {
		return "\n\n" // a lone "\n" would only complete its CRLF
	}
	return "\n"
}

// emitOwn writes bytes built in wbuf, keeping the buffer for reuse.
func (r *SSERewriter) emitOwn(b []byte) {
	r.wbuf = b[:0]
	r.write(b)
}

// emit queues an untouched event. Events that follow each other in the
// caller's buffer are written together; anything else goes out at once.
func (r *SSERewriter) emit(b []byte) {
	r.lastRaw = true
	if !within(r.in, b) {
		r.emitCopy(b) // the splitter's own buffer, reused right after
		return
	}
	if len(r.pend) > 0 && cap(r.pend) > len(r.pend) && &r.pend[:len(r.pend)+1][len(r.pend)] == &b[0] {
		r.pend = r.pend[:len(r.pend)+len(b)]
		return
	}
	r.flushPending()
	r.pend = b
}

// emitCopy writes b now: it lives in a buffer that is about to be reused.
func (r *SSERewriter) emitCopy(b []byte) {
	r.flushPending()
	r.write(b)
}

func (r *SSERewriter) flushPending() {
	if len(r.pend) == 0 {
		return
	}
	p := r.pend
	r.pend = nil
	r.write(p)
}

func (r *SSERewriter) write(b []byte) {
	if r.err != nil || len(b) == 0 {
		return
	}
	if _, err := r.out.Write(b); err != nil {
		r.err = err
	}
	if len(b) >= 3 {
		copy(r.tail[:], b[len(b)-3:])
		r.ntail = 3
		return
	}
	for _, c := range b {
		r.tail[0], r.tail[1], r.tail[2] = r.tail[1], r.tail[2], c
	}
	r.ntail = min(r.ntail+len(b), 3)
}

// within reports whether b lies inside outer's memory.
func within(outer, b []byte) bool {
	if len(outer) == 0 || len(b) == 0 {
		return false
	}
	o := uintptr(unsafe.Pointer(&outer[0]))
	x := uintptr(unsafe.Pointer(&b[0]))
	return x >= o && x+uintptr(len(b)) <= o+uintptr(len(outer))
}
