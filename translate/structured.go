package translate

// Structured output (SPEC 7). STUB: owned by the structured-output helper.

// DefaultStructuredInstruction is the built-in instruction appended to the system prompt.
const DefaultStructuredInstruction = ""

// ApplyStructuredRequest adds the json_schema response_format and the
// instruction to a chat request body.
func ApplyStructuredRequest(body []byte, instruction string) ([]byte, error) { return body, nil }

// SplitStructuredReply splits a whole structured reply.
func SplitStructuredReply(content string) (reply string, metadata []byte, ok bool) {
	return content, nil, false
}

// ReplyStream decodes the reply of a streamed structured answer.
type ReplyStream struct{}

// NewReplyStream makes a decoder that keeps at most maxBytes of content.
func NewReplyStream(maxBytes int) *ReplyStream { return &ReplyStream{} }

// Feed takes the next content delta and returns the text to show.
func (d *ReplyStream) Feed(delta string) string { return delta }

// Metadata returns structured_metadata once the stream has ended.
func (d *ReplyStream) Metadata() ([]byte, bool) { return nil, false }

// Structured reports whether the stream was recognised as a structured reply.
func (d *ReplyStream) Structured() bool { return false }
