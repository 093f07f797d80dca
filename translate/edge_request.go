package translate

import (
	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// The JARVIS endpoints' request (SPEC 6.2): the edge function's body made
// into a chat-completion request for the upstream.

// Keys of the edge function's body that are not sent upstream (SPEC 6.2).
var jarvisKeys = []string{"message", "session_id", "task", "model_hint", "image_data_url"}

// The messages of SPEC 6.4 for a refused endpoint body, and the user sent
// when the body names no session.
const (
	msgInvalidJSON = "Invalid JSON body"
	msgNoMessage   = "Body must include 'message' (string) or 'messages' (array)."
	defaultUser    = "jarvis-edge"
)

// EdgeRequest builds the upstream chat body from the edge function's body.
// errMsg is set when the body is refused.
func EdgeRequest(body []byte, defaultModel string, edge, xStream bool) (out []byte, runOnce bool, errMsg string) {
	if _, ok := jsonObject(strView(body)); !ok {
		return nil, false, msgInvalidJSON
	}
	s := string(KeepLastCopies(body, edgeReadKeys)) // as JSON.parse reads repeated keys
	root := gjson.Parse(s)
	msg := root.Get("message")
	msgs := root.Get("messages")
	hasMsgs := msgs.IsArray() && msgs.Get("0").Exists() // non-empty, without a list of them all
	if msg.Type != gjson.String && !hasMsgs {
		return nil, false, msgNoMessage
	}
	runOnce = root.Get("run_once").Type == gjson.True || root.Get("return_final_only").Type == gjson.True

	out = []byte(s)
	set := func(path string, v any) {
		if next, err := sjson.SetBytes(out, path, v); err == nil {
			out = next
		}
	}
	if !hasMsgs {
		msgs := append(append([]byte(`[{"role":"user","content":`), jsonscan.AppendString(nil, msg.Str)...), "}]"...)
		if next, err := sjson.SetRawBytes(out, "messages", msgs); err == nil {
			out = next
		}
	}
	if !root.Get("user").Exists() {
		user := defaultUser
		if sid := root.Get("session_id"); sid.Type == gjson.String && sid.Str != "" {
			user = sid.Str
		}
		set("user", user)
	}
	if m := root.Get("model"); !m.Exists() || m.Type == gjson.Null {
		if defaultModel != "" {
			set("model", defaultModel)
		}
	}
	if edge {
		// The edge endpoint streams exactly when x-stream: true asks for it;
		// the run-once endpoint keeps the body's own stream value.
		set("stream", xStream && !runOnce)
	}
	if img := root.Get("image_data_url"); img.Type == gjson.String {
		out = WithImage(out, img.Str)
	}
	out = RemoveKeys(out, jarvisKeys) // one pass for all of them
	return out, runOnce, ""
}

// edgeReadKeys are the keys of the edge function's body that the module reads
// or writes; of each given more than once only the last copy is kept (the
// look-ups and deletions above would otherwise use the first copy and leave
// the others in what goes upstream).
var edgeReadKeys = append([]string{"messages", "user", "model", "stream", "run_once", "return_final_only"}, jarvisKeys...)
