package translate

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// ErrContentTooLarge is returned when a reply's collected text grows past
// its limit (run-once: max_buffer_bytes).
var ErrContentTooLarge = errors.New("reply text larger than max_buffer_bytes")

// NoResponse is the content of a run-once reply in which no text was found.
const NoResponse = "No response from gateway."

// Reply is the record of one upstream reply, whatever protocol it came in:
// what every consumer (forwarding, run-once, the edge stream, structured
// output, the OpenClaw look-up) needs. A protocol reads its wire format into
// it; consumers read only it. Its parts say who writes what: the caller sets
// Asked before the reply is read, the reading writes Told, and the scratch
// is the record's own memory, so that a record used again (httpmeta keeps
// one per exchange, pooled) reads the usual reply without allocating.
//
// The zero value is ready to use. Nothing in it refers to the reader's
// buffers: every string is copied.
type Reply struct {
	Asked
	Told
	scratch
}

// Asked is what the request and the configuration ask of a reply's record,
// set before the reply is read.
type Asked struct {
	// ToolArguments asks for each tool call's arguments in
	// meta.tool_calls (tool_arguments, SPEC 11.3).
	ToolArguments bool
	// Prices is the prices table (SPEC 9.2), and RequestModel the model of
	// the request: the reply's cost comes from them when the upstream
	// reported none.
	Prices       []Price
	RequestModel string
	// Timing adds meta.timing (SPEC 9.3), measured from Start.
	Timing bool
	Start  time.Time
	// WantContent asks for the reply's text (choice 0, the output text,
	// the text blocks), at most MaxContent bytes.
	WantContent bool
	MaxContent  int
	// requestBody is the request's body, whose model is read only when
	// needed (requestModel); requestKnown, that SetRequest was called.
	requestBody  []byte
	requestKnown bool
}

// Told is what the reply told, written as it is read; consumers read it
// once it has ended.
type Told struct {
	// Meta is the merged meta (SPEC 4.1): what the module derived from the
	// request, then what the reply carried, in the order it came.
	Meta Meta
	// Usage is the token usage the reply reported (SPEC 9.1).
	Usage Usage
	// Cost is the cost in US dollars the upstream reported itself (SPEC
	// 9.2, 1.), when HasCost; costRank says which figure it is (cost.go).
	Cost     float64
	HasCost  bool
	costRank costRank
	// ID and Model are the reply's own (a chat completion's or response's
	// id, a message id), as far as it named them. Chat replies copy them
	// only for a consumer that reads them: the end hook (BeforeEnd, the
	// OpenClaw run id) and the prices table.
	ID, Model string
	// Terminal is set once the protocol's terminal event came ([DONE], a
	// Responses terminal event, message_stop) or a JSON reply was read.
	Terminal bool
	// Cut is set when a stream whose protocol ends with a terminal event
	// (Responses, Anthropic) ended without it: a run-once reply of it is
	// the 502 of a stream cut short (SPEC 6.4).
	Cut bool
	// Interrupted is set when a stream ended cleanly before the end its
	// protocol defines (SPEC 11.1): meta.interrupted, the warning, the
	// metric and the placeholder read it.
	Interrupted bool
	// Broken is set by the caller, which alone sees the upstream's
	// connection fail mid-stream: a stream that did not end cleanly is not
	// interrupted (SPEC 11.1), whatever its reader saw.
	Broken bool

	calls toolCalls // the calls, for meta.tool_calls (toolcalls.go)
	// jsonProtocol: a JSON reply was read by a registered protocol's
	// reading (not as a chat completion): JSONReplyText then returns the
	// text the record collected.
	jsonProtocol bool
	firstText    time.Time // when the first text went by (Timing)
	content      []byte    // the text collected (WantContent)
	over         bool      // the text outgrew MaxContent
	errMsg       string
	hasErr       bool
}

// scratch is the record's working memory, kept in it so that a pooled
// record allocates nothing for the usual reply.
type scratch struct {
	usageJSON [256]byte // where Seal builds meta.usage and meta.cost_usd
	modelBuf  [64]byte  // where Model is kept when it fits (setModel)
	store     metaStore // the first storage of Meta (useStore)
	sep       bool      // text of a new item or block is due: join with "\n"
}

// AddText appends reply text, when the record collects it. It reports
// false once the text has outgrown MaxContent.
func (r *Reply) AddText(s string) bool {
	if !r.WantContent || r.over || s == "" {
		return !r.over
	}
	if r.sep && len(r.content) > 0 {
		r.content = append(r.content, '\n')
	}
	r.sep = false
	if r.MaxContent > 0 && len(r.content)+len(s) > r.MaxContent {
		r.over = true
		return false
	}
	r.content = append(r.content, s...)
	return true
}

// NextPart says that the next text belongs to another item or block, to be
// joined with "\n" (SPEC 4.4, 4.5).
func (r *Reply) NextPart() { r.sep = true }

// Content is the text collected so far.
func (r *Reply) Content() string { return string(r.content) }

// TooLarge reports whether the text outgrew MaxContent.
func (r *Reply) TooLarge() bool { return r.over }

// SetError records the reply's error message; the first one is kept.
func (r *Reply) SetError(msg string) {
	if !r.hasErr {
		r.errMsg, r.hasErr = strings.Clone(msg), true
	}
}

// Err returns the reply's error message, if it carried one.
func (r *Reply) Err() (string, bool) { return r.errMsg, r.hasErr }

// setID and setModel keep the first id and model the reply named.
func (r *Reply) setID(id string) {
	if r.ID == "" && id != "" {
		r.ID = strings.Clone(id)
	}
}

