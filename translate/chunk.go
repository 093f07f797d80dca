package translate

import (
	"cmp"
	"strconv"
	"strings"
	"time"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// ChunkHead is what every chat.completion.chunk of one stream repeats: id,
// created and model, kept as JSON text so that an upstream's values are
// repeated exactly as they came.
type ChunkHead struct {
	id, created, model []byte
}

// NewChunkHead builds a head from plain values. An empty id gets a fresh
// chatcmpl id, created 0 is now, an empty model is "unknown".
func NewChunkHead(id string, created int64, model string) ChunkHead {
	if id == "" {
		id = NewChatID()
	}
	if created == 0 {
		created = time.Now().Unix()
	}
	return ChunkHead{
		id:      jsonscan.AppendString(nil, id),
		created: strconv.AppendInt(nil, created, 10),
		model:   jsonscan.AppendString(nil, cmp.Or(model, "unknown")),
	}
}

// chunkHeadFrom takes id, created and model from an upstream chunk's JSON,
// falling back to def for each one missing, and for all of them when the
// chunk is not valid JSON (one cut short: gjson reads {"created"00 as a
// number, which the module's own event would repeat).
func chunkHeadFrom(data []byte, def func() ChunkHead) ChunkHead {
	if !jsonscan.Valid(strView(data)) {
		return def()
	}
	res := gjson.GetManyBytes(data, "id", "created", "model")
	id, created, model := res[0].Type == gjson.String, res[1].Type == gjson.Number, res[2].Type == gjson.String
	var h ChunkHead
	if !id || !created || !model {
		h = def() // for what is missing
	}
	// The id and model are repeated as the upstream wrote them, in valid
	// UTF-8 (SPEC 8.1): the event is the module's own.
	if id {
		h.id = []byte(strings.ToValidUTF8(res[0].Raw, "\uFFFD"))
	}
	if created {
		h.created = []byte(res[1].Raw)
	}
	if model {
		h.model = []byte(strings.ToValidUTF8(res[2].Raw, "\uFFFD"))
	}
	return h
}

func (h ChunkHead) appendStart(dst []byte) []byte {
	dst = append(append(dst, `data: {"id":`...), h.id...)
	dst = append(append(dst, `,"object":"chat.completion.chunk","created":`...), h.created...)
	return append(append(dst, `,"model":`...), h.model...)
}

// AppendDelta appends one SSE event holding a chunk whose choice 0 has a
// delta with field (content, reasoning_content: a key that needs no
// escape) set to text, and, when role is true, "role":"assistant" first.
func (h ChunkHead) AppendDelta(dst []byte, field, text string, role bool) []byte {
	dst = h.appendDeltaHead(dst, field, role)
	dst = jsonscan.AppendString(dst, text)
	return append(dst, deltaTail...)
}

// appendDeltaHead appends AppendDelta's event up to its text: the part
// that every delta of a stream repeats, which a converter keeps.
func (h ChunkHead) appendDeltaHead(dst []byte, field string, role bool) []byte {
	dst = h.appendStart(dst)
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	if role {
		dst = append(dst, `"role":"assistant",`...)
	}
	dst = append(dst, '"')
	dst = append(dst, field...)
	return append(dst, '"', ':')
}

// deltaHeadLen is the length of appendDeltaHead's text for field, without
// the role: a converter's copy is made at that size.
func (h ChunkHead) deltaHeadLen(field string) int {
	return len(h.id) + len(h.created) + len(h.model) + len(field) +
		len(`data: {"id":,"object":"chat.completion.chunk","created":,"model":,"choices":[{"index":0,"delta":{"":`)
}

// deltaTail ends a delta's event, after its text.
const deltaTail = "},\"finish_reason\":null}]}\n\n"

// AppendFinish appends the last chunk of a stream: an empty delta (with the
// role when no chunk came before), finish_reason, and usage when given
// (usage is a JSON object or nil).
func (h ChunkHead) AppendFinish(dst []byte, finishReason string, role bool, usage []byte) []byte {
	dst = h.appendStart(dst)
	dst = append(dst, `,"choices":[{"index":0,"delta":{`...)
	if role {
		dst = append(dst, `"role":"assistant"`...)
	}
	dst = append(dst, `},"finish_reason":`...)
	dst = jsonscan.AppendString(dst, finishReason)
	dst = append(dst, "}]"...)
	if usage != nil {
		dst = append(dst, `,"usage":`...)
		dst = append(dst, usage...)
	}
	return append(dst, "}\n\n"...)
}

// metaEventLen is the length of the final meta event of meta (metaLen
// bytes), in either form, or a little more: its buffer is sized once.
func (h ChunkHead) metaEventLen(metaLen int) int {
	return metaLen + len(h.id) + len(h.created) + len(h.model) +
		len(`data: {"id":,"object":"chat.completion.chunk","created":,"model":,"choices":[],"meta":}`) + len("\n\n")
}

// AppendMeta appends the final meta event as a valid chunk with no choices
// (SPEC 4.3, meta_event chunk).
func (h ChunkHead) AppendMeta(dst, meta []byte) []byte {
	dst = h.appendStart(dst)
	dst = append(dst, `,"choices":[]`...)
	return appendMetaEnd(dst, meta)
}

// AppendBareMeta appends the final meta event in the gateway contract's
// literal form, data: {"meta":{...}} (SPEC 4.3, meta_event bare).
func AppendBareMeta(dst, meta []byte) []byte {
	dst = append(dst, `data: {"meta":`...)
	dst = append(dst, meta...)
	return append(dst, "}\n\n"...)
}

// AppendErrorEvent appends the error event of SPEC 5.1.
func AppendErrorEvent(dst []byte, message string) []byte {
	dst = append(dst, `data: {"error":{"message":`...)
	dst = jsonscan.AppendString(dst, message)
	return append(dst, ",\"type\":\"upstream_error\"}}\n\n"...)
}

// DoneEvent is the OpenAI stream terminator.
var DoneEvent = []byte("data: [DONE]\n\n")
