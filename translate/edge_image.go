package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// WithImage makes the last user message of a chat body multimodal (SPEC
// 6.2, the edge function's image_data_url): its text and the image. A
// message already in parts keeps them, and the image is added after them.
// body is returned as it is when it has no user message.
//
// The messages are read once, in order, keeping only the last user
// message seen: a body of a million messages costs no list of them
// (gjson's Array would take some 80 bytes per message, many times what
// the smallest message takes on the wire).
func WithImage(body []byte, url string) []byte {
	last := -1
	var content gjson.Result
	i := 0
	gjson.Get(strView(body), "messages").ForEach(func(_, m gjson.Result) bool {
		if m.Get("role").Str == "user" {
			last, content = i, m.Get("content")
		}
		i++
		return true
	})
	if last < 0 {
		return body
	}
	image := map[string]any{"type": "image_url", "image_url": map[string]any{"url": url}}
	path := "messages." + strconv.Itoa(last) + ".content"
	// Text or any other value becomes a text part (gjson's Str is "" for
	// what is not a string); parts gain the image at their end.
	var v any = []any{map[string]any{"type": "text", "text": content.Str}, image}
	if content.IsArray() {
		path, v = path+".-1", image
	}
	if next, err := sjson.SetBytes(body, path, v); err == nil {
		return next
	}
	return body
}
