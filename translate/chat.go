package translate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// OpenAI chat completions (SPEC 4.2, 4.3): the protocol every request and
// reply is when no other protocol claims it.

// FormatSSE is a chat-completion event stream (numbered at registration).
var FormatSSE Format

var chatProtocol = protocol{
	name:   "sse",
	format: &FormatSSE,
	// No request, first event or JSON reply is told as chat: what no other
	// protocol claims is (RequestKindOf, Detector.Body, readJSONReply).
	stream: &streamReading{
		framing:  newSSEFraming,
		reader:   func(o *StreamOptions) unitReader { return &chatReader{o: o} },
		keys:     []string{"tool_calls", "name", "usage", "finish_reason"},
		usage:    readChatUsage,
		metaUnit: appendChatMeta,
		keepLast: true,
	},
	usage: &chatUsage,
	json: &jsonProtocol{
		// The names of message.tool_calls[*].function.name of each choice,
		// then its message.function_call.name (SPEC 4.2).
		tools: []string{"choices.*.message.tool_calls.#.function.name", "choices.*.message.function_call.name"},
		paths: []string{"choices.*.meta"}, // whether a choice has a meta (readChat)
	},
	jsonCalls: readChatCalls,
}

// chatUsage is where a chat completion's usage object keeps its counts.
var chatUsage = usageNames{paths: []string{"prompt_tokens", "completion_tokens", "total_tokens",
	"prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens", "cost"}}

// The keys the chat reading asks the key scan for, in its keys' order.
const (
	hasToolCall = keyProtocol << iota // "tool_calls"
	hasName                           // "name"
	hasUsage                          // "usage"
	hasFinish                         // "finish_reason"
)

// ChatOptions are what only a chat stream reads.
type ChatOptions struct {
	// BareMeta writes the final meta as data: {"meta":…} instead of a
	// chunk (meta_event bare).
	BareMeta bool
	// Model is the fallback model of the final meta chunk when no chunk came.
	Model string
	// Structured, when set, splits a structured reply out of the content
	// deltas of choice 0 (SPEC 7).
	Structured *ReplyStream
	// ErrorsAsContent also shows an upstream error event to the user as a
	// content chunk "Error: <message>" (the edge endpoint, SPEC 6.3).
	ErrorsAsContent bool
	// WithholdUsage withholds the chat chunks that carry only usage
	// (choices: []), which the client did not ask for (SPEC 9.1).
	WithholdUsage bool
}

// chatReader reads OpenAI chat-completion chunks (SPEC 4.3): tool names
// from the deltas, usage, choice 0's text, the structured reply (SPEC 7),
// and ends with one final meta event before [DONE] (appendChatMeta).
type chatReader struct {
	o *StreamOptions
	// sawUsage: a chunk had a usage object, which wins over Groq's
	// x_groq.usage whatever their order (SPEC 9.1).
	sawUsage bool
}

// ownChunkHead is the id, created and model the chunks of the module's own
// repeat: the last chunk's, else fresh ones.
func ownChunkHead(o *StreamOptions, last []byte) ChunkHead {
	return chunkHeadFrom(last, func() ChunkHead { return NewChunkHead("", 0, o.Chat.Model) })
}

// appendChatMeta appends the one final meta event, when there is
// something to say and final_meta is on (with the structured metadata
// when the reply was structured).
func appendChatMeta(dst []byte, o *StreamOptions, rep *Reply, last []byte) []byte {
	if st := o.Chat.Structured; st != nil {
		if md, ok := st.Metadata(); ok {
			rep.setAfterSeal(KeyStructuredMetadata, md)
		} else if st.Structured() && o.Warn != nil {
			o.Warn(ReasonStructuredUnparsed)
		}
	}
	if !o.FinalMeta || rep.Meta.Empty() {
		return dst
	}
	meta := rep.Meta.JSON()
	head := ownChunkHead(o, last)
	// Sized once: appended piece by piece from an empty buffer, the event
	// was reallocated at each doubling.
	dst = slices.Grow(dst, head.metaEventLen(len(meta)))
	if o.Chat.BareMeta {
		return AppendBareMeta(dst, meta)
	}
	return head.AppendMeta(dst, meta)
}

// deltaToolNames calls add with each name in
// choices[*].delta.tool_calls[*].function.name and
// choices[*].delta.function_call.name of a chunk that names something (the
// # queries of gjson, walked without building their result strings). The
// key scan looks for no "function_call": the legacy calls are rare, and a
// second key of its first byte ("finish_reason" is one, for SPEC 11.1) cost
// every chunk a comparison.
func deltaToolNames(s string, keys keySet, add func(string)) {
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
	if strings.Contains(s, `"function_call"`) {
		choices.ForEach(func(_, c gjson.Result) bool {
			if n := c.Get("delta.function_call.name"); n.Type == gjson.String {
				add(n.Str)
			}
			return true
		})
	}
}

