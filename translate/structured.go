package translate

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Structured output (SPEC 7): the request side (response_format and the
// instruction), the split of a whole reply, and the incremental decoder of a
// streamed one.

// DefaultStructuredInstruction is the built-in instruction appended to the
// system prompt in structured mode (structured_output.instruction replaces it).
const DefaultStructuredInstruction = "Answer in two steps. First, work out which entities the user's message " +
	"is about (people, organizations, places, products, projects, documents, events, amounts of money, " +
	"dates and the like) and list each one, with its type, under \"entities\". Then write your reply to the " +
	"user in \"reply\", in Markdown, discussing those entities where they matter. Also give the message's " +
	"\"intent\", whether the user has to do something (\"requires_user_action\"), two to four short " +
	"\"topics\", and \"scheduling_intent\" when the user talks about a date or time for something. " +
	"Answer with the JSON object of the response schema only, with no text before or after it."

// structuredResponseFormat is the response_format value sent upstream, with
// SPEC 7's enums and required keys. The schema lists entities before reply,
// the order the instruction asks the model to work in (models that honour
// the property order then name the entities first).
var structuredResponseFormat = []byte(`{"type":"json_schema","json_schema":{"name":"structured_reply","schema":{"type":"object","properties":{` +
	`"entities":{"type":"array","description":"The entities the user's message is about, named before the reply is written.",` +
	`"items":{"type":"object","properties":{"name":{"type":"string"},"type":{"type":"string","enum":[` +
	`"person","organization","location","product","project","document","event","money","date","investor","advisor",` +
	`"metric","technology","tool","service","methodology","credential","timeframe","feature","url","email_address"]}},` +
	`"required":["name","type"]}},"reply":{"type":"string","description":"The reply to the user, in Markdown."},` +
	`"intent":{"type":"string","enum":["question","request","task_delegation","feedback","complaint","follow_up","attachment_analysis"]},` +
	`"requires_user_action":{"type":"boolean"},"topics":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":4},` +
	`"scheduling_intent":{"type":"object","properties":{"detected":{"type":"boolean"},"datetime_mentioned":{"type":"string"}}}},` +
	`"required":["reply","intent"]}}}`)

var errStructuredNotObject = errors.New("request body is not a JSON object")

// ApplyStructuredRequest adds the json_schema response_format and the
// instruction ("" = DefaultStructuredInstruction) to a chat request body.
// The instruction is appended, after a blank line, to the first system
// message when its content is a string; otherwise it becomes a new first
// system message. A body without messages gets a messages array holding just
// that message; messages that are not an array are left alone. Every other
// byte of the body is kept; body itself is never modified.
func ApplyStructuredRequest(body []byte, instruction string) ([]byte, error) {
	root, ok := jsonObject(strView(body))
	if !ok {
		return nil, errStructuredNotObject
	}
	instruction = cmp.Or(instruction, DefaultStructuredInstruction)
	msgs := root.Get("messages")
	out, err := sjson.SetRawBytes(body, "response_format", structuredResponseFormat)
	switch {
	case err != nil:
		return nil, err
	case !msgs.Exists():
		return sjson.SetRawBytes(out, "messages", prependSystemMessage("[]", instruction))
	case !msgs.IsArray():
		return out, nil
	}
	sys, i := gjson.Result{}, -1 // the first system message's content and index
	msgs.ForEach(func(_, m gjson.Result) bool {
		i++
		if m.Get("role").Str == "system" {
			sys = m.Get("content")
			return false
		}
		return true
	})
	if sys.Type != gjson.String {
		return sjson.SetRawBytes(out, "messages", prependSystemMessage(msgs.Raw, instruction))
	}
	if sys.Str != "" {
		instruction = sys.Str + "\n\n" + instruction
	}
	return sjson.SetRawBytes(out, "messages."+strconv.Itoa(i)+".content", jsonscan.AppendString(nil, instruction))
}

// prependSystemMessage returns the JSON array raw (its first byte '[', as
// gjson's IsArray says) with the system message
// {"role":"system","content":text} first, keeping the bytes of the other
// elements.
func prependSystemMessage(raw, text string) []byte {
	rest := raw[1:]
	dst := make([]byte, 0, len(raw)+len(text)+48)
	dst = append(jsonscan.AppendString(append(dst, `[{"role":"system","content":`...), text), '}')
	if rest[jsonscan.Space(rest, 0)] != ']' {
		dst = append(dst, ',')
	}
	return append(dst, rest...)
}

// SplitStructuredReply splits a whole structured reply: ok when content,
// after leading and trailing white space, is a JSON object with a string
// "reply". metadata is the compact structured_metadata object of SPEC 7:
// {"intent","requires_user_action","entities":[{"name","type"}],"topics"}
// plus "scheduling":{"detected","datetime_mentioned"} when the model gave
// scheduling_intent. Missing values are "", false and [].
func SplitStructuredReply(content string) (reply string, metadata []byte, ok bool) {
	root, ok := jsonObject(jsonscan.TrimSpace(content))
	res := root.Get("reply") // nothing, when content is no object
	if !ok || res.Type != gjson.String {
		return content, nil, false
	}
	// Decoded by the stream decoder, which follows encoding/json: gjson
	// differs from it on broken surrogates and invalid UTF-8.
	d := ReplyStream{state: rsReply}
	d.str(res.Raw, 1)
	d.materialise()
	return string(d.out), appendStructuredMetadata(nil, root), true
}

// structuredMetadataKeys are the members of a reply object
// structured_metadata is made of, in appendStructuredMetadata's order.
var structuredMetadataKeys = [...]string{"intent", "requires_user_action", "entities", "topics", "scheduling_intent"}

// appendStructuredMetadata appends the structured_metadata of a parsed reply
// object. Values of an unexpected JSON type are read leniently: intent,
// names, types and topics as their text, flags by gjson's Bool.
func appendStructuredMetadata(dst []byte, root gjson.Result) []byte {
	var v [len(structuredMetadataKeys)]gjson.Result
	root.ForEach(func(k, val gjson.Result) bool {
		// the first of duplicate keys, like gjson.Get
		if i := slices.Index(structuredMetadataKeys[:], k.Str); i >= 0 && !v[i].Exists() {
			v[i] = val
		}
		return true
	})
	intent, action, entities, topics, sched := v[0], v[1], v[2], v[3], v[4]

	dst = jsonscan.AppendString(append(dst, `{"intent":`...), valueAsString(intent))
	dst = strconv.AppendBool(append(dst, `,"requires_user_action":`...), action.Bool())
	dst = append(dst, `,"entities":[`...)
	if entities.IsArray() {
		entities.ForEach(func(_, e gjson.Result) bool {
			var name, typ string
			switch {
			case e.IsObject():
				name, typ = valueAsString(e.Get("name")), valueAsString(e.Get("type"))
			case e.Type == gjson.String:
				name = e.Str
			default:
				return true
			}
			if dst[len(dst)-1] != '[' { // not the first
				dst = append(dst, ',')
			}
			dst = jsonscan.AppendString(append(dst, `{"name":`...), name)
			dst = append(jsonscan.AppendString(append(dst, `,"type":`...), typ), '}')
			return true
		})
	}
	dst = append(dst, `],"topics":[`...)
	if topics.IsArray() {
		topics.ForEach(func(_, t gjson.Result) bool {
			if t.Type == gjson.Null || t.Type == gjson.JSON { // null, an object or an array
				return true
			}
			if dst[len(dst)-1] != '[' {
				dst = append(dst, ',')
			}
			dst = jsonscan.AppendString(dst, valueAsString(t))
			return true
		})
	}
	dst = append(dst, ']')
	if sched.IsObject() {
		dst = strconv.AppendBool(append(dst, `,"scheduling":{"detected":`...), sched.Get("detected").Bool())
		dst = jsonscan.AppendString(append(dst, `,"datetime_mentioned":`...), valueAsString(sched.Get("datetime_mentioned")))
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// ReplyStream decodes the reply of a streamed structured answer: fed the
// content deltas one by one, it returns the decoded characters of the
// top-level "reply" string as soon as they are complete, wherever that key
// sits in the object, and keeps the raw content for Metadata.
//
// It is an incremental scanner of the top-level object. Values other than
// the reply are skipped (strings with their escapes, nested objects and
// arrays by depth, scalars up to their delimiter), so that braces, quotes or
// a "reply" key inside them do not count. Only the first top-level "reply"
// is streamed (gjson, and so SplitStructuredReply, reads the first too).
// Escapes follow encoding/json: \uXXXX, surrogate pairs, and U+FFFD for a
// lone or broken surrogate, and for each byte of invalid UTF-8. Only an
// incomplete escape, a high surrogate waiting for its pair, or the first
// bytes of a UTF-8 sequence cut by a delta are held back, so every returned
// string is valid UTF-8 made of whole characters.
//
// Content whose first non-space character is not '{' is not structured:
// the stream passes unchanged. Once the scanner has read the reply (or
// met something that is not JSON), later deltas only feed the raw copy.
//
// A ReplyStream is for one stream and one goroutine.
type ReplyStream struct {
	maxBytes int
	state    uint8

	over bool   // raw content went past maxBytes
	raw  []byte // the whole content, for Metadata
	ws   []byte // white space seen while undecided

	// per-Feed output: run is a piece of the delta itself, returned without
	// copying when it is all there is; out collects anything else.
	run string
	out []byte

	// tail is what a delta cut short inside a string (an escape, a high
	// surrogate's escape that the next one may pair, the first bytes of a
	// character): it is read again with the next delta (resume).
	tail  [12]byte
	ntail int

	// key decoder: the decoded key, as far as it matters
	key  [8]byte
	klen int

	nest nesting // a value other than the reply, being skipped
}

const (
	rsUndecided   uint8 = iota // only white space so far
	rsPassthrough              // not structured: deltas pass unchanged
	rsExpectKey                // top level: after '{' or ','
	rsKey                      // inside a top-level key
	rsColon                    // after a key
	rsValue                    // after ':'
	rsReply                    // inside the reply string
	rsNested                   // inside a nested object or array, or another top-level string
	rsScalar                   // inside a number or literal
	rsAfterValue               // after a top-level value
	rsDone                     // nothing more to show: reply read or object closed
	rsBroken                   // not JSON: nothing more to show
)

// NewReplyStream makes a decoder that keeps at most maxBytes of raw content
// for Metadata (maxBytes <= 0: no limit).
func NewReplyStream(maxBytes int) *ReplyStream {
	return &ReplyStream{maxBytes: maxBytes}
}

// Structured reports whether the stream was recognised as a structured
// reply (its first non-space character was '{').
func (d *ReplyStream) Structured() bool { return d.state > rsPassthrough }

// Feed takes the next content delta and returns the text to show the user
// now: the newly decoded part of the reply in structured mode, the delta
// itself in passthrough mode, "" while only white space has been seen.
func (d *ReplyStream) Feed(delta string) string {
	switch d.state {
	case rsPassthrough:
		return delta
	case rsUndecided:
		i := jsonscan.Space(delta, 0)
		if i == len(delta) {
			if d.maxBytes > 0 && len(d.ws)+len(delta) > d.maxBytes {
				return d.passthrough(delta)
			}
			d.ws = append(d.ws, delta...)
			return ""
		}
		if delta[i] != '{' {
			return d.passthrough(delta)
		}
		d.state = rsExpectKey
		if c := 1024; d.maxBytes <= 0 || d.maxBytes >= c {
			d.raw = make([]byte, 0, c) // a typical whole answer, grown when longer
		}
		d.capture(strView(d.ws))
		d.ws = nil
		d.capture(delta)
		return d.scan(delta, i+1)
	default:
		d.capture(delta)
		if d.state >= rsDone {
			return ""
		}
		return d.scan(delta, 0)
	}
}

// passthrough switches to passthrough mode, returning the held white space
// and delta.
func (d *ReplyStream) passthrough(delta string) string {
	d.state = rsPassthrough
	s := string(d.ws) + delta // delta itself when no white space was held
	d.ws = nil
	return s
}

// capture keeps s in the raw copy, up to maxBytes.
func (d *ReplyStream) capture(s string) {
	if d.over || len(s) == 0 {
		return
	}
	if d.maxBytes > 0 && len(d.raw)+len(s) > d.maxBytes {
		d.over, d.raw = true, nil
		return
	}
	d.raw = appendBounded(d.raw, bytesView(s), d.maxBytes)
}

// Metadata returns the structured_metadata of the whole content (as
// SplitStructuredReply's), once the stream has ended. It reports false in
// passthrough mode, when the content went past maxBytes or does not parse.
func (d *ReplyStream) Metadata() ([]byte, bool) {
	if !d.Structured() || d.over {
		return nil, false
	}
	_, md, ok := SplitStructuredReply(strView(d.raw))
	return md, ok
}

func (d *ReplyStream) materialise() {
	if d.run != "" {
		d.out = append(d.out, d.run...)
		d.run = ""
	}
}

// keyStr collects a decoded key; only its first bytes and its length are
// kept, which is all "is it reply" needs.
func (d *ReplyStream) keyStr(s string) {
	if d.klen < len(d.key) {
		copy(d.key[d.klen:], s)
	}
	d.klen += len(s)
}

// put puts decoded text into the string being read: a key, or the reply,
// where the first piece is a view of the delta (run), not a copy.
func (d *ReplyStream) put(s string) {
	switch {
	case d.state != rsReply:
		d.keyStr(s)
	case len(d.out) == 0 && d.run == "":
		d.run = s
	default:
		d.materialise()
		d.out = append(d.out, s...)
	}
}

// putRune is put of a decoded character.
func (d *ReplyStream) putRune(r rune) {
	if d.state == rsReply {
		d.materialise()
		d.out = utf8.AppendRune(d.out, r)
		return
	}
	var b [utf8.UTFMax]byte
	d.keyStr(strView(b[:utf8.EncodeRune(b[:], r)]))
}

// scan runs the top-level scanner over s from i and returns the reply text
// decoded from it.
func (d *ReplyStream) scan(s string, i int) string {
	d.out = d.out[:0]
	d.run = ""
	if d.ntail > 0 {
		i = d.resume(s)
	}
	for i < len(s) && d.state < rsDone {
		c := s[i]
		switch d.state {
		case rsExpectKey, rsColon, rsAfterValue:
			if !jsonscan.IsSpace(c) {
				d.punct(c)
			}
			i++
		case rsKey:
			var closed bool
			if i, closed = d.str(s, i); closed {
				d.state = rsColon
			}
		case rsValue:
			switch {
			case jsonscan.IsSpace(c):
			case c == '"':
				if d.klen == 5 && string(d.key[:5]) == "reply" { // the first: rsReply ends in rsDone
					d.state = rsReply
				} else { // skipped as a string at depth 0
					d.state, d.nest = rsNested, nesting{inStr: true}
				}
			case c == '{' || c == '[':
				d.state, d.nest = rsNested, nesting{depth: 1}
			default:
				d.state = rsScalar
			}
			i++
		case rsReply:
			var closed bool
			if i, closed = d.str(s, i); closed {
				d.state = rsDone
			}
		case rsNested:
			if d.nest.step(c) {
				d.state = rsAfterValue
			}
			i++
		case rsScalar: // up to a delimiter, which rsAfterValue reads
			if c == ',' || c == '}' || jsonscan.IsSpace(c) {
				d.state = rsAfterValue
			} else {
				i++
			}
		}
	}
	if len(d.out) == 0 {
		return d.run
	}
	return string(d.out)
}

// punct reads c, a top-level character other than white space, where the
// scanner expects punctuation: a key's quote, a colon or a comma, or the
// '}' that ends the object where a key or a comma may come.
func (d *ReplyStream) punct(c byte) {
	switch {
	case d.state == rsExpectKey && c == '"':
		d.state, d.klen = rsKey, 0
	case d.state == rsColon && c == ':':
		d.state = rsValue
	case d.state == rsAfterValue && c == ',':
		d.state = rsExpectKey
	case d.state != rsColon && c == '}':
		d.state = rsDone
	default:
		d.state = rsBroken
	}
}

// str decodes a JSON string's characters from s[i:] (put), up to and
// including the closing quote, as encoding/json does (jsonscan.Escape), and
// each byte of invalid UTF-8 as U+FFFD. It returns where it stopped and
// whether the string closed. What s cuts short is kept in tail.
func (d *ReplyStream) str(s string, i int) (int, bool) {
	for i < len(s) {
		j := i
		for j < len(s) {
			c := s[j]
			if c < utf8.RuneSelf {
				if c == '"' || c == '\\' {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			j += size
		}
		if j > i {
			d.put(s[i:j])
			i = j
			continue
		}
		if s[i] == '"' {
			return i + 1, true
		}
		r, n := char(s, i)
		switch {
		case n < 0:
			d.state = rsBroken
			return len(s), false
		case n == 0:
			d.ntail = copy(d.tail[:], s[i:])
			return len(s), false
		}
		d.putRune(r)
		i += n
	}
	return i, false
}

// char decodes what starts at s[i] inside a string and is no plain text:
// an escape (jsonscan.Escape), a character of 0x80 and above, a byte of
// invalid UTF-8 (U+FFFD). n is 0 when s cuts it short, -1 when it is not
// JSON.
func char(s string, i int) (r rune, n int) {
	switch {
	case s[i] == '\\':
		return jsonscan.Escape(s, i, true)
	case !utf8.FullRuneInString(s[i:]):
		return 0, 0
	}
	return utf8.DecodeRuneInString(s[i:])
}

// resume decodes what the last delta cut short (tail) with the first bytes
// of s, as many as any of it can need, and returns where in s the scan goes
// on.
func (d *ReplyStream) resume(s string) int {
	var b [2 * len(d.tail)]byte
	n := copy(b[:], d.tail[:d.ntail])
	n += copy(b[n:], s)
	t := strView(b[:n]) // read only here, as b is
	p := 0
	for p < d.ntail {
		r, size := char(t, p)
		switch {
		case size < 0:
			d.state = rsBroken
			return len(s)
		case size == 0: // cut short again: s is all in t
			d.ntail = copy(d.tail[:], t[p:])
			return len(s)
		}
		d.putRune(r)
		p += size
	}
	p, d.ntail = p-d.ntail, 0
	return p
}

// nesting follows a JSON value byte by byte to its end: strings with
// their escapes, objects and arrays by depth, so that brackets and quotes
// inside strings do not count (a skipped value of ReplyStream, an element
// of a Gemini array). The zero value is outside any value.
type nesting struct {
	depth      int
	inStr, esc bool
}

// step reads the value's next byte and reports whether it ends the value:
// the bracket that closes it, or the quote that closes a string at depth 0.
func (n *nesting) step(c byte) bool {
	switch {
	case n.esc:
		n.esc = false
	case n.inStr:
		n.esc = c == '\\'
		n.inStr = c != '"'
		return !n.inStr && n.depth == 0
	case c == '"':
		n.inStr = true
	case c == '{' || c == '[':
		n.depth++
	case c == '}' || c == ']':
		n.depth--
		return n.depth == 0
	}
	return false
}
