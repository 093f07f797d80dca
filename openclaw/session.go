package openclaw

// Which session of OpenClaw a request's turn is filed under (SPEC 10), so
// that the look-up asks for the right transcript.

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"

	"github.com/tidwall/gjson"
)

// Request headers OpenClaw reads (SPEC 10).
const (
	sessionHeader  = "x-openclaw-session-key"
	agentIDHeader  = "x-openclaw-agent-id"
	agentHeaderAlt = "x-openclaw-agent"
	defaultAgent   = "main"
)

// sessionRequest is what decides the session of one request to OpenClaw.
type sessionRequest struct {
	SessionHeader string // the x-openclaw-session-key header
	AgentHeader   string // x-openclaw-agent-id, else x-openclaw-agent
	Model         string // the body's model
	User          string // the body's user
	Responses     bool   // a Responses API request (/v1/responses)
	Agent         string // the configured agent; "" is main
}

// sessionKeyOf returns the session key OpenClaw files the request's
// turn under (SPEC 10): the session header when set; else one derived from
// the user and the agent, as OpenClaw's http-utils.ts derives it
// (agent:<agent>:openai-user:<user>, lower-cased); else a key of the module's
// own, agent:<agent>:llm-meta:<random>. made reports the last case: that key
// must then be sent upstream in x-openclaw-session-key, since OpenClaw would
// otherwise make a fresh one nobody can name.
func sessionKeyOf(req sessionRequest) (key string, made bool) {
	if k := jsTrim(req.SessionHeader); k != "" {
		return k, false
	}
	agent := agentOf(req)
	if user := jsTrim(req.User); user != "" {
		infix := ":openai-user:"
		if req.Responses {
			infix = ":openresponses-user:"
		}
		// OpenClaw lower-cases the part after the agent (normalizeMainKey).
		return "agent:" + agent + strings.ToLower(infix+user), false
	}
	return newSessionKey(agent), true
}

// agentOf is the agent a request goes to, normalised as OpenClaw
// normalises agent ids: the agent header, else a model naming one
// (openclaw:<id>, openclaw/<id> or agent:<id>), else the configured one.
func agentOf(req sessionRequest) string {
	if a := jsTrim(req.AgentHeader); a != "" {
		return normalizeAgent(a)
	}
	if id := modelAgent(jsTrim(req.Model)); id != "" {
		return normalizeAgent(id)
	}
	return normalizeAgent(req.Agent)
}

// modelAgent is the agent id a model names, "" for none (openclaw
// and openclaw/default mean the default agent).
func modelAgent(model string) string {
	lower := strings.ToLower(model)
	for _, prefix := range []string{"openclaw:", "openclaw/", "agent:"} {
		if strings.HasPrefix(lower, prefix) {
			id := model[len(prefix):]
			if validAgent(id) && !(prefix == "openclaw/" && strings.EqualFold(id, "default")) {
				return id
			}
			return ""
		}
	}
	return ""
}

// normalizeAgent is OpenClaw's normalizeAgentId: a valid id
// ([a-z0-9][a-z0-9_-]{0,63}, any case) lower-cased; anything else
// lower-cased with each run of other characters made one '-', dashes at
// either end dropped, cut to 64 bytes; "" (and what normalises to "") is
// main.
func normalizeAgent(id string) string {
	id = strings.ToLower(jsTrim(id))
	if validAgent(id) {
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
		return defaultAgent
	}
	return out
}

// validAgent matches OpenClaw's /^[a-z0-9][a-z0-9_-]{0,63}$/i.
func validAgent(id string) bool {
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

// newSessionKey returns a fresh session key of the module's own for
// agent: agent:<agent>:llm-meta:<32 hex digits>.
func newSessionKey(agent string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "agent:" + agent + ":llm-meta:" + hex.EncodeToString(b[:])
}

// requestFields reads what sessionKeyOf needs from a request
// body: its top-level model and user (strings; the last copy of a repeated
// key, as JSON.parse reads it) and whether it is a Responses API request
// (an input and no messages). A body that is not a JSON object gives
// nothing.
func requestFields(body []byte) (model, user string, responses bool) {
	root, ok := jsonObject(string(body))
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
	return model, user, hasInput && !hasMessages
}