// readDeltaCalls reads the tool-call deltas of a chunk into the record's
// calls (SPEC 11.3): a delta with a new (choice index, call index) begins
// a call; one without an index (absent or null) begins one when it names
// a function, else it continues the choice's last call; the arguments are
// the concatenation of the call's fragments. A choice without an index is
// the one at its place in choices. A chunk cut short inside is no chunk.
func readDeltaCalls(s string, rep *Reply) {
	if !jsonscan.Valid(s) {
		return
	}
	calls, max := &rep.calls, rep.Meta.MaxBytes()
	pos := int64(0)
	// The chunk is valid JSON: its members are found by jsonscan.ObjectValue,
	// which decodes no string it passes over (a fragment's escapes).
	gjson.Get(s, "choices").ForEach(func(_, ch gjson.Result) bool {
		choice := pos
		pos++
		if i, ok := jsonInt(jsonscan.ObjectValue(ch.Raw, "index")); ok {
			choice = i
		}
		tcs := jsonscan.ObjectValue(jsonscan.ObjectValue(ch.Raw, "delta"), "tool_calls")
		if tcs == "" || tcs[0] != '[' {
			return true
		}
		gjson.Parse(tcs).ForEach(func(_, call gjson.Result) bool {
			if !call.IsObject() {
				return true
			}
			fn := jsonscan.ObjectValue(call.Raw, "function")
			name, named := strAt(jsonscan.ObjectValue(fn, "name"), 0)
			var c *callEntry
			if i, ok := jsonInt(jsonscan.ObjectValue(call.Raw, "index")); ok {
				key := callKey{choice, i}
				if c = calls.find(key); c == nil {
					c = calls.beginIn(choice, name, key, true, max)
				} else if c.name == "" && !c.out && name != "" {
					c.setName(calls, name, max) // named after it began
				}
			} else if named {
				c = calls.beginIn(choice, name, callKey{}, false, max)
			} else {
				c = calls.lastIn(choice)
			}
			calls.addArgs(c, jsonscan.ObjectValue(fn, "arguments"))
			return true
		})
		return true
	})
}

// jsonInt is gjson's Int of raw, a JSON value, when it is a number.
func jsonInt(raw string) (int64, bool) {
	if raw == "" || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	return gjson.Parse(raw).Int(), true
}

// readChatCalls reads the calls of a chat completion (SPEC 11.3): each
// of choices[*].message.tool_calls[*], in choice order then call order,
// with its function.arguments.
func readChatCalls(root gjson.Result, rep *Reply) {
	root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		ch.Get("message.tool_calls").ForEach(func(_, call gjson.Result) bool {
			if !call.IsObject() {
				return true
			}
			fn := call.Get("function") // not an object: no name, no arguments
			rep.calls.addArgs(rep.beginCall(fn.Get("name").Str, callKey{}, false), jsonscan.ObjectValue(fn.Raw, "arguments"))
			return true
		})
		return true
	})
}

// read reads one chunk (or an error event) of a chat stream.
func (c *chatReader) read(u *unit) {
	s, keys, rep := u.str(), u.keys, u.rep
	if keys&hasName != 0 {
		deltaToolNames(s, keys, rep.Meta.AddTool)
	}
	if rep.ToolArguments && keys&hasToolCall != 0 {
		readDeltaCalls(s, rep)
	}
	// SPEC 11.1: its first chat chunk, an object with a choices array,
	// opens the stream, and a chunk with a finish_reason (only looked for
	// where the key scan saw the key) ends it. A chunk cut short inside
	// is no chunk.
	if u.opens {
		u.opens = gjson.Get(s, "choices").IsArray()
	}
	if keys&hasFinish != 0 {
		u.ends = finishReasonFrom(u.data, u.first()) && jsonscan.Valid(s)
	}
	// Any error event of SPEC 4.3 is one, choices beside it or not:
	// OpenRouter ends a failed generation with a chunk that has both
	// (finish_reason "error"), vLLM with {"object":"error",...}.
	if u.isErr {
		if c.o.Chat.ErrorsAsContent {
			msg, _ := rep.Err()
			u.own = ownChunkHead(c.o, u.last()).AppendDelta(u.buf, "content", "Error: "+msg, false)
		}
		return
	}
	// The id and model, only for who reads them (as for JSON replies): the
	// end hook (OpenClaw's run id) and the prices table. The first chunk
	// that names them: Azure's first chunk (its prompt filter results)
	// has "id":"" and "model":"".
	if u.needID() {
		u.id = gjson.Get(s, "id").Str
	}
	if u.needModel() {
		u.model = gjson.Get(s, "model").Str
	}
	if keys&hasUsage != 0 {
		if gjson.Get(s, "usage").IsObject() {
			c.sawUsage, u.usage = true, true
			if c.o.Chat.WithholdUsage && noChoices(s) {
				u.withhold = true // the usage chunk the client did not ask for
				return
			}
		} else {
			// Groq's place for a stream's usage: its last chunk's x_groq.
			u.usage = !c.sawUsage && gjson.Get(s, "x_groq.usage").IsObject()
		}
	}
	if c.o.Chat.Structured != nil {
		if c.structured(u) {
			return
		}
	}
	if rep.WantContent || rep.WaitsForText() {
		if choice, ok := choiceZero(s); ok {
			if t := choice.Get("delta.content"); t.Type == gjson.String && t.Str != "" {
				rep.SawText()
				rep.AddText(t.Str)
			}
		}
	}
}

