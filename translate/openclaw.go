package translate

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// OpenClaw (SPEC 10) runs its agent's tools itself and reports none of them
// on its chat endpoints; its session transcript does, tagged with the run's
// id. This file holds the pure parts of reading it: which session a request
// belongs to, the body of the transcript look-up, and the tool names of one
// run in the answer. The module does the HTTP.

// Request headers OpenClaw reads (SPEC 10).
const (
	OpenClawSessionHeader   = "x-openclaw-session-key"
	OpenClawAgentHeader     = "x-openclaw-agent-id"
	OpenClawAgentHeaderAlt  = "x-openclaw-agent"
	DefaultOpenClawAgent    = "main"
	maxOpenClawToolNames    = 256 // tools_used keeps at most 256 names (SPEC 8.1)
	openClawToolWrapperName = "tool_call"
)

// OpenClawRequest is what decides the session of one request to OpenClaw.
type OpenClawRequest struct {
	SessionHeader string // the x-openclaw-session-key header
	AgentHeader   string // x-openclaw-agent-id, else x-openclaw-agent
	Model         string // the body's model
	User          string // the body's user
	Responses     bool   // a Responses API request (/v1/responses)
	Agent         string // the configured agent; "" is main
}

// OpenClawSessionKey returns the session key OpenClaw files the request's
// turn under (SPEC 10): the session header when set; else one derived from
// the user and the agent, as OpenClaw's http-utils.ts derives it
// (agent:<agent>:openai-user:<user>, lower-cased); else a key of the module's
// own, agent:<agent>:llm-meta:<random>. made reports the last case: that key
// must then be sent upstream in x-openclaw-session-key, since OpenClaw would
// otherwise make a fresh one nobody can name.
func OpenClawSessionKey(req OpenClawRequest) (key string, made bool) {
	if k := jsTrim(req.SessionHeader); k != "" {
		return k, false
	}
	agent := openClawAgent(req)
	if user := jsTrim(req.User); user != "" {
		infix := ":openai-user:"
		if req.Responses {
			infix = ":openresponses-user:"
		}
		// OpenClaw lower-cases the part after the agent (normalizeMainKey).
		return "agent:" + agent + strings.ToLower(infix+user), false
	}
	return newOpenClawSessionKey(agent), true
}

// openClawAgent is the agent a request goes to, normalised as OpenClaw
// normalises agent ids: the agent header, else a model naming one
// (openclaw:<id>, openclaw/<id> or agent:<id>), else the configured one.
func openClawAgent(req OpenClawRequest) string {
	if a := jsTrim(req.AgentHeader); a != "" {
		return NormalizeOpenClawAgent(a)
	}
	if id := openClawModelAgent(jsTrim(req.Model)); id != "" {
		return NormalizeOpenClawAgent(id)
	}
	return NormalizeOpenClawAgent(req.Agent)
}

// openClawModelAgent is the agent id a model names, "" for none (openclaw
// and openclaw/default mean the default agent).
func openClawModelAgent(model string) string {
	lower := strings.ToLower(model)
	for _, prefix := range []string{"openclaw:", "openclaw/", "agent:"} {
		if strings.HasPrefix(lower, prefix) {
			id := model[len(prefix):]
			if validOpenClawAgent(id) && !(prefix == "openclaw/" && strings.EqualFold(id, "default")) {
				return id
			}
			return ""
		}
	}
	return ""
}

// NormalizeOpenClawAgent is OpenClaw's normalizeAgentId: a valid id
// ([a-z0-9][a-z0-9_-]{0,63}, any case) lower-cased; anything else
// lower-cased with each run of other characters made one '-', dashes at
// either end dropped, cut to 64 bytes; "" (and what normalises to "") is
// main.
func NormalizeOpenClawAgent(id string) string {
	id = strings.ToLower(jsTrim(id))
	if validOpenClawAgent(id) {
		return id
	}
	var b strings.Builder
	dash := false
	for i := 0; i < len(id); i++ {
		if c := id[i]; c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 64 {
		out = out[:64]
	}
	if out == "" {
		return DefaultOpenClawAgent
	}
	return out
}

// validOpenClawAgent matches OpenClaw's /^[a-z0-9][a-z0-9_-]{0,63}$/i.
func validOpenClawAgent(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i] | 0x20 // ASCII lower case; digits, '_' and '-' keep their class
		alnum := c >= 'a' && c <= 'z' || id[i] >= '0' && id[i] <= '9'
		if !alnum && (i == 0 || id[i] != '_' && id[i] != '-') {
			return false
		}
	}
	return true
}

// jsTrim trims as JavaScript's String.prototype.trim: Unicode white space
// and the byte-order mark.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
}

