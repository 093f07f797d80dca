package translate

import (
	"io"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
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
	// Protocol is the stream's event protocol, the format of a registered
	// protocol with events (protocols.go); any other is chat's (FormatSSE).
	Protocol Format
	// Reply, when set, is the record the stream is read into, shared with
	// the caller (and a converter in front); otherwise the rewriter keeps
	// one of its own.
	Reply *Reply
	// WithholdUsage withholds the chat chunks that carry only usage
	// (choices: []), which the client did not ask for (SPEC 9.1).
	WithholdUsage bool
	// BeforeEnd, when set, is called once when the reply has ended (its
	// terminal event came, or the stream ended), before the protocol's own
	// ending is written: what it adds to the record reaches the meta.
	// Every event before the end has been written to out by then.
	BeforeEnd func(*Reply)
	// MaxMeta is max_meta_bytes, the bound of the meta collected (0: the
	// default, SPEC 8.1).
	MaxMeta int
	// MarkInterrupted ends a stream the upstream cut short with its
	// protocol's own error event (mark_interrupted, SPEC 11.1).
	MarkInterrupted bool
}

// SSERewriter forwards an event stream (SPEC 4.3, 4.4, 4.5) and reads it
// into a Reply. It is an io.Writer for the upstream's event stream: each
// complete event goes to out with its original bytes, in the same Write
// that completed it; meta-only events are withheld; the protocol (an
// eventDialect) reads each event into the record and says what becomes of
// it; and once the reply has ended, the protocol writes its own ending with
// the meta (a final chunk before [DONE], the terminal event spliced).
type SSERewriter struct {
	out     io.Writer
	opts    SSEOptions
	dialect eventDialect
	reply   *Reply // the caller's record, or one of the rewriter's own

	split   SSESplitter
	scratch []byte // joined data of multi-line events
	keys    jsonscan.KeyScanner
	wbuf    []byte // output of the current Write that is not a slice of its input

	// Pending output: a run of untouched events that lie one after another in
	// the caller's buffer, in[pendFrom:pendTo], written with one call.
	in               []byte // the caller's buffer during Write
	pendFrom, pendTo int

	done bool // the reply has ended, its ending written: later events pass as they are
	err  error

	// Whether the stream was cut short (SPEC 11.1, interrupted.go):
	// opened once it is a stream its protocol defines an end for (with
	// opensAtFirst, at its first JSON event; else when its dialect says);
	// endSeen once its dialect saw an end that is not its terminal event.
	opened, endSeen, opensAtFirst bool
	// ownChunks: the chunks are a converter's, which name no model of
	// their own (SPEC 11.2).
	ownChunks bool

	// Line endings stay whole (SPEC 8.1): dropLF is set when the LF
	// completing the last event's CRLF, should it start the next write,
	// is not to follow it (EventTail): the event was withheld or replaced,
	// or the module wrote that LF itself (sse_eol.go).
	dropLF bool

	// The stream's line ending, that of its first line (SPEC 4.3): the
	// events the module writes use it.
	eol lineEnd

	// The last bytes written to out, to start our own events on a fresh
	// event when the upstream's last one is unterminated (endOutput). It
	// starts as LFs: the start of the stream is as after a blank line.
	tail [3]byte
}

// NewSSERewriter returns a rewriter writing to out. meta, when not nil, is
// merged first into the record (what the module derived from the request).
func NewSSERewriter(out io.Writer, opts SSEOptions, meta *Meta) *SSERewriter {
	r := &SSERewriter{out: out, opts: opts, tail: [3]byte{'\n', '\n', '\n'}}
	r.split.Max = opts.MaxEvent
	r.reply = opts.Reply
	if r.reply == nil {
		// Apart, not a field: the handler shares its record, and a Reply
		// (about 1 KiB) in every rewriter would be allocated for nothing.
		r.reply = new(Reply)
	}
	r.reply.Meta.Limit(opts.MaxMeta, opts.Warn)
	if meta != nil {
		r.reply.Meta.Merge(meta)
	}
	p := eventProtocolOf(opts.Protocol)
	r.keys.Table = p.keyTable
	r.opensAtFirst = true // unless its dialect tells the opening itself
	r.dialect = p.events(r)
	return r
}

// Reply is the record the stream is read into.
func (r *SSERewriter) Reply() *Reply { return r.reply }

