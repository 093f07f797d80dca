package demogateway

import (
	"encoding/json"
	"strings"
)

// answer is what the demo replies on the Responses and Messages endpoints,
// before it is shaped into either protocol: the tools it ran, the text it
// wrote after them and the usage.
type answer struct {
	tools []toolCall
	text  string
	usage tokenCounts
	// pieces is the text as a stream sends it, and cut says that it is
	// only the first part of it: the stream ends there (cutShort).
	pieces []string
	cut    bool
}

// answerFor picks the reply by model as the chat endpoint does, among the
// kinds these APIs can carry: "plain" is text only, "structured" writes the
// structured-output JSON object as its text, any other model runs the tools
// of the message and echoes it. Hustle and the UI stream are chat-gateway
// protocols with no counterpart here, so those models answer as the default.
func answerFor(req *chatRequest) (answer, error) {
	var a answer
	m := strings.ToLower(req.Model)
	switch {
	case strings.Contains(m, "structured"):
		b, err := json.Marshal(req.structured())
		if err != nil {
			return a, err
		}
		a.text = string(b)
	case strings.Contains(m, "plain"):
		a.text = openAIText(req, nil, true)
	default:
		a.tools = req.tools()
		a.text = openAIText(req, a.tools, false)
	}
	a.usage = req.tokens(completionTokens(a.text, a.tools))
	a.pieces, a.cut = req.textPieces(a.text), req.cutShort()
	return a, nil
}

// callSuffix is the unique part of a demo call id ("call_demo_1" → "demo_1"),
// for the ids other APIs give the same call (fc_…, toolu_…).
func callSuffix(tc toolCall) string {
	return strings.TrimPrefix(tc.ID, "call_")
}
