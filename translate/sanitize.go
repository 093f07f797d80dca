package translate

// What the module writes where an upstream's or a client's text could break
// something (SPEC 8.1): header values and placeholders without control
// characters, bounded in size; JSON in valid UTF-8.

// MaxToolsHeader is the most bytes X-Tools-Used holds (SPEC 8.1).
const MaxToolsHeader = 4 << 10

// isControl reports the characters SPEC 8.1 keeps out of headers and
// placeholders: U+0000 to U+001F and U+007F.
func isControl(c byte) bool { return c < 0x20 || c == 0x7f }

// hasControl reports whether s holds a control character.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if isControl(s[i]) {
			return true
		}
	}
	return false
}

// appendClean appends s with each control character replaced by a space.
func appendClean(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		if isControl(s[i]) {
			dst = append(dst, s[start:i]...)
			dst = append(dst, ' ')
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}

// CleanHeaderValue returns s with each control character replaced by a
// space: a value that can go into a header or a placeholder as it is.
func CleanHeaderValue(s string) string {
	if !hasControl(s) {
		return s
	}
	return string(appendClean(make([]byte, 0, len(s)), s))
}

// ToolsHeader is the X-Tools-Used value of a run-once answer (SPEC 6.1,
// 8.1): the tool names joined with ", ", control characters replaced by a
// space, at most MaxToolsHeader bytes of whole names in order (the first
// name that would cross the bound ends the list). "" when there is none.
func ToolsHeader(tools []string) string {
	b := make([]byte, 0, min(MaxToolsHeader, 16*len(tools)))
	for _, t := range tools {
		sep := ", "
		if len(b) == 0 {
			sep = ""
		}
		if len(b)+len(sep)+len(t) > MaxToolsHeader {
			break
		}
		b = appendClean(append(b, sep...), t)
	}
	return string(b)
}