// Write consumes upstream bytes. It reports len(p) unless writing to out
// failed; that error is sticky.
func (r *SSERewriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.eol == eolUnknown || r.eol == eolCRAtEnd {
		r.learnEOL(p)
	}
	r.in = p
	r.split.Feed(p, r)
	r.flushPending()
	r.in = nil
	if r.err == nil && r.reply.TooLarge() {
		r.err = ErrContentTooLarge
	}
	if r.err != nil {
		return 0, r.err
	}
	return len(p), nil
}

// Close ends the upstream stream: an unterminated last event is handled, and
// the reply ends there if its terminal event never came.
func (r *SSERewriter) Close() error {
	if r.err != nil {
		return r.err
	}
	if r.eol == eolCRAtEnd { // the first line's CR ended the stream: no LF follows it
		r.eol = eolCR
	}
	r.split.Close(r)
	r.end(nil)
	r.flushPending()
	if r.err == nil && r.reply.TooLarge() {
		r.err = ErrContentTooLarge
	}
	return r.err
}

// verdict is what becomes of one upstream event.
type verdict uint8

const (
	vForward  verdict = iota // its original bytes go out
	vWithhold                // nothing goes out (a meta-only or usage-only event)
	vOwn                     // the protocol wrote bytes of its own in its place
	vTerminal                // it ends the reply: the protocol's ending writes it
)

// eventDialect is one event protocol's reading of its events: what each
// event adds to the record, and how the protocol carries meta at the end.
type eventDialect interface {
	// object reads an event whose data is a JSON object; keys tells which
	// of the keys the scan looks for (the engine's, then the protocol's
	// own: keySet) its bytes hold.
	object(raw, data []byte, s string, keys keySet) verdict
	// doneEvent says what becomes of data: [DONE].
	doneEvent() verdict
	// end writes the protocol's ending once the reply has ended: term is
	// the held terminal event, nil when the stream ended without one.
	end(term []byte)
}

// Event implements SSEHandler.
func (r *SSERewriter) Event(raw []byte) {
	r.dropLF = true // unless it goes out as it came
	if r.opts.Stats != nil {
		r.opts.Stats.Events++
	}
	if r.done {
		r.emitRaw(raw)
		return
	}
	data, ok, known := r.split.Data()
	if !known {
		data, ok, r.scratch = EventData(raw, r.scratch)
	}
	if !ok {
		r.emitRaw(raw)
		return
	}
	if len(data) == 6 && string(data) == "[DONE]" {
		r.act(raw, r.dialect.doneEvent())
		return
	}
	s := strView(data)
	if i := jsonscan.Space(s, 0); i == len(s) || s[i] != '{' {
		r.emitRaw(raw) // no JSON object
		return
	}
	if r.opensAtFirst && !r.opened {
		// Its first JSON object: a body that ends inside the first event
		// was never a stream of the protocol (SPEC 4's first event).
		r.opened = jsonscan.Valid(s)
	}
	keys := keySet(r.keys.Scan(data))
	if keys&keyMeta != 0 && r.upstreamMeta(s) {
		return // withheld: its meta joins the final one
	}
	r.act(raw, r.dialect.object(raw, data, s, keys))
}

// upstreamMeta merges an event's top-level meta object (SPEC 4.1). It
// reports whether the event is to be withheld: it has no other key, and the
// merged meta will reach the client in the ending. With final_meta off
// there is no ending of ours, so the upstream's event passes and its meta
// survives.
func (r *SSERewriter) upstreamMeta(s string) bool {
	m := gjson.Get(s, "meta")
	if !m.IsObject() || !jsonscan.Valid(s) {
		return false
	}
	r.reply.Meta.MergeJSON([]byte(m.Raw))
	return r.opts.FinalMeta && onlyKey(s, "meta")
}

// act carries out a verdict on an event.
func (r *SSERewriter) act(raw []byte, v verdict) {
	switch v {
	case vForward:
		r.emitRaw(raw)
	case vTerminal:
		r.end(raw)
	}
}

// end ends the reply once: every event so far goes out, the record is
// completed (BeforeEnd, then what it knows beyond the merged meta), and the
// protocol writes its ending; later events pass as they are.
func (r *SSERewriter) end(term []byte) {
	if r.done {
		return
	}
	r.done = true
	r.reply.Terminal = term != nil
	r.flushPending() // every event before the end goes out first
	if r.opts.BeforeEnd != nil {
		r.opts.BeforeEnd(r.reply)
	}
	r.decideInterrupted(term)
	r.reply.Seal()
	r.dialect.end(term)
	r.markInterrupted()
}

