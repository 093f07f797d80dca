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
	// protocol claims is (RequestKindOf, DetectStart, readJSONReply).
	events: newChatDialect,
	keys:   []string{"tool_calls", "name", "usage", "finish_reason"},
	usage:  &chatUsage,
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

// The keys the chat dialect asks the key scan for, in chatProtocol.keys'
// order.
const (
	hasToolCall = keyProtocol << iota // "tool_calls"
	hasName                           // "name"
	hasUsage                          // "usage"
	hasFinish                         // "finish_reason"
)

// chatDialect reads OpenAI chat-completion chunks (SPEC 4.3): tool names
// from the deltas, usage, choice 0's text, the structured reply (SPEC 7),
// and ends with one final meta event before [DONE]. It is one pointer,
// held in the eventDialect as it is: no allocation of its own.
type chatDialect struct {
	w *SSERewriter
}

// newChatDialect reads a stream as chat chunks: it opens (SPEC 11.1) at
// its first chat chunk, not at its first JSON event (opens).
func newChatDialect(w *SSERewriter) eventDialect {
	w.opensAtFirst = false
	return chatDialect{w}
}

// eventProtocolOf is the protocol whose events a stream of format f is
// read as: chat's, unless f is a protocol with events of its own.
func eventProtocolOf(f Format) *protocol {
	if p := protocolOf(f); p != nil && p.events != nil {
		return p
	}
	return &chatProtocol
}

func (c chatDialect) doneEvent() verdict { return vTerminal }

// head is the id, created and model the final chunks repeat: the last
// chunk's (the key scan holds it: object hands it every chunk), else fresh
// ones.
func (c chatDialect) head() ChunkHead {
	return chunkHeadFrom(c.w.keys.Held(), func() ChunkHead { return NewChunkHead("", 0, c.w.opts.Model) })
}

