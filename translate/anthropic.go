package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// Anthropic Messages (SPEC 4.5): its requests, its events and its JSON
// reply, read into a Reply, with the meta carried as a top-level key of
// the message (JSON) or of the message_stop event (stream).

// FormatAnthropic is a Messages event stream (numbered at registration).
var FormatAnthropic Format

// RequestAnthropic is a Messages request.
var RequestAnthropic = RequestKind{&anthropicProtocol}

var anthropicProtocol = protocol{
	name:   "anthropic",
	format: &FormatAnthropic,
	// A request whose path ends in /messages, or that carries an
	// anthropic-version header.
	request: func(path string, h Header) bool {
		return strings.HasSuffix(path, "/messages") || header(h, "Anthropic-Version") != ""
	},
	// A stream whose first event is message_start.
	startsEvents: func(ev *firstEvent) bool { return ev.hasType && ev.typ == "message_start" },
	stream: &streamReading{
		framing:   newSSEFraming,
		reader:    func(*StreamOptions) unitReader { return &anthropicReader{block: -1} },
		usage:     readAnthropicUsage,
		usageAdds: true,
	},
	json: &jsonProtocol{
		// A JSON reply with "type":"message".
		paths: []string{"type"},
		is:    func(t jsonTop) bool { return t.strIs("type", "message") },
		read:  readMessage,
		// Content blocks, by their type (anthropicToolOf).
		tools: []string{"content.*.type", "content.*.name"},
		// A tool block's type ends in tool_use.
		mayBeTool: func(rawType string) bool { return strings.HasSuffix(rawType, `tool_use"`) },
		toolOf:    anthropicToolOf,
	},
	usage:     &anthropicUsage,
	jsonCalls: readMessageCalls,
}

// anthropicUsage is where an Anthropic usage object keeps its counts: its
// input comes in parts (the uncached input, the cache reads, the cache
// writes), input_tokens counting only the first. In a stream, each
// message_delta's counts replace the ones they name (applyParts).
var anthropicUsage = usageNames{parts: true, paths: []string{"input_tokens", "cache_read_input_tokens",
	"cache_creation_input_tokens", "output_tokens", "cost"}}

// anthropicReader reads a Messages event stream. Every event passes as it
// came except message_stop, which gains the meta.
type anthropicReader struct {
	block int64 // index of the content block whose text was read last; -1: none
}

func (d *anthropicReader) read(u *unit) {
	s, rep := u.str(), u.rep
	switch eventType(s) {
	case "message_start":
		msg := gjson.Get(s, "message")
		u.id, u.model, u.usage = msg.Get("id").Str, msg.Get("model").Str, true
	case "content_block_start":
		block := gjson.Get(s, "content_block")
		addItemTool(block, &rep.Meta, anthropicToolOf)
		if rep.ToolArguments && jsonscan.Valid(s) {
			blockCallStart(s, block, rep)
		}
	case "content_block_delta":
		if rep.ToolArguments {
			blockCallDelta(s, rep)
		}
		if rep.WantContent || rep.WaitsForText() {
			delta := gjson.Get(s, "delta")
			if delta.Get("type").Str == "text_delta" {
				rep.SawText()
				if i := gjson.Get(s, "index").Int(); i != d.block {
					rep.NextPart()
					d.block = i
				}
				rep.AddText(delta.Get("text").Str)
			}
		}
	case "message_delta":
		u.usage = true
	case "message_stop":
		u.terminal = true
	}
}

// readAnthropicUsage reads message_start's message.usage, or
// message_delta's usage, whose counts replace the ones they name.
func readAnthropicUsage(s string, rep *Reply) {
	u := gjson.Get(s, "usage")
	if !u.Exists() {
		u = gjson.Get(s, "message.usage")
	}
	rep.readUsage(u, &anthropicUsage)
}

// appendInterrupted is the Anthropic error event for a stream cut short
// (SPEC 11.1), with the meta no message_stop carried.
func (d *anthropicReader) appendInterrupted(dst, meta []byte) []byte {
	dst = append(dst, "event: error\n"...)
	dst = append(dst, `data: {"type":"error","error":{"type":"api_error","message":"`+InterruptedMessage+`"}`...)
	return appendMetaEnd(dst, meta)
}

// anthropicToolOf says whether a content block of type t names a tool (by
// its name): tool_use, server_tool_use and mcp_tool_use blocks do.
func anthropicToolOf(t string) (tool string, byName bool) {
	switch t {
	case "tool_use", "server_tool_use", "mcp_tool_use":
		return "", true
	}
	return "", false
}

// isToolBlock reports whether a content block is a call (SPEC 4.5, 11.3).
func isToolBlock(block gjson.Result) bool {
	_, byName := anthropicToolOf(block.Get("type").Str)
	return byName
}

// blockCallStart begins the call of a tool block's content_block_start
// (SPEC 11.3): its arguments are the input value's text as it came, until
// an input_json_delta with a fragment replaces them.
func blockCallStart(s string, block gjson.Result, rep *Reply) {
	if !isToolBlock(block) {
		return
	}
	c := rep.beginCall(block.Get("name").Str, callKey{gjson.Get(s, "index").Int(), 0}, true)
	rep.calls.setArgs(c, jsonscan.ObjectValue(block.Raw, "input"))
	if c != nil {
		c.replace = true
	}
}

// blockCallDelta adds an input_json_delta's fragment to its block's call:
// the call's arguments are the fragments joined.
func blockCallDelta(s string, rep *Reply) {
	delta := gjson.Get(s, "delta")
	if delta.Get("type").Str != "input_json_delta" || !jsonscan.Valid(s) {
		return
	}
	if c := rep.calls.find(callKey{gjson.Get(s, "index").Int(), 0}); c != nil {
		rep.calls.addArgs(c, jsonscan.ObjectValue(delta.Raw, "partial_json"))
	}
}

// readMessageCalls reads the calls of a message's tool blocks, each with
// its input value's text as it came (SPEC 11.3).
func readMessageCalls(msg gjson.Result, rep *Reply) {
	msg.Get("content").ForEach(func(_, block gjson.Result) bool {
		if isToolBlock(block) {
			rep.calls.addArgs(rep.beginCall(block.Get("name").Str, callKey{}, false), jsonscan.ObjectValue(block.Raw, "input"))
		}
		return true
	})
}

// readMessage reads an Anthropic message (a JSON reply): id, model, usage,
// its own meta, the tools of its content blocks, and, with text, the text
// of its text blocks.
func readMessage(msg gjson.Result, rep *Reply, text bool) {
	rep.readHead(msg, &anthropicUsage)
	msg.Get("content").ForEach(func(_, block gjson.Result) bool {
		addItemTool(block, &rep.Meta, anthropicToolOf)
		if text && block.Get("type").Str == "text" {
			rep.NextPart()
			rep.AddText(block.Get("text").Str)
		}
		return true
	})
}