// noteError records the message of an error event (SPEC 4.3).
func (r *SSERewriter) noteError(s string, keys keySet) {
	if keys&keyError == 0 {
		return
	}
	if msg, isErr := errorEvent(s); isErr {
		r.reply.SetError(msg)
	}
}

// errorEvent reads an error event of SPEC 4.3: a data object with an error
// (an object, or a string), a type of error, or an object of error (vLLM's
// mid-stream error), told as a stream's first event is (readFirstEvent: an
// object cut short inside is no event, SPEC 11.1). Its message is
// error.message, else error when a string, else errorText, else message.
func errorEvent(s string) (string, bool) {
	if !readFirstEvent(bytesView(s)).isErr {
		return "", false
	}
	res := gjson.GetMany(s, "error.message", "error", "errorText", "message")
	for _, m := range res {
		if m.Type == gjson.String {
			return m.Str, true
		}
	}
	if res[1].Exists() {
		return res[1].Raw, true
	}
	return "upstream error", true
}

// EventTail implements SSETailHandler: the LF of the last event's CRLF,
// which came in this write. It follows the event when the event went out
// as it came; it goes with the event when the event was withheld or
// replaced, or when the module already completed the CRLF.
func (r *SSERewriter) EventTail(lf []byte) {
	if !r.dropLF {
		r.emitAt(lf, 0) // the first byte of the write
	}
}

// Oversize implements SSEHandler: a huge event passes as it arrives.
func (r *SSERewriter) Oversize(p []byte, first bool) {
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

// appendSJSONString appends s as a JSON string the way sjson writes a string
// value: as it is between quotes when that is valid JSON, else as
// encoding/json marshals it (HTML characters escaped, invalid UTF-8 as
// U+FFFD, U+2028 and U+2029 escaped).
func appendSJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > 0x7f || c == '"' || c == '\\' {
			return jsonscan.AppendStringHTML(buf, s)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// onlyKey reports whether the valid JSON object s has no key but key.
func onlyKey(s, key string) bool {
	it := jsonscan.IterAt(s, jsonscan.Space(s, 0))
	for k, _, more := it.Next(); more; k, _, more = it.Next() {
		if !jsonscan.KeyIs(k, key) {
			return false
		}
	}
	return true
}

// ownBuf returns the rewriter's scratch output buffer, empty, for an event
// of the module's own, once the output so far ends with a blank line
// (endOutput), so that an event of ours never runs into the upstream's. The
// event is built with LF line ends; emitOwn writes it in the stream's.
func (r *SSERewriter) ownBuf() []byte {
	r.endOutput()
	return r.wbuf[:0]
}

// emitOwn writes an event the module built in ownBuf's buffer, in the
// stream's line ending, keeping the buffer for reuse.
func (r *SSERewriter) emitOwn(b []byte) {
	b = r.inEOL(b)
	r.wbuf = b[:0]
	r.write(b)
}

// emitAt queues untouched bytes b, which start at offset at of the
// caller's buffer (-1: they are not in it). Bytes that follow each other
// in the caller's buffer are written together; anything else goes out at
// once.
func (r *SSERewriter) emitAt(b []byte, at int) {
	r.dropLF = false
	if at < 0 {
		r.emitCopy(b) // the splitter's own buffer, reused right after
		return
	}
	if at != r.pendTo { // not right after what is pending
		r.flushPending()
		r.pendFrom = at
	}
	r.pendTo = at + len(b)
}

// emitCopy writes b now: it lives in a buffer that is about to be reused.
// b is upstream bytes as they came (an LF completing its CRLF follows).
func (r *SSERewriter) emitCopy(b []byte) {
	r.dropLF = false
	r.flushPending()
	r.write(b)
}

// emitRaw queues the upstream event the splitter is handing on, which goes
// out as it came; in a CRLF stream a last CR gets its LF (completeCR).
func (r *SSERewriter) emitRaw(raw []byte) {
	r.emitAt(raw, r.split.at)
	r.completeCR(raw)
}

// emitEvent writes now an event of the upstream's that the protocol held
// (its terminal event), as it came; in a CRLF stream a last CR gets its LF.
func (r *SSERewriter) emitEvent(raw []byte) {
	r.emitCopy(raw)
	r.completeCR(raw)
}

func (r *SSERewriter) flushPending() {
	if r.pendTo == r.pendFrom {
		return
	}
	p := r.in[r.pendFrom:r.pendTo]
	r.pendFrom, r.pendTo = 0, 0
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
		return
	}
	for _, c := range b {
		r.tail[0], r.tail[1], r.tail[2] = r.tail[1], r.tail[2], c
	}
}