// newOpenClawSessionKey returns a fresh session key of the module's own for
// agent: agent:<agent>:llm-meta:<32 hex digits>.
func newOpenClawSessionKey(agent string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "agent:" + agent + ":llm-meta:" + hex.EncodeToString(b[:])
}

// OpenClawRequestFields reads what OpenClawSessionKey needs from a request
// body: its top-level model and user (strings; the last copy of a repeated
// key, as JSON.parse reads it) and whether it is a Responses API request
// (an input and no messages). A body that is not a JSON object gives
// nothing.
func OpenClawRequestFields(body []byte) (model, user string, responses bool) {
	root, ok := jsonObject(strView(body))
	if !ok {
		return "", "", false
	}
	var hasInput, hasMessages bool
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			model = v.Str // "" unless a string
		case "user":
			user = v.Str
		case "input":
			hasInput = true
		case "messages":
			hasMessages = true
		}
		return true
	})
	// body is the caller's buffer: what is kept is copied.
	return strings.Clone(model), strings.Clone(user), hasInput && !hasMessages
}

// OpenClawHistoryRequest returns the body of the transcript look-up for a
// session: POST /tools/invoke with the sessions_history tool, tool calls
// included, the last 100 messages (SPEC 10).
func OpenClawHistoryRequest(sessionKey string) []byte {
	b := make([]byte, 0, 96+len(sessionKey))
	b = append(b, `{"tool":"sessions_history","args":{"sessionKey":`...)
	b = jsonscan.AppendString(b, sessionKey)
	return append(b, `,"includeTools":true,"limit":100}}`...)
}

// Errors of OpenClawTools. They name what was wrong, never what the answer
// held.
var (
	ErrOpenClawMalformed   = errors.New("openclaw: sessions_history answer is not a JSON object")
	ErrOpenClawNotOK       = errors.New("openclaw: sessions_history answered ok: false")
	ErrOpenClawStatusError = errors.New("openclaw: sessions_history answered status error")
	ErrOpenClawNoMessages  = errors.New("openclaw: sessions_history answer has no result.details.messages")
)

// OpenClawTools calls add with the tool names that the run runID left in a
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
func OpenClawTools(answer []byte, runID string, add func(name string)) error {
	root, ok := jsonObject(strView(answer))
	if !ok {
		return ErrOpenClawMalformed
	}
	var top [2]gjson.Result
	lastMembers(root, answerKeys, top[:])
	okField, result := top[0], top[1]
	if okField.Type == gjson.False {
		return ErrOpenClawNotOK
	}
	details := lastMember(result, "details")
	if lastMember(details, "status").Str == "error" {
		return ErrOpenClawStatusError
	}
	messages := lastMember(details, "messages")
	if !messages.IsArray() {
		return ErrOpenClawNoMessages
	}
	if runID == "" {
		return nil
	}
	names := openClawNames{add: add}
	messages.ForEach(func(_, msg gjson.Result) bool {
		names.message(msg, runID)
		return !names.full()
	})
	return nil
}

// openClawNames passes each name on once, up to maxOpenClawToolNames.
type openClawNames struct {
	seen []string
	add  func(string)
}

func (n *openClawNames) full() bool { return len(n.seen) >= maxOpenClawToolNames }

func (n *openClawNames) put(name string) {
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
func (n *openClawNames) message(msg gjson.Result, runID string) {
	var m [4]gjson.Result
	lastMembers(msg, messageKeys, m[:])
	role, content, toolName, tag := m[0], m[1], m[2], m[3]
	if lastMember(tag, "runId").Str != runID { // runID is not empty
		return
	}
	if role.Str == "toolResult" {
		// A wrapper's result names the wrapper; its call names the tool.
		if toolName.Str != openClawToolWrapperName {
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
func (n *openClawNames) toolCall(item gjson.Result) {
	var m [3]gjson.Result
	lastMembers(item, itemKeys, m[:])
	typ, name, args := m[0], m[1], m[2]
	if typ.Str != "toolCall" || name.Type != gjson.String {
		return
	}
	if name.Str != openClawToolWrapperName {
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
	if real := openClawWrappedTool(args); real != "" {
		n.put(real)
		return
	}
	// A wrapper call without a readable tool: the wrapper is what ran.
	n.put(name.Str)
}

// openClawWrappedTool is the tool a tool_call wrapper's arguments name, read
// as OpenClaw reads them (its tool-search-request.ts): the first of id,
// toolId and name that is set, else the same inside args or input; a catalog
// id (source:sourceName:tool) names the tool after its last colon, since
// tool names have none. "" when there is none.
func openClawWrappedTool(args gjson.Result) string {
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