// The model is kept in the record's own memory when it fits: every reply
// names one (SPEC 11.2), and a copy of each would be an allocation.
func (r *Reply) setModel(model string) {
	if r.Model != "" || model == "" {
		return
	}
	if len(model) > len(r.modelBuf) {
		r.Model = strings.Clone(model)
		return
	}
	n := copy(r.modelBuf[:], model)
	r.Model = strView(r.modelBuf[:n])
}

// SetRequest tells the record what the request sent upstream asked for,
// so that the reply's model is compared with it (SPEC 11.2): its model, or
// when that is not known yet, its body, whose model is read only if the
// reply names one (body must stay unchanged until the reply ends). A
// record that was told nothing adds no model_served.
func (r *Reply) SetRequest(model string, body []byte) {
	r.RequestModel, r.requestBody, r.requestKnown = model, body, true
}

// requestModel is RequestModel, read (a view, not a copy) from SetRequest's
// body the first time it is asked for.
func (r *Reply) requestModel() string {
	if r.RequestModel == "" && r.requestBody != nil {
		top, _ := readRequestTop(strView(r.requestBody))
		r.RequestModel = top.model
		r.requestBody = nil
	}
	return r.RequestModel
}

// Seal writes what the record knows beyond the merged meta into it, once
// the reply has ended: the model that answered when the reply named
// another than the request's (SPEC 11.2), the usage, and the cost (the
// upstream's own, else from the prices table).
func (r *Reply) Seal() {
	r.Meta.useStore(&r.store)
	if r.requestKnown && r.Model != "" && OtherModel(r.Model, r.requestModel()) {
		r.Meta.Set(KeyModelServed, jsonscan.AppendString(nil, r.Model))
	}
	// meta.usage and meta.cost_usd are compact ASCII JSON written in the
	// record's own memory, which the record's Meta can keep as they are.
	own := r.usageJSON[:0]
	if r.Usage.Known() {
		own = r.Usage.AppendJSON(own)
		r.Meta.setValue(KeyUsage, own, true)
		if !r.HasCost && len(r.Prices) > 0 {
			// The reply's model prices it only when it is another model
			// than the request's (SPEC 9.2): a dated snapshot of the
			// requested model is priced by the request's entry.
			model := r.requestModel()
			if OtherModel(r.Model, model) {
				model = r.Model
			}
			if p, ok := PriceOf(r.Prices, model); ok {
				r.setRankedCost(p.Cost(&r.Usage), costPrices)
			}
		}
	}
	if r.HasCost {
		r.Meta.setValue(KeyCost, appendCost(own[len(own):], r.Cost), true)
	}
	if r.Timing {
		r.Meta.Set(KeyTiming, r.appendTiming(nil, time.Now()))
	}
	// Last: its entries are the largest, and each one that would pass
	// max_meta_bytes is left out, rather than a key of the few bytes above.
	r.sealToolCalls()
}

// The meta keys Seal writes besides usage and cost: the model that
// answered when it is another than the one asked for (SPEC 11.2), and the
// module's own timing (SPEC 9.3).
const (
	KeyModelServed = "model_served"
	KeyTiming      = "timing"
)

// WaitsForText reports whether a protocol should tell the record of the
// first reply text it reads (SawText): timing is on and none came yet.
func (r *Reply) WaitsForText() bool { return r.Timing && r.firstText.IsZero() }

// SawText records the moment the first reply text went by.
func (r *Reply) SawText() {
	if r.WaitsForText() {
		r.firstText = time.Now()
	}
}

// appendTiming appends {"first_token_ms":N,"total_ms":N}, whole
// milliseconds from Start; first_token_ms only when text came.
func (r *Reply) appendTiming(dst []byte, end time.Time) []byte {
	dst = append(dst, '{')
	if !r.firstText.IsZero() {
		dst = append(dst, `"first_token_ms":`...)
		dst = strconv.AppendInt(dst, r.firstText.Sub(r.Start).Milliseconds(), 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"total_ms":`...)
	dst = strconv.AppendInt(dst, end.Sub(r.Start).Milliseconds(), 10)
	return append(dst, '}')
}

// readHead reads what a whole reply object (a Responses object, an
// Anthropic message) says of itself: id, model, usage (read by the
// protocol's names), its cost, and its own meta.
func (r *Reply) readHead(obj gjson.Result, usage *usageNames) {
	r.setID(obj.Get("id").Str)
	r.setModel(obj.Get("model").Str)
	r.readUsage(obj.Get("usage"), usage)
	r.Meta.mergeResult(obj.Get("meta"))
}

// OtherModel reports whether the model a reply names is another model than
// the one the request asked for (SPEC 11.2): a non-empty name that is not
// the request's, nor the request's followed by a date ("gpt-4o-2024-08-06"
// for "gpt-4o": a dated snapshot of the same model). With no model in the
// request, any name the reply gives is another.
func OtherModel(reply, request string) bool {
	if reply == "" || reply == request {
		return false
	}
	if request == "" {
		return true
	}
	date, ok := strings.CutPrefix(reply, request)
	return !ok || !isDateSuffix(date)
}

// isDateSuffix reports whether s is "-" and a date, as snapshots are named:
// four digits, then "-" two digits "-" two digits, or four more digits
// ("-2024-08-06", "-20250929"). It is not checked as a calendar date.
func isDateSuffix(s string) bool {
	switch len(s) {
	case len("-2024-08-06"):
		return s[0] == '-' && digits(s[1:5]) && s[5] == '-' && digits(s[6:8]) && s[8] == '-' && digits(s[9:])
	case len("-20250929"):
		return s[0] == '-' && digits(s[1:])
	}
	return false
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
