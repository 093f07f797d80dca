package demogateway

// respEvent is one event of a Responses API stream. Its fields are those of
// every event type the demo sends; each type sets its own, and pointers keep
// a field that is present but zero (output_index 0, delta "").
type respEvent struct {
	Type           string          `json:"type"`
	SequenceNumber int             `json:"sequence_number"`
	Response       *responseObject `json:"response,omitempty"`
	OutputIndex    *int            `json:"output_index,omitempty"`
	Item           any             `json:"item,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`
	ContentIndex   *int            `json:"content_index,omitempty"`
	Part           *outputText     `json:"part,omitempty"`
	Delta          *string         `json:"delta,omitempty"`
	Arguments      *string         `json:"arguments,omitempty"`
	Text           *string         `json:"text,omitempty"`
}

// responsesStream writes the events of one Responses stream, numbering
// them from 0 as the API does.
type responsesStream struct {
	s   *streamer
	seq int
}

func (rs *responsesStream) send(e respEvent) error {
	e.SequenceNumber = rs.seq
	rs.seq++
	return rs.s.sendEvent(e.Type, e)
}

// write sends the whole stream of a: created and in_progress with an empty
// response, each function call (added, argument deltas, done), the message
// (added, its output_text part, the text word by word, done), then
// response.completed with done, the whole response and its usage.
func (rs *responsesStream) write(a answer, done responseObject) error {
	start := done
	start.Status, start.Output, start.Usage = "in_progress", []any{}, nil
	for _, typ := range []string{"response.created", "response.in_progress"} {
		if err := rs.send(respEvent{Type: typ, Response: &start}); err != nil {
			return err
		}
	}
	for i, tc := range a.tools {
		if err := rs.functionCall(i, tc); err != nil {
			return err
		}
	}
	if err := rs.message(len(a.tools), a.text, a.pieces, a.cut); err != nil {
		return err
	}
	if a.cut {
		return nil // the body ends inside the message: no terminal event
	}
	return rs.send(respEvent{Type: "response.completed", Response: &done})
}

func (rs *responsesStream) functionCall(index int, tc toolCall) error {
	item := functionCallOf(tc, "", "in_progress")
	if err := rs.send(respEvent{Type: "response.output_item.added", OutputIndex: &index, Item: item}); err != nil {
		return err
	}
	args := tc.arguments()
	for _, frag := range fragments(args, argFragment) {
		err := rs.send(respEvent{Type: "response.function_call_arguments.delta", ItemID: item.ID,
			OutputIndex: &index, Delta: &frag})
		if err != nil {
			return err
		}
	}
	err := rs.send(respEvent{Type: "response.function_call_arguments.done", ItemID: item.ID,
		OutputIndex: &index, Arguments: &args})
	if err != nil {
		return err
	}
	item.Arguments, item.Status = args, "completed"
	return rs.send(respEvent{Type: "response.output_item.done", OutputIndex: &index, Item: item})
}

func (rs *responsesStream) message(index int, text string, pieces []string, cut bool) error {
	part0 := 0
	err := rs.send(respEvent{Type: "response.output_item.added", OutputIndex: &index,
		Item: messageOf([]outputText{}, "in_progress")})
	if err != nil {
		return err
	}
	empty := newOutputText("")
	err = rs.send(respEvent{Type: "response.content_part.added", ItemID: demoMessageID, OutputIndex: &index,
		ContentIndex: &part0, Part: &empty})
	if err != nil {
		return err
	}
	for _, w := range pieces {
		err := rs.send(respEvent{Type: "response.output_text.delta", ItemID: demoMessageID, OutputIndex: &index,
			ContentIndex: &part0, Delta: &w})
		if err != nil {
			return err
		}
	}
	if cut {
		return nil // cut short: the body ends with the last piece sent
	}
	err = rs.send(respEvent{Type: "response.output_text.done", ItemID: demoMessageID, OutputIndex: &index,
		ContentIndex: &part0, Text: &text})
	if err != nil {
		return err
	}
	full := newOutputText(text)
	err = rs.send(respEvent{Type: "response.content_part.done", ItemID: demoMessageID, OutputIndex: &index,
		ContentIndex: &part0, Part: &full})
	if err != nil {
		return err
	}
	return rs.send(respEvent{Type: "response.output_item.done", OutputIndex: &index,
		Item: messageOf([]outputText{full}, "completed")})
}