// readChatUsage reads a chunk's usage, else Groq's x_groq.usage.
func readChatUsage(s string, rep *Reply) {
	u := gjson.Get(s, "usage")
	if !u.IsObject() {
		u = gjson.Get(s, "x_groq.usage")
	}
	rep.readUsage(u, &chatUsage)
}

// appendInterrupted is the chat stream's error event for a stream cut
// short (SPEC 11.1; chat SSE, both conversions, the edge stream): its meta
// went in the final meta event before it.
func (c *chatReader) appendInterrupted(dst, _ []byte) []byte {
	return append(dst, `data: {"error":{"message":"`+InterruptedMessage+`","type":"upstream_interrupted","code":null}}`+"\n\n"...)
}

// noChoices reports whether a chunk's choices is an empty array.
func noChoices(s string) bool {
	ch := gjson.Get(s, "choices")
	return ch.IsArray() && len(ch.Raw) > 0 && !ch.Get("0").Exists()
}

// structured runs the content delta of choice 0 through the structured
// reply decoder. It reports whether it decided what becomes of the chunk.
func (c *chatReader) structured(u *unit) bool {
	choice, ok := choiceZero(u.str())
	if !ok {
		return false
	}
	content := choice.Get("delta.content")
	if content.Type != gjson.String {
		return false
	}
	text := c.o.Chat.Structured.Feed(content.Str)
	if text != "" {
		u.rep.SawText()
	}
	u.rep.AddText(text)
	switch {
	case text == content.Str:
	case text == "" && !carriesMore(u.str(), choice):
		u.withhold = true // only raw JSON of the structured reply: nothing to show
	default:
		if buf, ok := appendReplaced(append(u.buf, "data: "...), u.data, content.Index, content.Raw, text); ok {
			u.own, u.replace = append(buf, "\n\n"...), true
		}
	}
	return true
}

// appendReplaced appends data with the JSON value raw, which starts at
// offset at of data (gjson's Index), replaced by the string text, spliced
// where it lies: what sjson.SetBytes makes of data for that value's path,
// without its copies and look-ups. ok is false when raw is not at at.
func appendReplaced(buf, data []byte, at int, raw, text string) ([]byte, bool) {
	if len(raw) == 0 || at <= 0 || at+len(raw) > len(data) || string(data[at:at+len(raw)]) != raw {
		return buf, false
	}
	buf = append(buf, data[:at]...)
	buf = appendSJSONString(buf, text)
	return append(buf, data[at+len(raw):]...), true
}

