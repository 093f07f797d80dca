package demogateway

// The events of an Anthropic Messages stream, each named by an `event:` line
// equal to its type.

type messageStart struct {
	Type    string           `json:"type"`
	Message anthropicMessage `json:"message"`
}

type blockStart struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type blockDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type textDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type inputJSONDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type blockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type messageDelta struct {
	Type  string            `json:"type"`
	Delta messageDeltaStop  `json:"delta"`
	Usage messageDeltaUsage `json:"usage"`
}

type messageDeltaStop struct {
	StopReason   string  `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

// messageDeltaUsage is the usage message_delta carries: the output tokens
// so far (cumulative), and the cost once, on the model that reports it.
type messageDeltaUsage struct {
	OutputTokens int      `json:"output_tokens"`
	Cost         *float64 `json:"cost,omitempty"`
}

type typeOnly struct {
	Type string `json:"type"`
}

// messagesStream writes the events of one Messages stream.
type messagesStream struct {
	s *streamer
}

func (ms messagesStream) send(typ string, v any) error {
	return ms.s.sendEvent(typ, v)
}

// writeMessagesStream sends message_start (input usage, 1 output token so
// far), a ping, a tool_use block per tool (its input as input_json_delta
// fragments, the first one empty as Anthropic sends it), the text block word
// by word, message_delta with the stop reason and the output usage, and
// message_stop.
func writeMessagesStream(s *streamer, req *chatRequest, a answer) error {
	ms := messagesStream{s}
	start := a.usage.anthropic()
	start.OutputTokens, start.Cost = 1, nil
	err := ms.send("message_start", messageStart{Type: "message_start", Message: anthropicMessage{
		ID: demoAnthropicID, Type: "message", Role: "assistant", Model: req.model(), Content: []any{}, Usage: start}})
	if err != nil {
		return err
	}
	if err := ms.send("ping", typeOnly{"ping"}); err != nil {
		return err
	}
	for i, tc := range a.tools {
		if err := ms.toolUse(i, tc); err != nil {
			return err
		}
	}
	if err := ms.text(len(a.tools), a.pieces, a.cut); err != nil {
		return err
	}
	if a.cut {
		return nil // the body ends inside the text block: no message_stop
	}
	end := a.usage.anthropic()
	err = ms.send("message_delta", messageDelta{Type: "message_delta", Delta: messageDeltaStop{StopReason: endTurn},
		Usage: messageDeltaUsage{OutputTokens: end.OutputTokens, Cost: end.Cost}})
	if err != nil {
		return err
	}
	return ms.send("message_stop", typeOnly{"message_stop"})
}

func (ms messagesStream) toolUse(index int, tc toolCall) error {
	err := ms.send("content_block_start", blockStart{Type: "content_block_start", Index: index,
		ContentBlock: toolUseOf(tc, map[string]any{})})
	if err != nil {
		return err
	}
	for _, frag := range append([]string{""}, fragments(tc.arguments(), argFragment)...) {
		err := ms.send("content_block_delta", blockDelta{Type: "content_block_delta", Index: index,
			Delta: inputJSONDelta{Type: "input_json_delta", PartialJSON: frag}})
		if err != nil {
			return err
		}
	}
	return ms.send("content_block_stop", blockStop{Type: "content_block_stop", Index: index})
}

func (ms messagesStream) text(index int, pieces []string, cut bool) error {
	err := ms.send("content_block_start", blockStart{Type: "content_block_start", Index: index,
		ContentBlock: textBlock{Type: "text", Text: ""}})
	if err != nil {
		return err
	}
	for _, w := range pieces {
		err := ms.send("content_block_delta", blockDelta{Type: "content_block_delta", Index: index,
			Delta: textDelta{Type: "text_delta", Text: w}})
		if err != nil {
			return err
		}
	}
	if cut {
		return nil // cut short: the body ends with the last piece sent
	}
	return ms.send("content_block_stop", blockStop{Type: "content_block_stop", Index: index})
}
