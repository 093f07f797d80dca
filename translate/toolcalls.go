package translate

import (
	"hash/maphash"
	"strings"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// Tool calls with their arguments (SPEC 11.3, tool_arguments on): each
// protocol's reader says where a call begins and what its arguments are
// (chat.go, responses.go, anthropic.go, gemini.go, datastream.go,
// uistream.go); the entries, their bounds and their JSON in the meta are
// here.

// KeyToolCalls is the meta key of the calls with their arguments.
const KeyToolCalls = "tool_calls"

const (
	// MaxToolCalls is the most entries meta.tool_calls holds: later calls
	// are left out (SPEC 11.3).
	MaxToolCalls = 64
	// MaxToolArgBytes is the most bytes of a call's arguments an entry
	// holds: they are clipped at a UTF-8 character boundary before it.
	MaxToolArgBytes = 4096
	// keepArgs is how much of a call's arguments is held while they come:
	// MaxToolArgBytes and the rest of a character that starts within it,
	// so that where to clip is known. Memory per reply stays within
	// MaxToolCalls × keepArgs, whatever the upstream sends (SPEC 8.1).
	keepArgs = MaxToolArgBytes + utf8.UTFMax - 1
)

// callKey is what a protocol finds a call again by: a chat stream's choice
// and call index, a block's or output item's index, a hashed id.
type callKey struct{ a, b int64 }

// callEntry is one entry of meta.tool_calls while the reply is read.
type callEntry struct {
	name string
	args []byte // the arguments' text so far, at most keepArgs bytes
	over bool   // more than keepArgs bytes came
	// replace: the next fragment replaces args (held meanwhile: an
	// Anthropic block's input of content_block_start, SPEC 11.3).
	replace bool
	key     callKey
	keyed   bool
	choice  int64 // a chat stream's choice
	last    bool  // the last call begun in its choice (chat stream)
	out     bool  // left out: its name alone would pass the meta's bound
}

// toolCalls are the calls of one reply, in the order they began: the
// first MaxToolCalls of them.
type toolCalls struct {
	list    []callEntry
	names   int    // JSON bytes of the names held, within the meta's bound
	hit     int    // where find found a call last: its first guess
	scratch []byte // a decoded string fragment
	sealed  bool   // the meta's tool_calls is the module's (sealToolCalls)
}

// hashSeed keys the hashed ids: an upstream cannot make two ids collide
// without knowing it.
var hashSeed = maphash.MakeSeed()

// idKey is the key of a call found by a string id (a UI stream's
// toolCallId, an output item's id).
func idKey(id string) callKey { return callKey{int64(maphash.String(hashSeed, id)), -1} }

// find returns the call begun with key, nil when none of the calls held
// was.
func (t *toolCalls) find(key callKey) *callEntry {
	n := len(t.list)
	for i := 0; i < n; i++ {
		j := t.hit + i
		if j >= n {
			j -= n
		}
		if c := &t.list[j]; c.keyed && c.key == key {
			t.hit = j
			return c
		}
	}
	return nil
}

// begin records that a call of name began (keyed: found again by key)
// and returns its entry, nil once MaxToolCalls calls are held. maxBytes
// is the meta's bound: the names held stay within it, so that memory
// follows the bounds whatever names the upstream sends.
func (t *toolCalls) begin(name string, key callKey, keyed bool, maxBytes int) *callEntry {
	if len(t.list) >= MaxToolCalls {
		return nil
	}
	if len(t.list) == cap(t.list) {
		grown := make([]callEntry, len(t.list), min(max(2*cap(t.list), 4), MaxToolCalls))
		copy(grown, t.list)
		t.list = grown
	}
	t.list = append(t.list, callEntry{key: key, keyed: keyed})
	c := &t.list[len(t.list)-1]
	c.setName(t, name, maxBytes)
	return c
}

// setName gives c its name, when it fits the bound.
func (c *callEntry) setName(t *toolCalls, name string, maxBytes int) {
	n := jsonscan.StringLen(name)
	if t.names+n > maxBytes {
		c.out = true
		return
	}
	t.names += n
	c.name = strings.Clone(name)
}

// beginIn is begin for a call of a chat stream's choice: it becomes the
// choice's last call, which fragments without an index continue. A call
// past MaxToolCalls still ends the last one's run.
func (t *toolCalls) beginIn(choice int64, name string, key callKey, keyed bool, maxBytes int) *callEntry {
	for i := range t.list {
		if c := &t.list[i]; c.choice == choice {
			c.last = false
		}
	}
	c := t.begin(name, key, keyed, maxBytes)
	if c != nil {
		c.choice, c.last = choice, true
	}
	return c
}

// lastIn returns the last call begun in a chat stream's choice, nil when
// it is not held.
func (t *toolCalls) lastIn(choice int64) *callEntry {
	for i := len(t.list) - 1; i >= 0; i-- {
		if c := &t.list[i]; c.choice == choice && c.last {
			return c
		}
	}
	return nil
}

// setArgs replaces c's arguments with the text of the JSON value raw
// (addArgs).
func (t *toolCalls) setArgs(c *callEntry, raw string) {
	if c == nil {
		return
	}
	c.args, c.over, c.replace = c.args[:0], false, false
	t.addArgs(c, raw)
}

// addArgs appends to c's arguments the text of the JSON value raw, as it
// came (SPEC 11.3): the string it holds when it is a string, else its
// bytes; nothing for "" (absent) or null. At most keepArgs bytes are
// held, and the work is bounded by what is held, not by raw's size.
func (t *toolCalls) addArgs(c *callEntry, raw string) {
	if c == nil || raw == "" || raw == "null" {
		return
	}
	if raw[0] == '"' && len(raw) >= 2 {
		raw = raw[1 : len(raw)-1] // the literal
		if strings.IndexByte(raw, '\\') >= 0 {
			// A decoded byte takes at most six of the literal's: a prefix
			// of 6 × room bytes and two escapes more decodes to more than
			// room bytes, the escape it may cut short beyond them.
			room := keepArgs - len(c.args)
			if c.replace {
				room = keepArgs
			}
			if limit := 6*max(room, 0) + 24; len(raw) > limit {
				raw = raw[:limit]
			}
			t.scratch = jsonscan.AppendUnescaped(t.scratch[:0], raw)
			raw = strView(t.scratch)
		}
	}
	c.add(raw)
}

// add appends text to c's arguments, up to keepArgs bytes.
func (c *callEntry) add(text string) {
	if text == "" {
		return
	}
	if c.replace {
		c.args, c.over, c.replace = c.args[:0], false, false
	}
	room := keepArgs - len(c.args)
	if len(text) > room {
		c.over = true
		text = text[:room]
	}
	c.args = appendBounded(c.args, bytesView(text), keepArgs)
}

// clippedArgs returns c's arguments clipped to their longest prefix of at
// most MaxToolArgBytes bytes that ends at a UTF-8 character boundary, and
// whether they were clipped (SPEC 11.3). A byte that starts no valid
// character is a character of its own.
func (c *callEntry) clippedArgs() ([]byte, bool) {
	b := c.args
	if len(b) <= MaxToolArgBytes {
		return b, false
	}
	cut := MaxToolArgBytes
	for i := cut - 1; i >= 0 && i > cut-utf8.UTFMax; i-- {
		if !utf8.RuneStart(b[i]) {
			continue
		}
		if r, size := utf8.DecodeRune(b[i:]); !(r == utf8.RuneError && size == 1) && i+size > cut {
			cut = i
		}
		break
	}
	return b[:cut], true
}

// jsonLen is the length of c's entry as appendToolCall writes it.
func (c *callEntry) jsonLen() int {
	args, clipped := c.clippedArgs()
	n := len(`{"name":,"arguments":}`) + jsonscan.StringLen(c.name) + jsonscan.StringLen(strView(args))
	if clipped {
		n += len(`,"clipped":true`)
	}
	return n
}

// appendToolCall appends c's entry: {"name":…,"arguments":…}, with
// "clipped":true when its arguments were clipped.
func appendToolCall(dst []byte, c *callEntry) []byte {
	args, clipped := c.clippedArgs()
	dst = append(dst, `{"name":`...)
	dst = jsonscan.AppendString(dst, c.name)
	dst = append(dst, `,"arguments":`...)
	dst = jsonscan.AppendString(dst, strView(args))
	if clipped {
		dst = append(dst, `,"clipped":true`...)
	}
	return append(dst, '}')
}

// sealToolCalls writes the calls into the meta as tool_calls, in the
// order they began: an entry that would take the meta past its bound is
// left out (SPEC 11.3, 8.1), and a reply without a call (or whose entries
// are all left out) has no tool_calls of the module's.
func (r *Reply) sealToolCalls() {
	t := &r.calls
	if !r.ToolArguments || len(t.list) == 0 {
		return
	}
	m := &r.Meta
	room := m.room(KeyToolCalls) - jsonscan.StringLen(KeyToolCalls) - len(`:[],`)
	size := 2
	for i := range t.list {
		size += t.list[i].jsonLen() + 1
	}
	buf := make([]byte, 0, max(min(room, size), 0)+2)
	buf = append(buf, '[')
	kept := 0
	for i := range t.list {
		c := &t.list[i]
		if c.out {
			m.dropped()
			continue
		}
		start := len(buf)
		if kept > 0 {
			buf = append(buf, ',')
		}
		buf = appendToolCall(buf, c)
		if len(buf)-1 > room {
			buf = buf[:start]
			m.dropped()
			continue
		}
		kept++
	}
	if kept > 0 {
		m.setValue(KeyToolCalls, append(buf, ']'), true)
		t.sealed = true
	}
}

// setAfterSeal sets a key of the meta that is known only once the record
// is sealed (a streamed structured reply's metadata): tool_calls, which
// comes last so that no other key is left out for it, is written again
// after it.
func (r *Reply) setAfterSeal(key string, raw []byte) {
	if !r.calls.sealed {
		r.Meta.Set(key, raw)
		return
	}
	r.Meta.unset(KeyToolCalls)
	r.Meta.Set(key, raw)
	r.sealToolCalls()
}

// readJSONToolCalls reads the calls of a JSON reply of protocol proto
// (nil: a chat completion), when tool_arguments is on: a reading of its
// own, so that the replies of everyone else are read as they were.
func readJSONToolCalls(s string, proto *jsonProtocol, rep *Reply) {
	p := &chatProtocol
	if proto != nil {
		p = proto.proto
	}
	if p.jsonCalls != nil {
		p.jsonCalls(gjson.Parse(s), rep)
	}
}

// beginCall is begin on the record's calls, within its meta's bound.
func (r *Reply) beginCall(name string, key callKey, keyed bool) *callEntry {
	return r.calls.begin(name, key, keyed, r.Meta.MaxBytes())
}
