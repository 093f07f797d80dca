package translate

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Helpers of the protocol tests (Responses, Anthropic, usage, timing): a
// stream run whole and in small pieces, and the check of a terminal event
// that gained "meta".

// sameJSON reports whether a and b are the same JSON value (key order and
// white space aside). Both must be valid.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("not JSON: %q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("not JSON: %q: %v", b, err)
	}
	return reflect.DeepEqual(va, vb)
}

// metaMark stands, in an expected output, for the meta value the module
// writes: its bytes are checked as JSON (key order is the merge's), every
// other byte exactly.
const metaMark = "@META@"

// checkSpliced checks that got is want with metaMark replaced by a JSON
// value equal to meta.
func checkSpliced(t *testing.T, name, got, want, meta string) {
	t.Helper()
	i := strings.Index(want, metaMark)
	if i < 0 {
		if got != want {
			t.Fatalf("%s:\n got %q\nwant %q", name, got, want)
		}
		return
	}
	prefix, suffix := want[:i], want[i+len(metaMark):]
	if len(got) < len(prefix)+len(suffix) || !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, suffix) {
		t.Fatalf("%s: bytes around the meta differ\n got %q\nwant %q", name, got, want)
	}
	if m := got[len(prefix) : len(got)-len(suffix)]; !sameJSON(t, m, meta) {
		t.Fatalf("%s: meta\n got %s\nwant %s", name, m, meta)
	}
}

// pieceRun is one run of a stream through a rewriter.
type pieceRun struct {
	name  string // whole, n-byte
	out   string
	r     *Rewriter
	warns []string
}

// runPieces runs in through a fresh rewriter for every size of chunkSizes
// (whole, then pieces of 1 to 7 bytes); opts makes the options of each run
// (a fresh Reply each time, when it sets one).
func runPieces(t *testing.T, in string, opts func() StreamOptions, check func(pieceRun)) {
	t.Helper()
	for _, n := range chunkSizes() {
		o := opts()
		var warns []string
		o.Warn = func(reason string) { warns = append(warns, reason) }
		out, r := rewrite(t, in, n, o, nil)
		check(pieceRun{name: chunkName(n), out: out, r: r, warns: warns})
	}
}

// lastEventData returns the data of the last event of out that has data
// ("" when none has).
func lastEventData(t *testing.T, out string) string {
	t.Helper()
	evs := wholeEvents([]byte(out))
	for i := len(evs) - 1; i >= 0; i-- {
		if d, ok, _ := EventData(evs[i], nil); ok {
			return string(d)
		}
	}
	return ""
}

// withContent returns opts with a fresh record that collects the reply's
// text (run-once, SPEC 6.1).
func withContent(opts func() StreamOptions) func() StreamOptions {
	return func() StreamOptions {
		o := opts()
		o.Reply = &Reply{Asked: Asked{WantContent: true}}
		return o
	}
}

// checkContent runs in whole and in pieces and checks the text it reads.
func checkContent(t *testing.T, in string, opts func() StreamOptions, want string) {
	t.Helper()
	runPieces(t, in, withContent(opts), func(p pieceRun) {
		if got := p.r.Reply().Content(); got != want {
			t.Fatalf("%s: content %q, want %q", p.name, got, want)
		}
	})
}

// The first event's type as the mode table reads it (readFirstEvent), and
// the protocols that a first event of that type starts (SPEC 4): the tests'
// view of what startsEvents decides.

// typeOf returns the string "type" of an event's JSON object data.
func typeOf(data []byte) (string, bool) {
	ev := readFirstEvent(data)
	return ev.typ, ev.hasType
}

// IsUIStreamEvent reports whether an SSE event's data is a part of the AI SDK
// UI message stream: a JSON object whose "type" is a string naming one of
// its part types.
func IsUIStreamEvent(data []byte) bool {
	t, ok := typeOf(data)
	return ok && isUIPartType(t)
}

// IsResponsesEvent reports whether an event's data is an OpenAI Responses
// event: a JSON object whose type starts with "response.".
func IsResponsesEvent(data []byte) bool {
	t, ok := typeOf(data)
	return responsesProtocol.startsEvents(&firstEvent{typ: t, hasType: ok})
}

// IsAnthropicEvent reports whether an event's data starts an Anthropic
// Messages stream: a JSON object of type message_start.
func IsAnthropicEvent(data []byte) bool {
	t, ok := typeOf(data)
	return anthropicProtocol.startsEvents(&firstEvent{typ: t, hasType: ok})
}
