package translate

import (
	"io"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// StreamOptions configure a Rewriter (SPEC 4.3).
type StreamOptions struct {
	// MaxEvent is max_event_bytes: larger units pass uninspected.
	MaxEvent int
	// FinalMeta writes the meta at the reply's end (final_meta).
	FinalMeta bool
	// Stats, when set, receives the counts.
	Stats *Stats
	// Warn, when set, is told of each fallback by a short reason code
	// (never content).
	Warn func(reason string)
	// Protocol is the stream's protocol, the format of a registered
	// protocol with streams (protocols.go); any other is chat's (FormatSSE).
	Protocol Format
	// Reply, when set, is the record the stream is read into, shared with
	// the caller (and a converter in front); otherwise the rewriter keeps
	// one of its own.
	Reply *Reply
	// BeforeEnd, when set, is called once when the reply has ended (its
	// terminal unit came, or the stream ended), before the protocol's own
	// ending is written: what it adds to the record reaches the meta.
	// Every unit before the end has been written to out by then.
	BeforeEnd func(*Reply)
	// MaxMeta is max_meta_bytes, the bound of the meta collected (0: the
	// default, SPEC 8.1).
	MaxMeta int
	// MarkInterrupted ends a stream the upstream cut short with its
	// protocol's own error unit (mark_interrupted, SPEC 11.1).
	MarkInterrupted bool
	// Chat is what only a chat stream reads.
	Chat ChatOptions
}

// Rewriter forwards a stream (SPEC 4.3 to 4.7) and reads it into a Reply.
// It is an io.Writer for the upstream's body: its framing cuts the bytes
// into units (SSE events, NDJSON lines); each complete unit goes to out
// with its original bytes, in the same Write that completed it; the
// protocol reads each unit's data (a unitReader) and says what it holds;
// the rewriter keeps the books (errors, usage, opening, the end) and,
// once the reply has ended, writes the meta where the protocol says.
type Rewriter struct {
	out    io.Writer
	opts   StreamOptions
	proto  *protocol
	reader unitReader
	fr     framing
	reply  *Reply // the caller's record, or one of the rewriter's own

	keys jsonscan.KeyScanner
	u    unit   // the reading of the current unit, reused
	wbuf []byte // output of the current Write that is not a slice of its input

	// Pending output: a run of untouched units that lie one after another in
	// the caller's buffer, in[pendFrom:pendTo], written with one call.
	in               []byte // the caller's buffer during Write
	pendFrom, pendTo int

	done bool // the reply has ended, its ending written: later units pass as they are
	err  error

	// Whether the stream was cut short (SPEC 11.1, interrupted.go): opened
	// once it is a stream its protocol defines an end for; endSeen once
	// its reading saw an end that is not its terminal unit; blind when a
	// unit passed unread (a framing that cannot tell then).
	opened, endSeen, blind bool
	doneEnds, keepLast     bool // the protocol's (streamReading)

	// usage is a copy of the data of the last unit whose usage may hold a
	// count: read at the end, whatever ends the reply (SPEC 9.1), so that
	// the units that repeat it are not read for it one by one.
	usage []byte

	// The last bytes written to out, to start our own units on a fresh
	// line when the upstream's last one is unterminated. It starts as LFs:
	// the start of the stream is as after a blank line.
	tail [3]byte
}

// NewRewriter returns a rewriter writing to out. meta, when not nil, is
// merged first into the record (what the module derived from the request).
func NewRewriter(out io.Writer, opts StreamOptions, meta *Meta) *Rewriter {
	r := &Rewriter{out: out, opts: opts, tail: [3]byte{'\n', '\n', '\n'}}
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
	r.proto = streamProtocolOf(opts.Protocol)
	st := r.proto.stream
	r.keys.Table, r.doneEnds, r.keepLast = st.keyTable, st.metaUnit != nil, st.keepLast
	r.reader = r.proto.stream.reader(&r.opts)
	r.u.rep, r.u.scan, r.u.wantID = r.reply, &r.keys, opts.BeforeEnd != nil
	r.fr = r.proto.stream.framing(r)
	return r
}

// Reply is the record the stream is read into.
func (r *Rewriter) Reply() *Reply { return r.reply }

// Write consumes upstream bytes. It reports len(p) unless writing to out
// failed; that error is sticky.
func (r *Rewriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	r.in = p
	r.fr.feed(p)
	r.flushPending()
	r.in = nil
	return r.result(len(p))
}

// Close ends the upstream stream: an unterminated last unit is read, and
// the reply ends there if its terminal unit never came.
func (r *Rewriter) Close() error {
	if r.err != nil {
		return r.err
	}
	r.fr.close()
	r.end(nil)
	r.flushPending()
	_, err := r.result(0)
	return err
}

func (r *Rewriter) result(n int) (int, error) {
	if r.err == nil && r.reply.TooLarge() {
		r.err = ErrContentTooLarge
	}
	if r.err != nil {
		return 0, r.err
	}
	return n, nil
}

// framing cuts a stream's bytes into units and writes units into it
// (sse_framing.go, ndjson_framing.go): it owns the stream's line endings.
type framing interface {
	// feed cuts p, calling Rewriter.unit for each unit it completes.
	feed(p []byte)
	// close ends the body: an unterminated last unit is read.
	close()
	// passed follows a unit that went out as it came (in what the framing
	// adds after one, such as the LF of a CR that ended it).
	passed(raw []byte)
	// passHeld writes a unit held past the write it came in (the
	// terminal one) as it came.
	passHeld(raw []byte)
	// own writes a unit of the module's own, built with LF line ends,
	// and returns b's buffer for reuse.
	own(b []byte) []byte
	// splice writes the terminal unit with "meta" set in the object at
	// path of its data ("" the data itself), every other byte as it came.
	splice(term []byte, path string, meta []byte)
}

// unitReader is one protocol's reading of one stream's units.
type unitReader interface {
	// read reads one unit whose data is a JSON object into u (and the
	// tools, calls and text it holds into u.rep).
	read(u *unit)
	// appendInterrupted appends the protocol's own error unit for a
	// stream cut short (SPEC 11.1), in its framing with LF line ends,
	// carrying meta when not nil; nothing when the protocol has none.
	appendInterrupted(dst, meta []byte) []byte
}

// unit is what a protocol is handed of one unit, and what it read there.
// The rewriter owns it and reuses it: the strings read are views into the
// unit's data, which the rewriter copies when it keeps them.
type unit struct {
	// Given.
	data  []byte
	s     string // data as a string
	keys  keySet // the keys the key scan found (keySet)
	rep   *Reply // the record: tools, calls and text are read into it
	isErr bool   // an error event (SPEC 4.3), its message recorded
	scan  *jsonscan.KeyScanner
	// wantID: the end hook reads the reply's id; ownChunks: the chunks are
	// a converter's, which name no model.
	wantID, ownChunks bool

	// Read.
	opens    bool   // it opens the stream (preset until it opens: it is valid JSON)
	ends     bool   // an end that is not the terminal unit (a finish_reason)
	terminal bool   // it ends the reply: the meta goes into it at metaAt
	metaAt   string // the object of data the meta goes into ("" data itself)
	withhold bool   // it does not go out (a usage chunk not asked for)
	usage    bool   // it may hold usage counts (protocol.stream.usage reads them)
	errMsg   string // the reply's error, when the unit says the reply failed
	model    string // the model that served the reply
	id       string // the reply's id
	// own, when not empty, is a unit of the protocol's own (built in buf),
	// written after the unit, or in its place when replace is set.
	own     []byte
	replace bool
	buf     []byte
}

// str is the unit's data as a string.
func (u *unit) str() string { return strView(u.data) }

// first is where the unit's first key begins: no key is before it.
func (u *unit) first() int { return u.scan.First() }

// last is the data of the last unit read before this one.
func (u *unit) last() []byte { return u.scan.Held() }

// needID and needModel say whether the record still wants the reply's id
// and the model that served it.
func (u *unit) needID() bool    { return u.wantID && u.rep.ID == "" }
func (u *unit) needModel() bool { return !u.ownChunks && u.rep.Model == "" }

// unit reads one unit the framing cut: raw is its bytes, at where they
// start in the write (-1: elsewhere), data what its protocol reads (nil
// when it has none). Units that are not a JSON object pass unread. It
// reports whether the unit went out as it came and nothing after it: the
// framing then adds what it adds after such a unit (passed).
func (r *Rewriter) unit(raw, data []byte, at int) bool {
	if r.opts.Stats != nil {
		r.opts.Stats.Events++
	}
	if r.done || data == nil {
		r.emitAt(raw, at)
		return true
	}
	if r.doneEnds && len(data) == 6 && string(data) == "[DONE]" {
		r.end(raw)
		return false
	}
	s := strView(data)
	if i := jsonscan.Space(s, 0); i == len(s) || s[i] != '{' {
		r.emitAt(raw, at)
		return true
	}
	keys := keySet(r.keys.Scan(data))
	if keys&keyMeta != 0 && r.upstreamMeta(s) {
		return false // withheld: its meta joins the final one
	}
	// Field by field: a composite literal stored into the reused unit
	// copies and clears all of it, pointers and all, for every unit.
	u := &r.u
	u.data, u.keys = data, keys
	u.isErr, u.opens = false, !r.opened && jsonscan.Valid(s)
	u.ends, u.terminal, u.withhold, u.replace = false, false, false, false
	// errMsg, model, id, usage and own are left empty by the unit before
	// (note, and the end of unit, clear them); metaAt is read with
	// terminal only.
	if keys&keyError != 0 {
		if msg, isErr := errorEvent(s); isErr {
			r.reply.SetError(msg)
			u.isErr = true
		}
	}
	r.reader.read(u)
	r.opened = r.opened || u.opens
	r.endSeen = r.endSeen || u.ends && r.opened
	if u.errMsg != "" || u.id != "" || u.model != "" || u.usage {
		r.note(u)
	}
	if !u.isErr { // held by the key scan, which skips in the next unit what repeats it
		if r.keepLast {
			r.keys.Hold(u.data)
		} else {
			r.keys.Offer(u.data)
		}
	}
	switch {
	case u.withhold:
	case u.terminal:
		r.end(raw)
	case u.own == nil:
		r.emitAt(raw, at)
		return true
	case u.replace:
		u.buf = r.fr.own(u.own)[:0]
	default:
		r.emitAt(raw, at)
		r.fr.passed(raw)
		u.buf = r.fr.own(u.own)[:0]
	}
	u.own = nil
	return false
}

// note keeps the books of what a unit said of the reply.
func (r *Rewriter) note(u *unit) {
	rep := r.reply
	if u.errMsg != "" {
		rep.SetError(u.errMsg)
	}
	if u.id != "" && rep.ID == "" {
		rep.setID(u.id)
	}
	if u.model != "" && u.needModel() {
		rep.setModel(u.model)
	}
	if u.usage && r.proto.stream.usage != nil {
		if r.proto.stream.usageAdds {
			r.proto.stream.usage(u.str(), rep)
		} else {
			r.usage = append(r.usage[:0], u.data...)
		}
	}
	u.errMsg, u.id, u.model, u.usage = "", "", "", false
}

// upstreamMeta merges a unit's top-level meta object (SPEC 4.1). It
// reports whether the unit is to be withheld: it has no other key, and the
// merged meta will reach the client in the ending. With final_meta off
// there is no ending of ours, so the upstream's unit passes and its meta
// survives.
func (r *Rewriter) upstreamMeta(s string) bool {
	m := gjson.Get(s, "meta")
	if !m.IsObject() || !jsonscan.Valid(s) {
		return false
	}
	r.reply.Meta.MergeJSON([]byte(m.Raw))
	return r.opts.FinalMeta && onlyKey(s, "meta")
}

// end ends the reply once: every unit so far goes out, the record is
// completed (its usage, BeforeEnd, then what it knows beyond the merged
// meta), and the meta goes out where the protocol carries it; later units
// pass as they are.
func (r *Rewriter) end(term []byte) {
	if r.done {
		return
	}
	r.done = true
	rep := r.reply
	rep.Terminal = term != nil
	r.flushPending() // every unit before the end goes out first
	if len(r.usage) > 0 {
		r.proto.stream.usage(strView(r.usage), rep)
	}
	if r.opts.BeforeEnd != nil {
		r.opts.BeforeEnd(rep)
	}
	r.decideInterrupted(term)
	rep.Seal()
	if st := r.proto.stream; st.metaUnit != nil {
		if own := st.metaUnit(r.u.buf[:0], &r.opts, rep, r.keys.Held()); len(own) > 0 {
			r.countMeta()
			r.u.buf = r.fr.own(own)[:0]
		}
	}
	switch {
	case term == nil && !r.doneEnds:
		// The meta went nowhere (SPEC 4.4 to 4.7).
		rep.Cut = true
		if r.opts.Warn != nil {
			r.opts.Warn(ReasonNoTerminalEvent)
		}
	case term == nil:
	case r.doneEnds || !r.opts.FinalMeta || rep.Meta.Empty():
		r.fr.passHeld(term)
	default:
		r.fr.splice(term, r.u.metaAt, rep.Meta.JSON())
		r.countMeta()
	}
	r.markInterrupted()
}

func (r *Rewriter) countMeta() {
	if r.opts.Stats != nil {
		r.opts.Stats.FinalMeta++
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

// oversize counts a unit too large to read, which passes as it arrives.
func (r *Rewriter) oversize() {
	if r.opts.Stats != nil {
		r.opts.Stats.Events++
		r.opts.Stats.Oversize++
	}
	if r.opts.Warn != nil {
		r.opts.Warn(ReasonEventTooLarge)
	}
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

// emitAt queues untouched bytes b, which start at offset at of the
// caller's buffer (-1: they are not in it). Bytes that follow each other
// in the caller's buffer are written together; anything else goes out at
// once.
func (r *Rewriter) emitAt(b []byte, at int) {
	if at < 0 {
		r.emitCopy(b) // the framing's own buffer, reused right after
		return
	}
	if at != r.pendTo { // not right after what is pending
		r.flushPending()
		r.pendFrom = at
	}
	r.pendTo = at + len(b)
}

// emitCopy writes b now: it lives in a buffer that is about to be reused.
func (r *Rewriter) emitCopy(b []byte) {
	r.flushPending()
	r.write(b)
}

func (r *Rewriter) flushPending() {
	if r.pendTo == r.pendFrom {
		return
	}
	p := r.in[r.pendFrom:r.pendTo]
	r.pendFrom, r.pendTo = 0, 0
	r.write(p)
}

func (r *Rewriter) write(b []byte) {
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
