package demogateway

import (
	"encoding/json"
	"math"
)

// demoTimestamp stands in for the time stamps Agent Hustle puts in its
// metadata parts; fixed, like the demo's other ids.
const demoTimestamp = "2026-01-01T00:00:00.000Z"

// The Agent Hustle metadata parts (prefix 2), in the shapes Hustle sends
// (see shared/conformance/datastream-hustle.txtar). Structs rather than maps
// so that "type" comes first on the wire, as it does from Hustle.
type hustleReasoning struct {
	Type         string   `json:"type"`
	Thinking     string   `json:"thinking"`
	Networks     []string `json:"networks"`
	Categories   []string `json:"categories"`
	ActiveIntent string   `json:"activeIntent"`
	Confidence   float64  `json:"confidence"`
	Timestamp    string   `json:"timestamp"`
}

type hustleDevTools struct {
	Type                string   `json:"type"`
	QualifiedCategories []string `json:"qualifiedCategories"`
	AvailableTools      []string `json:"availableTools"`
	ToolCount           int      `json:"toolCount"`
	Timestamp           string   `json:"timestamp"`
}

type hustleTokenUsage struct {
	Type      string  `json:"type"`
	TokensIn  int     `json:"tokensIn"`
	TokensOut int     `json:"tokensOut"`
	CostUsd   float64 `json:"costUsd"`
}

type dsToolCall struct {
	ToolCallID string         `json:"toolCallId"`
	ToolName   string         `json:"toolName"`
	Args       map[string]any `json:"args"`
}

type dsToolResult struct {
	ToolCallID string         `json:"toolCallId"`
	Result     map[string]any `json:"result"`
}

type dsUsage struct {
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

type dsFinish struct {
	FinishReason string  `json:"finishReason"`
	Usage        dsUsage `json:"usage"`
	IsContinued  *bool   `json:"isContinued,omitempty"` // step finish (e) only
}

type dsStart struct {
	MessageID string `json:"messageId"`
}

// dsPart is one line of the data stream: CODE:JSON.
type dsPart struct {
	code  byte
	value any
}

// hustleCost prices tokens like a mid-range model does, rounded to a
// millionth of a dollar so that the summary llm_meta makes stays readable.
func hustleCost(in, out int) float64 {
	return math.Round(float64(in)*3+float64(out)*15) / 1e6
}

// hustleParts is the whole canned Agent Hustle reply: two steps, a tool call
// in the first, the text in the second, and the metadata Hustle adds.
func hustleParts(req *chatRequest) []dsPart {
	categories := []string{"required", "market-data"}
	tool := dsToolCall{ToolCallID: "call_demo_hustle_1", ToolName: "getTokenPrice",
		Args: map[string]any{"symbol": "SOL"}}
	text := `You said: "` + req.echo() + `". Agent Hustle (demo) looked up SOL with getTokenPrice: 142.07 USD, up 3.1% in 24 hours.`
	in := req.promptTokens()
	out := completionTokens(text, nil)
	toolOut := 12
	no := false

	parts := []dsPart{
		{'f', dsStart{MessageID: "msg-demo-hustle-1"}},
		{'2', []any{hustleReasoning{Type: "reasoning",
			Thinking:     "The user wrote a message; the demo answers every message with a token price lookup, which is in the market-data category.",
			Networks:     []string{"solana"},
			Categories:   categories,
			ActiveIntent: "Looking up the SOL token price",
			Confidence:   0.92,
			Timestamp:    demoTimestamp}}},
		{'2', []any{hustleDevTools{Type: "dev_tools_info",
			QualifiedCategories: categories,
			AvailableTools:      []string{"wallet", "getTokenPrice", "getTrendingTokens", "swapTokens"},
			ToolCount:           4,
			Timestamp:           demoTimestamp}}},
		{'9', tool},
		{'a', dsToolResult{ToolCallID: tool.ToolCallID,
			Result: map[string]any{"symbol": "SOL", "priceUsd": 142.07, "change24h": 3.1}}},
		{'e', dsFinish{FinishReason: "tool-calls", Usage: dsUsage{in, toolOut}, IsContinued: &no}},
		{'f', dsStart{MessageID: "msg-demo-hustle-2"}},
	}
	for _, w := range req.textPieces(text) {
		parts = append(parts, dsPart{'0', w})
	}
	if req.cutShort() {
		return parts // no last e part, no d part
	}
	return append(parts,
		dsPart{'2', []any{hustleTokenUsage{Type: "token_usage", TokensIn: 2 * in, TokensOut: toolOut + out,
			CostUsd: hustleCost(2*in, toolOut+out)}}},
		dsPart{'e', dsFinish{FinishReason: "stop", Usage: dsUsage{in, out}, IsContinued: &no}},
		dsPart{'d', dsFinish{FinishReason: "stop", Usage: dsUsage{2 * in, toolOut + out}}},
	)
}

// serveHustle answers in the Vercel AI SDK data stream v1 protocol, as Agent
// Hustle does, whatever the request's "stream" says: Hustle only streams.
func serveHustle(s *streamer, req *chatRequest) error {
	err := s.begin(map[string]string{
		"Content-Type":            "text/plain; charset=utf-8",
		"X-Vercel-AI-Data-Stream": "v1",
		"Cache-Control":           "no-cache",
		"X-Accel-Buffering":       "no",
	})
	if err != nil {
		return err
	}
	for _, p := range hustleParts(req) {
		b, err := json.Marshal(p.value)
		if err != nil {
			return err
		}
		line := make([]byte, 0, len(b)+3)
		line = append(line, p.code, ':')
		line = append(line, b...)
		line = append(line, '\n')
		if err := s.send(line); err != nil {
			return err
		}
	}
	return nil
}
