package translate

import (
	"io"
	"slices"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// protocols is the registration table: one line per protocol, each
// defined in a file of its own (chat.go, responses.go, anthropic.go,
// gemini.go, uistream.go, datastream.go). The order is the mode table's
// (SPEC 4): a stream's first event, a JSON reply's top level and a
// request's path are tried against the protocols in this order, and the
// first that claims them has them. Chat is last: it takes what no other
// protocol claims.
var protocols = []*protocol{
	&dataStreamProtocol,
	&uiStreamProtocol,
	&responsesProtocol,
	&anthropicProtocol,
	&geminiProtocol, &geminiArrayProtocol,
	&chatProtocol,
}

// protocol is everything the module knows of one upstream protocol, read
// by the protocol-free parts (the mode table, the stream engine, the JSON
// reply reader, the request side). Every field but name and format may be
// left out: a protocol that has no streams has no stream, one that has no
// JSON replies no json.
type protocol struct {
	name   string  // its format's name in logs and metrics
	format *Format // its Format, numbered at registration (protocols' order)

	// Requests (SPEC 4.5, end): whether a request speaks the protocol,
	// from its path (the query excluded) and its headers.
	request func(path string, h Header) bool
	// requestModel is the model a request's path names ("" when its body
	// does, as in most protocols).
	requestModel func(path string) string
	// replyFormat, when set, decides the format of a 2xx reply to a
	// request of the protocol before the mode table does (ok false: the
	// table decides): a reply the protocol knows is not what its headers
	// say.
	replyFormat func(h ReplyHeaders) (f Format, ok bool)

	// Streams (SPEC 4 table). byHeaders recognises a reply by its headers;
	// startsLine a text/plain or event-stream body by its first non-empty
	// line; startsEvents an event stream by the data of its first event
	// with data (a valid JSON object). needsConvert: only recognised under
	// convert_streams.
	byHeaders    func(h ReplyHeaders) bool
	startsLine   func(line []byte) bool
	mayStartLine func(start []byte) bool // the start of a body may still become such a line
	startsEvents func(ev *firstEvent) bool
	needsConvert bool
	// stream is how the protocol's streams are read, by a Rewriter.
	stream *streamReading
	// convert, for a stream converted into another protocol's events
	// (SPEC 5: chat chunks), is the converter writing them to w, the
	// rewriter of the protocol whose format into points to (nil: chat).
	convert func(w *Rewriter, opts ConvertOptions) io.WriteCloser
	into    *Format

	// usage is where its usage objects keep their counts (the JSON index
	// records them for a reply read by its index).
	usage *usageNames

	// json is the reading of the protocol's JSON replies (SPEC 4 table):
	// none for a protocol whose replies are only streams.
	json *jsonProtocol
	// jsonCalls reads the tool calls of a JSON reply with their arguments
	// (SPEC 11.3), only when tool_arguments is on (toolcalls.go).
	jsonCalls func(root gjson.Result, rep *Reply)
}

// streamReading is how a protocol's streams are read (engine.go).
type streamReading struct {
	framing func(r *Rewriter) framing // how the units are cut
	reader  func(o *StreamOptions) unitReader
	// keys are the keys the reading asks the key scan for, flagged
	// keyProtocol<<i in a unit's keySet.
	keys []string
	// usage reads the usage of a unit whose reading said it may hold
	// counts into rep: the last such unit's, at the end, unless usageAdds
	// says each updates the counts before it (it is then read at once).
	usage     func(s string, rep *Reply)
	usageAdds bool
	// metaUnit, when set, builds the unit of the protocol's own that
	// carries the meta once the reply has ended (last: the data of the
	// last unit read), written before data: [DONE], the terminal unit
	// (chat); otherwise the meta goes into the terminal unit its reading
	// finds.
	metaUnit func(dst []byte, o *StreamOptions, rep *Reply, last []byte) []byte
	// keepLast: the protocol's own units repeat the last unit's data
	// (unit.last), which is kept however large.
	keepLast bool

	keyTable *jsonscan.Keys // built from keys at registration
}

// Header is a request's or a reply's header fields under their canonical
// keys (net/http's Header is one).
type Header = map[string][]string

// header returns the first value of a canonical key.
func header(h Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func init() {
	for _, p := range protocols {
		setUp(p)
	}
}

// setUp numbers a registered protocol's format (its place in protocols)
// and builds what the protocol-free parts read of it, once.
func setUp(p *protocol) {
	if *p.format != FormatNone {
		return
	}
	i := slices.Index(protocols, p)
	f := FormatSniffEvents + 1 + Format(i) // after the mode table's own formats
	if f >= NumFormats {
		panic("translate: more protocols than NumFormats allows")
	}
	*p.format = f
	formatProtocol[f] = p
	if p.stream != nil {
		p.stream.keyTable = newKeyTable(p.stream.keys)
	}
	if p.usage != nil {
		if len(p.usage.paths) > maxUsageCounts+1 {
			panic("translate: more usage counts than maxUsageCounts")
		}
		for _, path := range p.usage.paths {
			slot, _ := replyPaths.Slot(replyPaths.Add("usage."+path, nil))
			p.usage.slots = append(p.usage.slots, slot)
		}
	}
	if p.json != nil {
		p.json.proto = p
		registerJSON(p.json)
	}
}

// streamProtocolOf is the protocol whose units a stream of format f is
// read as: chat's, unless f is a protocol with streams of its own.
func streamProtocolOf(f Format) *protocol {
	if p := protocolOf(f); p != nil && p.stream != nil {
		return p
	}
	return &chatProtocol
}

// formatProtocol is the protocol of each Format that is one.
var formatProtocol [NumFormats]*protocol

// protocolOf returns the protocol of f, nil for a format that is none.
func protocolOf(f Format) *protocol {
	if f < NumFormats {
		return formatProtocol[f]
	}
	return nil
}

// RequestKind is the protocol a request speaks (SPEC 4.5, end): the zero
// value is a chat completion.
type RequestKind struct{ p *protocol }

// RequestChat is a chat-completion request.
var RequestChat = RequestKind{}

// RequestKindOf reads a request's protocol from its path (without the
// query) and its headers.
func RequestKindOf(path string, h Header) RequestKind {
	for _, p := range protocols {
		if p.request != nil && p.request(path, h) {
			return RequestKind{p}
		}
	}
	return RequestChat
}

// Chat reports whether the request is a chat completion (SPEC 3: the
// request rewriting applies to these only).
func (k RequestKind) Chat() bool { return k.p == nil }

// Model returns the model the request's path names, "" when its body
// names it.
func (k RequestKind) Model(path string) string {
	if k.p == nil || k.p.requestModel == nil {
		return ""
	}
	return k.p.requestModel(path)
}

// String names the request's protocol.
func (k RequestKind) String() string {
	if k.p == nil {
		return chatProtocol.name
	}
	return k.p.name
}
