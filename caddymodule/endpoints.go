package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/llm-meta/llm_meta/translate"
)

// Keys of the edge function's body that are not sent upstream (SPEC 6.2).
var jarvisKeys = []string{"message", "session_id", "task", "model_hint", "image_data_url"}

const (
	msgInvalidJSON = "Invalid JSON body"
	msgNoMessage   = "Body must include 'message' (string) or 'messages' (array)."
	defaultUser    = "jarvis-edge"
)

// prepareEndpoint turns a request to the run-once or edge endpoint into a
// chat request for chat_path (SPEC 6.2, 6.3). done is true when it answered
// the client itself (a bad body: 400, the upstream is never called).
func (h *Handler) prepareEndpoint(w http.ResponseWriter, r *http.Request, x *exchange, edge bool) (done bool) {
	x.endpoint = true
	body, whole := h.readBody(r, &x.body)
	if !whole {
		writeError(w, http.StatusRequestEntityTooLarge, "Request body larger than max_request_bytes ("+strconv.FormatInt(h.MaxRequestBytes, 10)+" bytes)")
		return true
	}
	xStream := edge && r.Header.Get("x-stream") == "true"
	up, runOnceFlag, err := edgeRequest(body, h.DefaultModel, edge, xStream)
	if err != "" {
		writeError(w, http.StatusBadRequest, err)
		return true
	}
	res, _ := translate.RewriteRequest(up, h.reqOpts)
	x.model = res.Model
	x.wantSplit = res.Structured
	x.meta.Merge(&res.Meta)
	stream := xStream && !runOnceFlag
	x.runOnce = !stream
	x.edgeStream = stream
	setBody(r, res.Body, &x.body)
	r.Header.Set("Content-Type", "application/json")
	r.URL.Path = h.ChatPath
	r.URL.RawPath = ""
	return false
}

// edgeRequest builds the upstream chat body from the edge function's body.
// errMsg is set when the body is refused.
func edgeRequest(body []byte, defaultModel string, edge, xStream bool) (out []byte, runOnce bool, errMsg string) {
	s := string(body)
	if !translate.ValidJSON(s) || !gjson.Parse(s).IsObject() {
		return nil, false, msgInvalidJSON
	}
	s = string(translate.KeepLastCopies([]byte(s), edgeReadKeys)) // as JSON.parse reads repeated keys
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
	setRaw := func(path string, raw []byte) {
		if next, err := sjson.SetRawBytes(out, path, raw); err == nil {
			out = next
		}
	}
	if !hasMsgs {
		setRaw("messages", append(append([]byte(`[{"role":"user","content":`), translate.JSONString(msg.Str)...), "}]"...))
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
		out = translate.WithImage(out, img.Str)
	}
	out = translate.RemoveKeys(out, jarvisKeys) // one pass for all of them
	return out, runOnce, ""
}

// edgeReadKeys are the keys of the edge function's body that the module reads
// or writes; of each given more than once only the last copy is kept (the
// look-ups and deletions below would otherwise use the first copy and leave
// the others in what goes upstream).
var edgeReadKeys = append([]string{"messages", "user", "model", "stream", "run_once", "return_final_only"}, jarvisKeys...)

// writeError answers an error the module makes, in the edge function's shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	body := translate.ErrorJSON(msg)
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
