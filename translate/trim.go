package translate

// Prompt trimming (SPEC 3.1). STUB: owned by the structured-output helper.

// TrimPrompt trims a chat request body's messages to maxChars.
func TrimPrompt(body []byte, maxChars int) (out []byte, trimmedTo int64, trimmed bool) {
	return body, 0, false
}
