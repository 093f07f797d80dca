package translate

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// SPEC 8.1, "line endings stay whole": however an upstream's writes cut
// its stream, what the client gets is the same bytes, so a CR and its LF
// arriving in separate writes reach the client side by side, and the final
// meta event (or any event the module writes) starts after the whole line
// break. The rule: an event ends at its blank line's CR; the LF that
// completes that CRLF in the next write goes out right after the event
// when the event went out as it came, and is dropped with the event when
// the event was withheld or replaced; when the module writes an event of
// its own right after an event whose LF has not come yet, it completes the
// CRLF itself first and drops the LF when it comes.

// eolStreams are streams with CRLF line ends in which the module withholds,
// replaces or inserts events.
var eolStreams = []struct {
	name string
	in   string
	opts StreamOptions
}{
	{"final meta before [DONE]", crlf(
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}`, ``,
		`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"search"}}]}}]}`, ``,
		`data: [DONE]`, ``), StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}},
	{"meta-only event withheld", crlf(
		`: ping`, ``,
		`data: {"meta":{"a":1}}`, ``,
		`data: {"choices":[{"index":0,"delta":{"content":"x"}}]}`, ``,
		`data: {"meta":{"b":2}}`, ``,
		`data: [DONE]`, ``), StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Chat: ChatOptions{BareMeta: true}}},
	{"error shown as content", crlf(
		`data: {"error":{"message":"boom"}}`, ``,
		`data: {"choices":[{"index":0,"delta":{"content":"after"}}]}`, ``), StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Chat: ChatOptions{ErrorsAsContent: true, Model: "m"}}},
	{"no [DONE]: final meta at the end", crlf(
		`data: {"meta":{"k":"v"}}`, ``,
		`data: {"choices":[{"index":0,"delta":{"content":"x"}}]}`, ``), StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Chat: ChatOptions{Model: "m"}}},
	{"oversize event", crlf(
		`data: {"choices":[{"index":0,"delta":{"content":"`+strings.Repeat("x", 80)+`"}}]}`, ``,
		`data: {"meta":{"k":1}}`, ``,
		`data: [DONE]`, ``), StreamOptions{MaxEvent: 64, FinalMeta: true, Chat: ChatOptions{Model: "m"}}},
	{"CR-only line ends", "data: {\"meta\":{\"k\":1}}\r\rdata: {\"choices\":[]}\r\rdata: [DONE]\r\r",
		StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Chat: ChatOptions{Model: "m"}}},
}

func crlf(lines ...string) string { return strings.Join(lines, "\r\n") + "\r\n" }

// rewriteWrites runs a rewriter on in cut at the given offsets.
func rewriteWrites(t *testing.T, in string, opts StreamOptions, cuts ...int) string {
	t.Helper()
	if opts.Chat.ErrorsAsContent || !opts.Chat.BareMeta {
		opts.Chat.Model = "m" // a fixed head: the outputs are compared
	}
	var out bytes.Buffer
	r := NewRewriter(&out, opts, nil)
	last := 0
	for _, c := range append(cuts, len(in)) {
		if _, err := r.Write([]byte(in[last:c])); err != nil {
			t.Fatal(err)
		}
		last = c
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// generated matches what the module makes up for a chunk head (a fresh id,
// the time): two runs are compared without them.
var generated = regexp.MustCompile(`"chatcmpl-[0-9a-f]{24}"|"created":[0-9]+`)

// fixedIDs makes the generated chunk heads of two runs comparable.
func fixedIDs(s string) string { return generated.ReplaceAllString(s, `"generated"`) }

func TestLineEndsWholeAcrossAnySplit(t *testing.T) {
	for _, tc := range eolStreams {
		t.Run(tc.name, func(t *testing.T) {
			whole := fixedIDs(rewriteWrites(t, tc.in, tc.opts))
			checkLineEnds(t, whole)
			for k := 1; k < len(tc.in); k++ {
				if got := fixedIDs(rewriteWrites(t, tc.in, tc.opts, k)); got != whole {
					t.Fatalf("cut at %d (%q|%q):\n got %q\nwant %q", k, tc.in[max(0, k-8):k], tc.in[k:min(len(tc.in), k+8)], got, whole)
				}
			}
			// An empty write between the CR and its LF changes nothing.
			for k := 1; k < len(tc.in); k++ {
				if got := fixedIDs(rewriteWrites(t, tc.in, tc.opts, k, k)); got != whole {
					t.Fatalf("cut at %d with an empty write:\n got %q\nwant %q", k, got, whole)
				}
			}
			cuts := make([]int, 0, len(tc.in))
			for k := 1; k < len(tc.in); k++ {
				cuts = append(cuts, k)
			}
			if got := fixedIDs(rewriteWrites(t, tc.in, tc.opts, cuts...)); got != whole {
				t.Fatalf("byte by byte:\n got %q\nwant %q", got, whole)
			}
		})
	}
}

// checkLineEnds: every event the module writes itself (the final meta
// event, an error shown as content) starts after a whole line break: never
// right after a CR whose LF comes after the event.
func checkLineEnds(t *testing.T, out string) {
	t.Helper()
	own := 0
	for i := 0; i < len(out); i++ {
		rest := out[i:]
		if !strings.HasPrefix(rest, "data: ") || (i > 0 && out[i-1] != '\n' && out[i-1] != '\r') {
			continue
		}
		line := rest[:strings.IndexAny(rest, "\r\n")]
		if !strings.Contains(line, `"choices":[],"meta":`) && !strings.HasPrefix(line, `data: {"meta":`) && !strings.Contains(line, `"content":"Error: `) {
			continue
		}
		own++
		end := i + strings.Index(rest, "\n\n") + 2
		if i > 0 && out[i-1] == '\r' && end < len(out) && out[end] == '\n' {
			t.Fatalf("the module's event at %d sits between a CR and its LF: %q", i, out)
		}
	}
	if own == 0 {
		t.Fatalf("no event of the module's in %q", out)
	}
}

