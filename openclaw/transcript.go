package openclaw

// Reading the transcript of a look-up (SPEC 10): the body that asks for it
// and the tool names one run left in the answer.

import (
	"errors"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

const (
	maxToolNames    = 256 // tools_used keeps at most 256 names (SPEC 8.1)
	toolWrapperName = "tool_call"
)

// HistoryRequest returns the body of the transcript look-up for a
// session: POST /tools/invoke with the sessions_history tool, tool calls
// included, the last 100 messages (SPEC 10).
func HistoryRequest(sessionKey string) []byte {
	b := make([]byte, 0, 96+len(sessionKey))
	b = append(b, `{"tool":"sessions_history","args":{"sessionKey":`...)
	b = jsonscan.AppendString(b, sessionKey)
	return append(b, `,"includeTools":true,"limit":100}}`...)
}

// Errors of TranscriptTools. They name what was wrong, never what the answer
// held.
var (
	errMalformed   = errors.New("openclaw: sessions_history answer is not a JSON object")
	errNotOK       = errors.New("openclaw: sessions_history answered ok: false")
	errStatusError = errors.New("openclaw: sessions_history answered status error")
	errNoMessages  = errors.New("openclaw: sessions_history answer has no result.details.messages")
)

// TranscriptTools calls add with the tool names that the run runID left in a
// sessions_history answer (SPEC 10), in order, each once, at most 256: of
// the messages in result.details.messages whose __openclaw.runId is runID,
// the content items of type toolCall (their name; for the tool-search
// wrapper tool_call, the real tool's name in the arguments' id) and the
// messages of role toolResult (their toolName). Messages of other runs give
// nothing. Nothing else of the transcript is read.
//
// An answer that is not whole, valid JSON, or that says it failed, adds
// nothing and returns an error. The work is linear in the answer's size:
// each message is walked once, and the names kept are bounded. The names
// passed to add are copies.
func TranscriptTools(answer string, runID string, add func(name string)) error {
	root, ok := jsonObject(answer)
	if !ok {
		return errMalformed
	}
	var top [2]gjson.Result
	lastMembers(root, answerKeys, top[:])
	okField, result := top[0], top[1]
	if okField.Type == gjson.False {
		return errNotOK
	}
	details := lastMember(result, "details")
	if lastMember(details, "status").Str == "error" {
		return errStatusError
	}
	messages := lastMember(details, "messages")
	if !messages.IsArray() {
		return errNoMessages
	}
	if runID == "" {
		return nil
	}
	names := toolNames{add: add}
	messages.ForEach(func(_, msg gjson.Result) bool {
		names.message(msg, runID)
		return !names.full()
	})
	return nil
}

// toolNames passes each name on once, up to maxToolNames.
type toolNames struct {
	seen []string
	add  func(string)
}

func (n *toolNames) full() bool { return len(n.seen) >= maxToolNames }

func (n *toolNames) put(name string) {
	if name == "" || n.full() {
		return
	}
	for _, s := range n.seen { // at most 256: a constant per name
		if s == name {
			return
		}
	}
	name = strings.Clone(name) // it views the caller's answer
	n.seen = append(n.seen, name)
	n.add(name)
}

// message reads one transcript message: its members once, then, when it
// belongs to the run, its tool calls or the tool of its result.
func (n *toolNames) message(msg gjson.Result, runID string) {
	var m [4]gjson.Result
	lastMembers(msg, messageKeys, m[:])
	role, content, toolName, tag := m[0], m[1], m[2], m[3]
	if lastMember(tag, "runId").Str != runID { // runID is not empty
		return
	}
	if role.Str == "toolResult" {
		// A wrapper's result names the wrapper; its call names the tool.
		if toolName.Str != toolWrapperName {
			n.put(toolName.Str)
		}
		return
	}
	if !content.IsArray() {
		return
	}
	content.ForEach(func(_, item gjson.Result) bool {
		n.toolCall(item)
		return !n.full()
	})
}

// toolCall reads one content item: a toolCall gives its name, or for the
// wrapper tool_call the id in its arguments (an object, or an object in a
// JSON string as OpenAI-style arguments come).
func (n *toolNames) toolCall(item gjson.Result) {
	var m [3]gjson.Result
	lastMembers(item, itemKeys, m[:])
	typ, name, args := m[0], m[1], m[2]
	if typ.Str != "toolCall" || name.Type != gjson.String {
		return
	}
	if name.Str != toolWrapperName {
		n.put(name.Str)
		return
	}
	if args.Type == gjson.String {
		// A string the answer's validity does not vouch for: checked as
		// JSON on its own before it is read.
		inner, ok := jsonObject(args.Str)
		if !ok {
			n.put(name.Str)
			return
		}
		args = inner
	}
	if real := wrappedTool(args); real != "" {
		n.put(real)
		return
	}
	// A wrapper call without a readable tool: the wrapper is what ran.
	n.put(name.Str)
}

// wrappedTool is the tool a tool_call wrapper's arguments name, read
// as OpenClaw reads them (its tool-search-request.ts): the first of id,
// toolId and name that is set, else the same inside args or input; a catalog
// id (source:sourceName:tool) names the tool after its last colon, since
// tool names have none. "" when there is none.
func wrappedTool(args gjson.Result) string {
	var m [5]gjson.Result // id, toolId, name, args, input
	lastMembers(args, wrapperKeys, m[:])
	picked := firstSet(m[:3])
	if !picked.Exists() {
		nested := m[3]
		if !nested.Exists() || nested.Type == gjson.Null {
			nested = m[4]
		}
		// One level only: OpenClaw unwraps no deeper.
		lastMembers(nested, wrapperKeys[:3], m[:3])
		picked = firstSet(m[:3])
	}
	id := jsTrim(picked.Str)
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		id = id[i+1:]
	}
	return id
}

// The members read, in the order lastMembers fills them.
var (
	answerKeys  = []string{"ok", "result"}
	messageKeys = []string{"role", "content", "toolName", "__openclaw"}
	itemKeys    = []string{"type", "name", "arguments"}
	wrapperKeys = []string{"id", "toolId", "name", "args", "input"}
)

// lastMembers sets out[i] to the value of keys[i] in object v, its last copy
// when repeated (as JSON.parse reads it), in one pass over v; a key absent
// (or v not an object) leaves out[i] empty.
func lastMembers(v gjson.Result, keys []string, out []gjson.Result) {
	clear(out)
	if !v.IsObject() {
		return
	}
	v.ForEach(func(k, val gjson.Result) bool {
		for i, key := range keys {
			if k.Str == key {
				out[i] = val
			}
		}
		return true
	})
}

// lastMember is lastMembers for one key.
func lastMember(v gjson.Result, key string) gjson.Result {
	var out [1]gjson.Result
	lastMembers(v, []string{key}, out[:])
	return out[0]
}

// firstSet is the first of vs present and not null (JavaScript's ??).
func firstSet(vs []gjson.Result) gjson.Result {
	for _, v := range vs {
		if v.Exists() && v.Type != gjson.Null {
			return v
		}
	}
	return gjson.Result{}
}

// jsonObject parses s when it is valid JSON whose value is an object.
func jsonObject(s string) (gjson.Result, bool) {
	if !jsonscan.Valid(s) {
		return gjson.Result{}, false
	}
	root := gjson.Parse(s)
	return root, root.IsObject()
}
