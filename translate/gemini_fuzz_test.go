package translate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geminiFuzzSeeds are Gemini streams: the shapes of SPEC 4.6 and the real
// recordings of testdata/fixtures (a stream's first events).
func geminiFuzzSeeds(f *testing.F) []string {
	seeds := []string{
		geminiEvent(geminiReply(geminiCandidate(0, `{"text":"a"},`+geminiCall(1), false))) +
			geminiEvent(`{"meta":{"k":1}}`) +
			geminiEvent(geminiReply(geminiCandidate(0, `{"text":"b","thought":true},{"executableCode":{"code":"1"}}`, true))) +
			geminiEvent(geminiReply(geminiCandidate(0, geminiCall(2), true))),
		geminiEvent(`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`),
		geminiEvent(geminiReply(geminiCandidate(0, `{"text":"a"}`, false))) + geminiEvent(`{"error":{"code":500,"message":"x"}}`),
		"data: " + geminiReply(geminiCandidate(0, `{"text":"a"}`, true)) + "\r\n\r",
		"[" + geminiReply(geminiCandidate(0, `{"text":"a\\"]}"}`, false)) + ",\r\n" + geminiReply(geminiCandidate(0, geminiCall(0), true)) + "]",
	}
	for _, name := range []string{"gemini/google-stream-tool-call-arguments.chunks.txt", "gemini/issue-10660-image-thought-signature.chunks.txt"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b[:min(len(b), 3000)]))
	}
	return seeds
}

// runGemini reads in through the pipeline of format f, in the pieces the
// pattern makes, forwarding or collecting the text (run-once).
func runGemini(f Format, in, pattern []byte, runOnce bool) (string, *Reply) {
	var out bytes.Buffer
	rep := &Reply{Asked: Asked{WantContent: runOnce, MaxContent: 1 << 20}}
	opts := StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}
	w, _ := OpenStream(f, &out, opts, ConvertOptions{}, nil)
	for _, p := range fuzzPieces(in, pattern) {
		w.Write(p)
	}
	w.Close()
	return out.String(), rep
}

// FuzzGeminiStream: a Gemini stream forwarded comes out the same however it
// is cut, and is its input with at most the meta inserted into one event
// (no byte of the upstream's lost or changed); read for run-once, the text,
// tools and error do not depend on the cuts either.
func FuzzGeminiStream(f *testing.F) {
	for _, s := range geminiFuzzSeeds(f) {
		for _, p := range []string{"", "\x00", "\x03\x01", "\x07\x00\x0f"} {
			f.Add([]byte(s), []byte(p))
		}
	}
	f.Fuzz(func(t *testing.T, in, pattern []byte) {
		whole, wrep := runGemini(FormatGemini, in, nil, false)
		out, _ := runGemini(FormatGemini, in, pattern, false)
		if out != whole {
			t.Fatalf("cut by %v:\n got %q\nwant %q", pattern, out, whole)
		}
		if !bytes.Contains(in, []byte("meta")) {
			// One insertion, nothing else: the common prefix and suffix
			// cover the input, with its events' last CRs completed as the
			// module completes them (SPEC 8.1; an event it rewrites gets
			// its CR's LF in any stream).
			in := withCRsCompleted(in, 1<<20)
			out := out
			spliced := wrep.Terminal && !wrep.Meta.Empty()
			if spliced {
				// A rewritten event always ends with its blank line, even
				// when the body ended inside it (SPEC 4.3): the line
				// breaks at the very end are the module's to complete.
				in = bytes.TrimRight(in, "\r\n")
				out = strings.TrimRight(out, "\r\n")
			}
			p := 0
			for p < len(in) && p < len(out) && in[p] == out[p] {
				p++
			}
			if spliced && p > 0 && in[p-1] == '\r' && p < len(out) && out[p] == '\n' {
				// The event before the one rewritten ended in a CR: the
				// module wrote its LF before writing there, in any stream
				// (sse_eol.go: it cannot know whether that LF is coming).
				out = out[:p] + out[p+1:]
				for p < len(in) && p < len(out) && in[p] == out[p] {
					p++
				}
			}
			s := 0
			for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
				s++
			}
			if e := len(out) - 1 - s; spliced && e > 0 && out[e] == '\n' && out[e-1] == '\r' && s < len(in)-p && in[len(in)-1-s] == '\r' {
				// The rewritten event ended in a CR: the module wrote its
				// LF at once, in any stream (sse_framing.go, splice), and
				// drops the upstream's should it come next.
				out = out[:e] + out[e+1:]
				for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
					s++
				}
			}
			if p+s != len(in) || (len(out) > len(in)) != spliced {
				t.Fatalf("output is not the input with the meta inserted\n in %q\nout %q", in, out)
			}
		}
		_, a := runGemini(FormatGemini, in, nil, true)
		_, b := runGemini(FormatGemini, in, pattern, true)
		ea, _ := a.Err()
		eb, _ := b.Err()
		if a.Content() != b.Content() || string(a.Meta.JSON()) != string(b.Meta.JSON()) || ea != eb || a.Cut != b.Cut {
			t.Fatalf("run-once cut by %v: %q %s %q, whole %q %s %q", pattern, b.Content(), b.Meta.JSON(), eb, a.Content(), a.Meta.JSON(), ea)
		}
	})
}

// FuzzGeminiArray: run-once over a streamed JSON array reads the same
// however the array is cut, and as the same elements sent as SSE events.
func FuzzGeminiArray(f *testing.F) {
	for _, s := range geminiFuzzSeeds(f) {
		f.Add([]byte(s), []byte("\x02"))
	}
	f.Fuzz(func(t *testing.T, in, pattern []byte) {
		_, a := runGemini(formatGeminiArray, in, nil, true)
		_, b := runGemini(formatGeminiArray, in, pattern, true)
		if a.Content() != b.Content() || string(a.Meta.JSON()) != string(b.Meta.JSON()) || a.Terminal != b.Terminal {
			t.Fatalf("cut by %v: %q %s, whole %q %s", pattern, b.Content(), b.Meta.JSON(), a.Content(), a.Meta.JSON())
		}
		// The events the converter writes: a data line each, with no
		// line break inside.
		var out bytes.Buffer
		w := &geminiArray{w: NewRewriter(&out, StreamOptions{Protocol: FormatGemini}, nil)}
		w.Write(in)
		w.Close()
		for _, ev := range bytes.SplitAfter(out.Bytes(), []byte("\r\n\r\n")) {
			if len(ev) > 0 && (!bytes.HasPrefix(ev, []byte("data: ")) || bytes.ContainsAny(bytes.TrimSuffix(ev, []byte("\r\n\r\n")), "\r\n")) {
				t.Fatalf("event %q", ev)
			}
		}
	})
}
