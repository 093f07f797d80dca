package httpmeta

import (
	"net/http"
	"strconv"

	"github.com/llm-meta/llm_meta/translate"
)

const (
	msgNoReply    = "Upstream sent no reply"
	msgNoTerminal = "Upstream stream ended before its terminal event"
	// msgInterrupted: a stream that ended before its protocol's end
	// without a terminal event to name (SPEC 11.1).
	msgInterrupted = "Upstream stream ended before the reply was complete"
)

// prepareEndpoint turns a request to the run-once or edge endpoint into a
// chat request for chat_path (SPEC 6.2, 6.3). done is true when it answered
// the client itself (a bad body: 400, the upstream is never called).
func (h *Handler) prepareEndpoint(w http.ResponseWriter, r *http.Request, x *exchange, edge bool) (done bool) {
	x.endpoint = true
	body, whole := h.readBody(r, &x.last.body)
	if !whole {
		writeError(w, http.StatusRequestEntityTooLarge, "Request body larger than max_request_bytes ("+strconv.FormatInt(h.MaxRequestBytes, 10)+" bytes)")
		return true
	}
	xStream := edge && r.Header.Get("x-stream") == "true"
	up, runOnceFlag, err := translate.EdgeRequest(body, h.DefaultModel, edge, xStream)
	if err != "" {
		writeError(w, http.StatusBadRequest, err)
		return true
	}
	res, _ := translate.RewriteRequest(up, h.Request)
	x.model = res.Model
	x.wantSplit = res.Structured
	x.withholdUsage = res.WithholdUsage
	x.meta.Merge(&res.Meta)
	stream := xStream && !runOnceFlag
	x.runOnce = !stream
	x.edgeStream = stream
	setBody(r, res.Body, &x.last.body)
	r.Header.Set("Content-Type", "application/json")
	r.URL.Path = h.ChatPath
	r.URL.RawPath = ""
	if h.OpenClaw != nil {
		x.openClawKey = h.OpenClaw.PrepareSession(r, res.Body)
	}
	return false
}

// writeError answers an error the module makes, in the edge function's shape.
func writeError(w http.ResponseWriter, status int, msg string) {
	body := translate.ErrorJSON(msg)
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
