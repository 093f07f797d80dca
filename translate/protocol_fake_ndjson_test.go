package translate

import (
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// lines is a protocol of this test alone, registered here (RegisterLines),
// to show that a protocol framed as NDJSON is one file plus its
// registration (protocol_seam_test.go runs it through the handler): a
// request to …/lines, answered with one JSON object a line, a line with
// "tool" naming one, the first with "done": true its terminal line.
var formatLines Format

var linesProtocol = protocol{
	name:        "lines",
	format:      &formatLines,
	request:     func(path string, _ Header) bool { return strings.HasSuffix(path, "/lines") },
	replyFormat: func(h ReplyHeaders) (Format, bool) { return formatLines, h.MediaType == "application/x-ndjson" },
	stream: &streamReading{
		framing: newNDJSONFraming,
		reader:  func(*StreamOptions) unitReader { return linesReader{} },
		keys:    []string{"tool", "done"},
	},
}

type linesReader struct{}

func (linesReader) read(u *unit) {
	if t := gjson.Get(u.str(), "tool"); t.Type == gjson.String {
		u.rep.Meta.AddTool(t.Str)
	}
	u.terminal = u.keys&(keyProtocol<<1) != 0 && gjson.Get(u.str(), "done").Bool()
}

func (linesReader) appendInterrupted(dst, _ []byte) []byte {
	return append(dst, "{\"error\":\"cut\"}\n"...)
}

var linesOnce sync.Once

// RegisterLines registers lines, once, for the tests that run it.
func RegisterLines() {
	linesOnce.Do(func() {
		protocols = append(protocols, &linesProtocol)
		setUp(&linesProtocol)
	})
}