// end writes the one final meta event, when there is something to say and
// final_meta is on (with the structured metadata when the reply was
// structured), then the upstream's [DONE] when it came.
func (c chatDialect) end(term []byte) {
	r := c.w
	defer r.emitEvent(term)
	if r.opts.Structured != nil {
		if md, ok := r.opts.Structured.Metadata(); ok {
			r.reply.setAfterSeal(KeyStructuredMetadata, md)
		} else if r.opts.Structured.Structured() && r.opts.Warn != nil {
			r.opts.Warn(ReasonStructuredUnparsed)
		}
	}
	if !r.opts.FinalMeta || r.reply.Meta.Empty() {
		return
	}
	if r.opts.Stats != nil {
		r.opts.Stats.FinalMeta++
	}
	meta := r.reply.Meta.JSON()
	head := c.head()
	// Sized once: appended piece by piece from an empty buffer, the event
	// was reallocated at each doubling.
	buf := slices.Grow(r.ownBuf(), head.metaEventLen(len(meta)))
	if r.opts.BareMeta {
		buf = AppendBareMeta(buf, meta)
	} else {
		buf = head.AppendMeta(buf, meta)
	}
	r.emitOwn(buf)
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

// object reads one chunk (or an error event) of a chat stream.
func (c chatDialect) object(raw, data []byte, s string, keys keySet) verdict {
	r := c.w
	rep := r.reply
	if keys&hasName != 0 {
		deltaToolNames(s, keys, rep.Meta.AddTool)
	}
	if rep.ToolArguments && keys&hasToolCall != 0 {
		readDeltaCalls(s, rep)
	}
	// SPEC 11.1, until the stream's end: its first chat chunk opens it, and
	// a chunk with a finish_reason (only looked for where the key scan saw
	// the key) ends it. A chunk cut short inside is no chunk.
	if !r.endSeen && (r.opened || c.opens(s)) && keys&hasFinish != 0 {
		r.endSeen = finishReasonFrom(data, r.keys.First()) && jsonscan.Valid(s)
	}
	// Any error event of SPEC 4.3 is one, choices beside it or not:
	// OpenRouter ends a failed generation with a chunk that has both
	// (finish_reason "error"), vLLM with {"object":"error",...}.
	if keys&keyError != 0 {
		if msg, isErr := errorEvent(s); isErr {
			rep.SetError(msg)
			r.emitRaw(raw)
			if r.opts.ErrorsAsContent {
				msg, _ := rep.Err()
				r.emitOwn(c.head().AppendDelta(r.ownBuf(), "content", "Error: "+msg, false))
			}
			return vOwn
		}
	}
	// The id and model, only for who reads them (as for JSON replies): the
	// end hook (OpenClaw's run id) and the prices table. The first chunk
	// that names them: Azure's first chunk (its prompt filter results)
	// has "id":"" and "model":"".
	if r.opts.BeforeEnd != nil && rep.ID == "" {
		rep.setID(gjson.Get(s, "id").Str)
	}
	if rep.Model == "" && !r.ownChunks {
		rep.setModel(gjson.Get(s, "model").Str)
	}
	// Held by the key scan, which skips in the next chunk what repeats it,
	// and is the last chunk's data.
	r.keys.Hold(data)
	if keys&hasUsage != 0 {
		if u := gjson.Get(s, "usage"); u.IsObject() {
			rep.chatUsage = true
			rep.readUsage(u, &chatUsage)
			if r.opts.WithholdUsage && noChoices(s) {
				return vWithhold // the usage chunk the client did not ask for
			}
		} else if u := gjson.Get(s, "x_groq.usage"); !rep.chatUsage && u.IsObject() {
			// Groq's place for a stream's usage: its last chunk's x_groq.
			rep.readUsage(u, &chatUsage)
		}
	}
	if r.opts.Structured != nil {
		if c.structuredEvent(raw, data) {
			return vOwn
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
	return vForward
}

// opens reports whether a chunk opens the stream (SPEC 11.1): it is a chat
// chunk, an object with a choices array, which makes the stream one that
// can be cut short.
func (c chatDialect) opens(s string) bool {
	c.w.opened = gjson.Get(s, "choices").IsArray() && jsonscan.Valid(s)
	return c.w.opened
}

// appendInterrupted is the chat stream's error event for a stream cut
// short (SPEC 11.1; chat SSE, both conversions, the edge stream): its meta
// went in the final meta event before it.
func (c chatDialect) appendInterrupted(dst, _ []byte) []byte {
	return append(dst, `data: {"error":{"message":"`+InterruptedMessage+`","type":"upstream_interrupted","code":null}}`+"\n\n"...)
}

// noChoices reports whether a chunk's choices is an empty array.
func noChoices(s string) bool {
	ch := gjson.Get(s, "choices")
	return ch.IsArray() && len(ch.Raw) > 0 && !ch.Get("0").Exists()
}

// structuredEvent runs the content delta of choice 0 through the structured
// reply decoder. It reports whether it wrote (or dropped) the event itself.
func (c chatDialect) structuredEvent(raw, data []byte) bool {
	r := c.w
	s := strView(data)
	choice, ok := choiceZero(s)
	if !ok {
		return false
	}
	content := choice.Get("delta.content")
	if content.Type != gjson.String {
		return false
	}
	text := r.opts.Structured.Feed(content.Str)
	if text != "" {
		r.reply.SawText()
	}
	r.reply.AddText(text)
	if text == content.Str {
		r.emitRaw(raw)
		return true
	}
	if text == "" && !carriesMore(s, choice) {
		return true // only raw JSON of the structured reply: nothing to show
	}
	buf, ok := appendReplaced(append(r.ownBuf(), "data: "...), data, content.Index, content.Raw, text)
	if !ok {
		r.emitRaw(raw)
		return true
	}
	r.emitOwn(append(buf, "\n\n"...))
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
// chat dialect would take from them (the events, the text a consumer
// waits for) is taken here. It reports false, having done nothing, when
// they must be read as any other event: a structured reply reads each
// delta, and after the end events pass as they are.
func (r *SSERewriter) WriteMadeDeltas(p []byte, count int, content string) (bool, error) {
	if r.err != nil {
		return true, r.err
	}
	if _, chat := r.dialect.(chatDialect); r.done || r.opts.Structured != nil || !chat {
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
	if r.err == nil && r.reply.TooLarge() {
		r.err = ErrContentTooLarge
	}
	return true, r.err
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
