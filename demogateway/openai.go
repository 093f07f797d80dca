package demogateway

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// Fixed ids and timestamp: the demo's output is deterministic, so that a
// transcript of it can be compared with an earlier one.
const (
	demoChatID  = "chatcmpl-demo"
	demoCreated = 1767225600 // 2026-01-01T00:00:00Z
)

// argFragment is the size of the tool-call argument pieces in a stream, small
// enough that the arguments of every demo call arrive in several pieces.
const argFragment = 8

// chunk is an OpenAI chat.completion.chunk.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	// Usage is absent unless the request asked for usage; then it is null
	// on every chunk but the usage chunk, as OpenAI sends it.
	Usage json.RawMessage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

// functionDelta always carries arguments: OpenAI sends "" in the first
// fragment, next to the name, and some clients rely on the key.
type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// completion is an OpenAI chat.completion, plus the gateway contract's
// top-level meta that llm_meta merges into its own.
type completion struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
	Meta    *gatewayMeta       `json:"meta,omitempty"`
}

type completionChoice struct {
	Index        int         `json:"index"`
	Message      respMessage `json:"message"`
	FinishReason string      `json:"finish_reason"`
}

type respMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	ToolCalls []toolCallFull `json:"tool_calls,omitempty"`
}

type toolCallFull struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// gatewayMeta is what a gateway following the contract adds to its reply.
type gatewayMeta struct {
	StructuredResult table `json:"structured_result"`
}

type table struct {
	Type    string     `json:"type"`
	Headers []string   `json:"headers"`
	Rows    [][]string `json:"rows"`
}

// toolsTable is the structured_result the demo gateway reports: one row per
// tool it ran.
func toolsTable(tools []toolCall) *gatewayMeta {
	t := table{Type: "table", Headers: []string{"Tool", "Status"}, Rows: [][]string{}}
	for _, tc := range tools {
		t.Rows = append(t.Rows, []string{tc.Name, "ok"})
	}
	return &gatewayMeta{StructuredResult: t}
}

// openAIText is the reply of the OpenAI and plain kinds.
func openAIText(req *chatRequest, tools []toolCall, plain bool) string {
	said := `You said: "` + req.echo() + `". `
	switch {
	case plain:
		return said + "This is a plain reply from the llm_meta demo gateway: no tools, no meta, just text."
	case req.mentions("weather"):
		return said + "I asked get_weather and get_forecast in parallel: Paris is 21°C and sunny, and stays so for the next 3 days."
	default:
		return said + "I ran the " + tools[0].Name + " tool, which opened a terminal. This reply comes from the llm_meta demo gateway."
	}
}

// completionTokens is the deterministic stand-in for the reply's token count.
func completionTokens(text string, tools []toolCall) int {
	n := utf8.RuneCountInString(text)
	for _, tc := range tools {
		n += len(tc.arguments())
	}
	return max(1, n/4)
}

// serveOpenAI answers like OpenAI: a chunk stream or a chat.completion.
// The demo plays a gateway that runs the tools itself, so a reply carries
// both the tool calls and the text written after them, and ends with "stop".
func serveOpenAI(s *streamer, req *chatRequest, plain bool) error {
	var tools []toolCall
	if !plain {
		tools = req.tools()
	}
	text := openAIText(req, tools, plain)
	u := req.tokens(completionTokens(text, tools)).chat()

	if !req.Stream {
		msg := respMessage{Role: "assistant", Content: text}
		for _, tc := range tools {
			msg.ToolCalls = append(msg.ToolCalls, toolCallFull{ID: tc.ID, Type: "function",
				Function: functionCall{Name: tc.Name, Arguments: tc.arguments()}})
		}
		c := completion{ID: demoChatID, Object: "chat.completion", Created: demoCreated, Model: req.model(),
			Choices: []completionChoice{{Message: msg, FinishReason: "stop"}}, Usage: u}
		if len(tools) > 0 {
			c.Meta = toolsTable(tools)
		}
		return writeJSON(s.w, http.StatusOK, c)
	}

	cs := newChunkStream(s, req)
	if err := s.begin(sseHeader()); err != nil {
		return err
	}
	if err := cs.send(delta{Role: "assistant"}, nil); err != nil {
		return err
	}
	for i, tc := range tools {
		first := toolCallDelta{Index: i, ID: tc.ID, Type: "function", Function: functionDelta{Name: tc.Name}}
		if err := cs.send(delta{ToolCalls: []toolCallDelta{first}}, nil); err != nil {
			return err
		}
		for _, frag := range fragments(tc.arguments(), argFragment) {
			d := toolCallDelta{Index: i, Function: functionDelta{Arguments: frag}}
			if err := cs.send(delta{ToolCalls: []toolCallDelta{d}}, nil); err != nil {
				return err
			}
		}
	}
	for _, w := range req.textPieces(text) {
		if err := cs.send(delta{Content: &w}, nil); err != nil {
			return err
		}
	}
	if req.cutShort() {
		return nil // the body ends here, with no finish_reason and no [DONE]
	}
	var meta *gatewayMeta
	if len(tools) > 0 {
		meta = toolsTable(tools)
	}
	return cs.finish("stop", u, meta)
}

