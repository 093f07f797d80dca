package demogateway

// uiPart is one chunk of the AI SDK 5 UI message stream. Only the fields
// the demo uses; the client accepts extra keys but rejects unknown types, so
// every Type here is one the AI SDK defines.
type uiPart struct {
	Type         string `json:"type"`
	MessageID    string `json:"messageId,omitempty"`
	ID           string `json:"id,omitempty"`
	Delta        string `json:"delta,omitempty"`
	ToolCallID   string `json:"toolCallId,omitempty"`
	ToolName     string `json:"toolName,omitempty"`
	Input        any    `json:"input,omitempty"`  // any: a non-nil empty input still goes out
	Output       any    `json:"output,omitempty"` // likewise
	Data         any    `json:"data,omitempty"`
	FinishReason string `json:"finishReason,omitempty"`
}

// uiParts is the canned UI message stream: a tool step (the same tool plan
// as the OpenAI kind), then a text step, then a data part with the
// dev_tools_info that llm_meta summarises.
func uiParts(req *chatRequest) []uiPart {
	tools := req.tools()
	text := openAIText(req, tools, false)
	names := make([]string, 0, len(tools))

	parts := []uiPart{{Type: "start", MessageID: "msg-demo-ui-1"}, {Type: "start-step"}}
	for _, tc := range tools {
		names = append(names, tc.Name)
		parts = append(parts,
			uiPart{Type: "tool-input-start", ToolCallID: tc.ID, ToolName: tc.Name},
			uiPart{Type: "tool-input-available", ToolCallID: tc.ID, ToolName: tc.Name, Input: tc.Args},
			uiPart{Type: "tool-output-available", ToolCallID: tc.ID, Output: tc.Result},
		)
	}
	parts = append(parts, uiPart{Type: "finish-step"}, uiPart{Type: "start-step"},
		uiPart{Type: "text-start", ID: "txt-demo-1"})
	for _, w := range req.textPieces(text) {
		parts = append(parts, uiPart{Type: "text-delta", ID: "txt-demo-1", Delta: w})
	}
	if req.cutShort() {
		return parts // no finish part
	}
	return append(parts,
		uiPart{Type: "text-end", ID: "txt-demo-1"},
		uiPart{Type: "data-tools", Data: []any{hustleDevTools{Type: "dev_tools_info",
			QualifiedCategories: []string{"required", "demo"},
			AvailableTools:      names,
			ToolCount:           len(names),
			Timestamp:           demoTimestamp}}},
		uiPart{Type: "finish-step"},
		uiPart{Type: "finish", FinishReason: "stop"},
	)
}

// serveUIStream answers in the AI SDK 5 UI message stream protocol, always
// streamed: the protocol has no non-stream form.
func serveUIStream(s *streamer, req *chatRequest) error {
	h := sseHeader()
	h["X-Vercel-AI-UI-Message-Stream"] = "v1"
	if err := s.begin(h); err != nil {
		return err
	}
	for _, p := range uiParts(req) {
		if err := s.sendSSE(p); err != nil {
			return err
		}
	}
	if req.cutShort() {
		return nil
	}
	return s.sendDone()
}
