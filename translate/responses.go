package translate

import (
	"math"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// The OpenAI Responses API (SPEC 4.4): its requests, its events and its
// JSON reply, read into a Reply, with the meta carried in the response
// object.

// FormatResponses is a Responses event stream (numbered at registration).
var FormatResponses Format

// RequestResponses is a Responses request.
var RequestResponses = RequestKind{&responsesProtocol}

var responsesProtocol = protocol{
	name:   "responses",
	format: &FormatResponses,
	// A request whose path ends in /responses.
	request: func(path string, _ Header) bool { return strings.HasSuffix(path, "/responses") },
	// A stream whose first event's type starts with "response.".
	startsEvents: func(ev *firstEvent) bool { return ev.hasType && strings.HasPrefix(ev.typ, "response.") },
	stream: &streamReading{
		framing: newSSEFraming,
		reader:  func(o *StreamOptions) unitReader { return &responsesReader{mark: o.MarkInterrupted} },
	},
	json: &jsonProtocol{
		// A JSON reply with "object":"response".
		paths: []string{"object"},
		is:    func(t jsonTop) bool { return t.strIs("object", "response") },
		read:  readResponse,
		// Output items, by their type (responsesToolOf).
		tools:     []string{"output.*.type", "output.*.name"},
		mayBeTool: func(rawType string) bool { return strings.HasSuffix(rawType, `_call"`) },
		toolOf:    responsesToolOf,
	},
	usage:     &responsesUsage,
	jsonCalls: readResponseCalls,
}

// responsesUsage is where a Responses usage object keeps its counts.
var responsesUsage = usageNames{paths: []string{"input_tokens", "output_tokens", "total_tokens",
	"input_tokens_details.cached_tokens", "output_tokens_details.reasoning_tokens", "cost"}}

// responsesReader reads a Responses event stream. Every event passes as it
// came except the terminal one, whose response object gains the meta.
// The API has no [DONE], but some gateways add one after the terminal
// event: it passes.
type responsesReader struct {
	item string // the output item whose text was read last
	// seq is one more than the last sequence_number the upstream sent,
	// read only for mark_interrupted's error event (SPEC 11.1).
	seq  int64
	mark bool
	// The call items that came with neither an output_index nor an id, in
	// .added and in .done events: the n-th .done is the n-th .added's.
	added, done int64
}

func (d *responsesReader) read(u *unit) {
	s, rep := u.str(), u.rep
	if d.mark {
		if n, err := strconv.ParseInt(jsonscan.ObjectValue(s, "sequence_number"), 10, 64); err == nil && n < math.MaxInt64 {
			d.seq = n + 1
		}
	}
	t := eventType(s)
	switch {
	case t == "response.output_item.added" || t == "response.output_item.done":
		item := gjson.Get(s, "item")
		addItemTool(item, &rep.Meta, responsesToolOf)
		if rep.ToolArguments && jsonscan.Valid(s) {
			d.itemCall(s, item, rep, t == "response.output_item.done")
		}
	case t == "response.output_text.delta":
		rep.SawText()
		if rep.WantContent {
			if item := gjson.Get(s, "item_id").Str; item != d.item {
				if d.item != "" {
					rep.NextPart()
				}
				d.item = strings.Clone(item)
			}
			rep.AddText(gjson.Get(s, "delta").Str)
		}
	case t == "response.created":
		resp := gjson.Get(s, "response")
		u.id, u.model = resp.Get("id").Str, resp.Get("model").Str
	case t == "response.completed" || t == "response.incomplete" || t == "response.failed": // the terminal events
		resp := gjson.Get(s, "response")
		readResponse(resp, rep, false)
		if t == "response.failed" {
			if u.errMsg = resp.Get("error.message").Str; u.errMsg == "" {
				u.errMsg = "Response failed"
			}
		}
		u.terminal, u.metaAt = true, "response"
	}
}

// appendInterrupted is the Responses error event for a stream cut short
// (SPEC 11.1), numbered after the upstream's last event, with the meta no
// terminal event carried.
func (d *responsesReader) appendInterrupted(dst, meta []byte) []byte {
	dst = append(dst, "event: error\n"...)
	dst = append(dst, `data: {"type":"error","code":"upstream_interrupted","message":"`+InterruptedMessage+`","param":null,"sequence_number":`...)
	dst = strconv.AppendInt(dst, d.seq, 10)
	return appendMetaEnd(dst, meta)
}

// responsesToolOf says which tool an output item of type t names (SPEC 4.4):
// function_call, custom_tool_call and mcp_call items their name (byName),
// any other type ending in _call its type without _call.
func responsesToolOf(t string) (tool string, byName bool) {
	switch {
	case t == "function_call" || t == "custom_tool_call" || t == "mcp_call":
		return "", true
	case strings.HasSuffix(t, "_call") && len(t) > len("_call"):
		return strings.TrimSuffix(t, "_call"), false
	}
	return "", false
}

// addItemTool adds the tool an item (an output item, a content block)
// names, by its type: its name, or what toolOf derives from the type.
func addItemTool(item gjson.Result, m *Meta, toolOf func(string) (string, bool)) {
	tool, byName := toolOf(item.Get("type").Str)
	if !byName {
		m.AddTool(tool) // "" adds nothing
	} else if n := item.Get("name"); n.Type == gjson.String {
		m.AddTool(n.Str)
	}
}

// callItemArgs returns the arguments of an output item that is a call
// with arguments (SPEC 11.3): a function_call's or mcp_call's arguments,
// a custom_tool_call's input. ok is false for any other item.
func callItemArgs(item gjson.Result) (raw string, ok bool) {
	switch item.Get("type").Str {
	case "function_call", "mcp_call":
		return jsonscan.ObjectValue(item.Raw, "arguments"), true
	case "custom_tool_call":
		return jsonscan.ObjectValue(item.Raw, "input"), true
	}
	return "", false
}

// itemCall reads a call from an output item event of a stream (SPEC
// 11.3): response.output_item.added begins it, with the item's arguments
// while no .done came; .done gives its arguments. The item is found again
// by its output_index, else its id, else its rank among the items that
// have neither.
func (d *responsesReader) itemCall(s string, item gjson.Result, rep *Reply, done bool) {
	args, ok := callItemArgs(item)
	if !ok {
		return
	}
	var key callKey
	switch i, id := gjson.Get(s, "output_index"), item.Get("id"); {
	case i.Type == gjson.Number:
		key = callKey{i.Int(), 0}
	case id.Type == gjson.String:
		key = idKey(id.Str)
	case done:
		key, d.done = callKey{d.done, -2}, d.done+1
	default:
		key, d.added = callKey{d.added, -2}, d.added+1
	}
	c := rep.calls.find(key)
	switch {
	case c == nil:
		c = rep.beginCall(item.Get("name").Str, key, true)
	case !done:
		return // announced again: its arguments stay
	}
	rep.calls.setArgs(c, args)
}

// readResponseCalls reads the calls of a response object's output items
// (SPEC 11.3).
func readResponseCalls(resp gjson.Result, rep *Reply) {
	resp.Get("output").ForEach(func(_, item gjson.Result) bool {
		if args, ok := callItemArgs(item); ok {
			rep.calls.addArgs(rep.beginCall(item.Get("name").Str, callKey{}, false), args)
		}
		return true
	})
}

// readResponse reads a response object (a JSON reply, or a terminal
// event's): id, model, usage, its own meta, the tools of its output items,
// and, with text, the text of its message items' output_text parts.
func readResponse(resp gjson.Result, rep *Reply, text bool) {
	rep.readHead(resp, &responsesUsage)
	resp.Get("output").ForEach(func(_, item gjson.Result) bool {
		addItemTool(item, &rep.Meta, responsesToolOf)
		if text && item.Get("type").Str == "message" {
			rep.NextPart()
			item.Get("content").ForEach(func(_, part gjson.Result) bool {
				if part.Get("type").Str == "output_text" {
					rep.AddText(part.Get("text").Str)
				}
				return true
			})
		}
		return true
	})
}