// However a stream is cut into two writes, the client gets the same bytes.
func FuzzRewriterSplits(f *testing.F) {
	for _, tc := range eolStreams {
		f.Add([]byte(tc.in), uint16(len(tc.in)/2), uint8(0))
	}
	f.Add([]byte("data: {\"error\":\"x\"}\r\r\ndata: {\"meta\":{}}\n\r\n"), uint16(20), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, cut uint16, flags uint8) {
		opts := StreamOptions{MaxEvent: 48 + int(flags>>2), FinalMeta: flags&1 == 0, Chat: ChatOptions{BareMeta: flags&2 != 0, ErrorsAsContent: true, Model: "m"}}
		k := int(cut) % (len(in) + 1)
		whole := fixedIDs(rewriteWrites(t, string(in), opts))
		if got := fixedIDs(rewriteWrites(t, string(in), opts, k)); got != whole {
			t.Fatalf("cut at %d of %q:\n got %q\nwant %q", k, in, got, whole)
		}
	})
}

// streamEOL is the line ending of a stream's first line ("\n" when no line
// ends): the one the module's own events use (SPEC 4.3).
func streamEOL(in []byte) string {
	i := bytes.IndexAny(in, "\r\n")
	switch {
	case i < 0 || in[i] == '\n':
		return "\n"
	case i+1 < len(in) && in[i+1] == '\n':
		return "\r\n"
	}
	return "\r"
}

// withCRsCompleted is what the module forwards of a stream it has nothing
// to add to: its bytes, except that in a stream whose line ending is CRLF
// an event (of at most max bytes, read whole) that ends in a CR gets that
// CR's LF (SPEC 8.1: the module sends it with the event, never later).
func withCRsCompleted(in []byte, max int) []byte {
	if streamEOL(in) != "\r\n" {
		return in
	}
	var out []byte
	for _, e := range wholeEvents(in) {
		out = append(out, e...)
		if len(e) <= max && e[len(e)-1] == '\r' {
			out = append(out, '\n')
		}
	}
	return out
}
