package translate

import (
	"cmp"
	"strconv"

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
		set("user", cmp.Or(root.Get("session_id").Str, defaultUser)) // Str is "" for what is no string
	}
	if root.Get("model").Type == gjson.Null && defaultModel != "" { // missing or null
		set("model", defaultModel)
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

// WithImage makes the last user message of a chat body multimodal (SPEC
// 6.2, the edge function's image_data_url): its text and the image. A
// message already in parts keeps them, and the image is added after them.
// body is returned as it is when it has no user message.
//
// The messages are read once, in order, keeping only the last user
// message seen: a body of a million messages costs no list of them
// (gjson's Array would take some 80 bytes per message, many times what
// the smallest message takes on the wire).
func WithImage(body []byte, url string) []byte {
	last := -1
	var content gjson.Result
	i := 0
	gjson.Get(strView(body), "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").Str == "user" {
			last, content = i, m.Get("content")
		}
		i++
		return true
	})
	if last < 0 {
		return body
	}
	image := map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}}
	path := "messages." + strconv.Itoa(last) + ".content"
	// Text or any other value becomes a text part (gjson's Str is "" for
	// what is not a string); parts gain the image at their end.
	var v any = []any{map[string]any{"type": "text", "text": content.Str}, image}
	if content.IsArray() {
		path, v = path+".-1", image
	}
	if next, err := sjson.SetBytes(body, path, v); err == nil {
		return next
	}
	return body
}
