package translate

import (
	"io"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// tally is a protocol of this test alone, registered here (RegisterTally)
// and nowhere else, to show that a protocol is one file plus its registration
// (protocol_seam_test.go runs it through the handler). It is shaped like
// Gemini's (SPEC 4.6): a request names it by the end of its path, which
// also names the model; a stream of {"tally":…} events framed as the
// upstream likes, no [DONE], whose terminal event the protocol decides
// and gains "meta" as a top-level key; a JSON reply recognised by a
// top-level member and no choices; and a reply to a streaming request
// that is not an event stream passes untouched.
var formatTally Format

var tallyProtocol = protocol{
	name:   "tally",
	format: &formatTally,
	request: func(path string, _ Header) bool {
		return strings.HasSuffix(path, ":tally") || strings.HasSuffix(path, ":tallyStream")
	},
	requestModel: func(path string) string {
		m := path[strings.LastIndexByte(path, '/')+1:]
		return m[:strings.IndexByte(m, ':')]
	},
	replyFormat: func(h ReplyHeaders) (Format, bool) {
		if strings.HasSuffix(h.Path, ":tallyStream") && h.MediaType != "text/event-stream" {
			if h.Held { // run-once reads the array's elements as events
				return formatTallyArray, true
			}
			return FormatOther, true
		}
		return 0, false
	},
	startsEvents: func(ev *firstEvent) bool { return gjson.Get(ev.obj, "tally").IsObject() },
	stream: &streamReading{
		framing: newSSEFraming,
		reader:  func(*StreamOptions) unitReader { return tallyReader{} },
		keys:    []string{"tally"},
	},
	json: &jsonProtocol{
		paths: []string{"tally", "choices"},
		is:    func(t jsonTop) bool { return t.kind("tally") == '{' && t.kind("choices") == 0 },
		read:  readTally,
		// Its calls, read by the index of the pass that validates the reply:
		// {"kind":"tool","name":N} names N, {"kind":"K_tool"} names K.
		tools:     []string{"tally.calls.#.kind", "tally.calls.#.name"},
		mayBeTool: func(rawKind string) bool { return strings.HasSuffix(rawKind, `tool"`) },
		toolOf:    tallyToolOf,
	},
}

func tallyToolOf(kind string) (tool string, byName bool) {
	if kind == "tool" {
		return "", true
	}
	if t, ok := strings.CutSuffix(kind, "_tool"); ok {
		return t, false
	}
	return "", false
}

// readTally is tally's reading by gjson (its text for run-once), held
// to the index's by FuzzRewriteJSONReplyEquiv.
func readTally(root gjson.Result, rep *Reply, text bool) {
	// The first top-level tally, as the index reads a top-level member.
	if calls := root.Get("tally").Get("calls"); calls.IsArray() {
		calls.ForEach(func(_, c gjson.Result) bool {
			if k := c.Get("kind"); k.Type == gjson.String {
				if tool, byName := tallyToolOf(k.Str); !byName {
					rep.Meta.AddTool(tool)
				} else if n := c.Get("name"); n.Type == gjson.String {
					rep.Meta.AddTool(n.Str)
				}
			}
			return true
		})
	}
	if text {
		rep.AddText(root.Get("tally").Get("text").Str)
	}
}

// formatTallyArray is a tally stream sent as one JSON array: converted
// into tally events, read by tally's reading.
var formatTallyArray Format

var tallyArrayProtocol = protocol{
	name:    "tally_array",
	format:  &formatTallyArray,
	convert: func(w *Rewriter, _ ConvertOptions) io.WriteCloser { return &tallyArray{w: w} },
	into:    &formatTally,
}

// tallyArray holds the array (a test's: unbounded) and writes its
// elements as events at the end.
type tallyArray struct {
	w   *Rewriter
	buf []byte
}

func (a *tallyArray) Write(p []byte) (int, error) { a.buf = append(a.buf, p...); return len(p), nil }

func (a *tallyArray) Close() error {
	var err error
	gjson.ParseBytes(a.buf).ForEach(func(_, v gjson.Result) bool {
		_, err = a.w.Write([]byte("data: " + v.Raw + "\r\n\r\n"))
		return err == nil
	})
	if err != nil {
		return err
	}
	return a.w.Close()
}

var tallyOnce sync.Once

// RegisterTally registers tally and tally_array, once, for the tests that
// run them (protocol_seam_test.go's through the handler, hence exported):
// registered at init, every other test and benchmark would read a reply
// against a protocol production does not have (JSONReply2K/chat: about 90
// instructions for tally's is).
func RegisterTally() {
	tallyOnce.Do(func() {
		for _, p := range []*protocol{&tallyProtocol, &tallyArrayProtocol} {
			protocols = append(protocols, p) // after the table's protocols
			setUp(p)
		}
	})
}

type tallyReader struct{}

func (tallyReader) read(u *unit) {
	if u.keys&keyProtocol == 0 {
		return
	}
	if tool := gjson.Get(u.str(), "tally.tool"); tool.Type == gjson.String {
		u.rep.Meta.AddTool(tool.Str)
	}
	if u.rep.WantContent {
		u.rep.AddText(gjson.Get(u.str(), "tally.text").Str)
	}
	u.terminal = gjson.Get(u.str(), "tally.done").Bool()
}

func (tallyReader) appendInterrupted(dst, _ []byte) []byte { return dst }