// choiceZero returns choice 0 of a chunk: the element of choices whose index
// is 0, or that has no numeric index (some providers omit it or send null).
func choiceZero(s string) (choice gjson.Result, ok bool) {
	gjson.Get(s, "choices").ForEach(func(_, c gjson.Result) bool {
		if idx := c.Get("index"); idx.Type != gjson.Number || idx.Num == 0 {
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

// WriteMadeDeltas writes chunks a stream converter made (SPEC 5), each a
// chat chunk with nothing but a text delta, after the first chunk of the
// stream: count of them, content their content deltas joined. They go out
// as Write would send them, without being split and read again: what the
// chat reading would take from them (the events, the text a consumer
// waits for) is taken here. It reports false, having done nothing, when
// they must be read as any other event: a structured reply reads each
// delta, and after the end events pass as they are.
func (r *Rewriter) WriteMadeDeltas(p []byte, count int, content string) (bool, error) {
	if r.err != nil {
		return true, r.err
	}
	if r.done || r.opts.Chat.Structured != nil || !r.u.ownChunks {
		return false, nil
	}
	if r.opts.Stats != nil {
		r.opts.Stats.Events += int64(count)
	}
	if rep := r.reply; content != "" && (rep.WantContent || rep.WaitsForText()) {
		rep.SawText()
		rep.AddText(content)
	}
	r.emitCopy(p)
	_, err := r.result(0)
	return true, err
}

// The chat completion as a JSON reply (SPEC 4.2): what no JSON protocol
// claims (readJSONReply).

// readChat reads a chat completion by its index, and returns the indices
// of the choices with a meta: the choices' meta only when the index saw a
// choice's meta, then what every protocol's index reading reads.
func readChat(s string, x *jsonIndex, rep *Reply, opts *JSONOptions) (choiceMeta []int) {
	j := chatProtocol.json
	if x.Seen(j.nodes[0]) {
		if v, end, ok := x.value(s, replyPaths.TopSlot("choices")); ok {
			choiceMeta = mergeChoiceMetas(gjson.Parse(s[v:end]), &rep.Meta)
		}
	}
	j.readIndexed(s, x, rep, opts)
	return choiceMeta
}

// mergeChoiceMetas merges the meta objects of the choices into meta and
// returns the indices of the choices that have a meta, whatever its value.
func mergeChoiceMetas(choices gjson.Result, meta *Meta) (idx []int) {
	i := 0
	choices.ForEach(func(_, c gjson.Result) bool {
		if m := c.Get("meta"); m.Exists() {
			idx = append(idx, i)
			meta.mergeResult(m)
		}
		i++
		return true
	})
	return idx
}

// cutChoiceMetas plans the removal of the meta of the choices whose indices
// idx lists (ascending) from p.body, a valid JSON object: byte for byte
// what sjson.DeleteBytes(doc, "choices.<i>.meta") makes of it for each i in
// turn, in one pass over it. As in sjson, "choices" is the first member of
// that name; i is the i-th element of an array, or the first member named
// i of an object; meta is the first member of that name of the element,
// when it is an object; the member goes as cutMember says.
func (p *jsonPlan) cutChoiceMetas(idx []int) {
	s := strView(p.body)
	root := jsonscan.Space(s, 0)
	if len(idx) == 0 || root >= len(s) || s[root] != '{' {
		return
	}
	v, _, ok := jsonscan.FindMember(s, root, "choices")
	if !ok || (s[v] != '[' && s[v] != '{') {
		return
	}
	p.reserve(len(idx))
	it := jsonscan.IterAt(s, v)
	if s[v] == '[' {
		n, i := 0, 0
		for _, c, ok := it.Next(); ok && i < len(idx); _, c, ok = it.Next() {
			if n == idx[i] {
				i++
				if s[c] == '{' {
					it.SkipTo(p.cutMember(s, c, "meta"))
				}
			}
			n++
		}
		return
	}
	want := make(map[int]bool, len(idx))
	for _, i := range idx {
		want[i] = true
	}
	for k, c, ok := it.Next(); ok && len(want) > 0; k, c, ok = it.Next() {
		n, isIndex := indexKey(k)
		if !isIndex || !want[n] {
			continue
		}
		delete(want, n) // only the first member of that name
		if s[c] == '{' {
			it.SkipTo(p.cutMember(s, c, "meta"))
		}
	}
}

// indexKey reads a key as the index i whose path part strconv.Itoa(i) it
// matches (a key with escapes is decoded first, as gjson compares keys).
func indexKey(k string) (int, bool) {
	if strings.IndexByte(k, '\\') >= 0 {
		k = decodeJSONString(`"` + k + `"`)
	}
	if k == "" || len(k) > 9 || (k[0] == '0' && len(k) > 1) || !digits(k) {
		return 0, false
	}
	n, _ := strconv.Atoi(k)
	return n, true
}

// structured splits a structured chat reply (SPEC 7): its text
// (choices[0].message.content, else a top-level content) loses the
// fields that become meta.structured_metadata. The body is rebuilt, as
// sjson sets the text.
func (p *jsonPlan) structured(meta *Meta, warn func(string)) {
	s := strView(p.body)
	path := "choices.0.message.content"
	c := gjson.Get(s, path)
	if c.Type != gjson.String {
		path = "content"
		c = gjson.Get(s, path)
	}
	if c.Type != gjson.String {
		return
	}
	reply, md, split := SplitStructuredReply(c.Str)
	if !split {
		if warn != nil {
			warn(ReasonStructuredUnparsed)
		}
		return
	}
	if next, err := sjson.SetBytes(copyBytes(p.body), path, reply); err == nil {
		p.body, p.rebuilt = next, true
		meta.Set(KeyStructuredMetadata, md)
	}
}