// chunkStream writes the chunks of one OpenAI-style stream.
type chunkStream struct {
	s     *streamer
	model string
	// withUsage: the request asked for usage (stream_options.include_usage),
	// so every chunk carries "usage" (null) and a usage chunk ends the stream.
	withUsage bool
}

func newChunkStream(s *streamer, req *chatRequest) *chunkStream {
	return &chunkStream{s: s, model: req.model(), withUsage: req.includeUsage()}
}

func (cs *chunkStream) send(d delta, finish *string) error {
	c := chunk{ID: demoChatID, Object: "chat.completion.chunk", Created: demoCreated,
		Model: cs.model, Choices: []chunkChoice{{Delta: d, FinishReason: finish}}}
	if cs.withUsage {
		c.Usage = json.RawMessage("null")
	}
	return cs.s.sendSSE(c)
}

// finish writes the finish_reason chunk, the usage chunk when asked for (with
// empty choices, as OpenAI does; never otherwise), the gateway's meta-only
// event when there is meta, and [DONE].
func (cs *chunkStream) finish(reason string, u usage, meta *gatewayMeta) error {
	if err := cs.send(delta{}, &reason); err != nil {
		return err
	}
	if cs.withUsage {
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		err = cs.s.sendSSE(chunk{ID: demoChatID, Object: "chat.completion.chunk", Created: demoCreated,
			Model: cs.model, Choices: []chunkChoice{}, Usage: b})
		if err != nil {
			return err
		}
	}
	if meta != nil {
		// The gateway contract's meta event: llm_meta withholds it and merges
		// its meta into the one final meta event it writes.
		if err := cs.s.sendSSE(struct {
			Meta *gatewayMeta `json:"meta"`
		}{meta}); err != nil {
			return err
		}
	}
	return cs.s.sendDone()
}

// toolCall is one canned tool call and its canned result.
type toolCall struct {
	ID     string
	Name   string
	Args   map[string]any
	Result map[string]any
}

// arguments is the call's arguments as the JSON string OpenAI sends.
func (tc toolCall) arguments() string {
	b, _ := json.Marshal(tc.Args) // maps of strings and numbers always marshal
	return string(b)
}

// tools is the demo's tool plan: two parallel calls for a weather question,
// else one launcher call, so that both shapes of tool_calls can be seen.
func (c *chatRequest) tools() []toolCall {
	if c.mentions("weather") {
		return []toolCall{
			{ID: "call_demo_1", Name: "get_weather",
				Args:   map[string]any{"city": "Paris", "unit": "celsius"},
				Result: map[string]any{"city": "Paris", "temp_c": 21, "sky": "sunny"}},
			{ID: "call_demo_2", Name: "get_forecast",
				Args:   map[string]any{"city": "Paris", "days": 3},
				Result: map[string]any{"city": "Paris", "days": []string{"sunny", "sunny", "sunny"}}},
		}
	}
	return []toolCall{
		{ID: "call_demo_1", Name: "launcher",
			Args:   map[string]any{"app": "terminal"},
			Result: map[string]any{"status": "opened", "app": "terminal"}},
	}
}
