package translate

import (
	"bytes"
	"strings"
	"testing"
)

// fuzzPieces cuts in into pieces whose sizes come from pattern (each byte
// gives 1 to 16; the pattern repeats). An empty pattern means at once.
func fuzzPieces(in, pattern []byte) [][]byte {
	if len(pattern) == 0 {
		return [][]byte{in}
	}
	var out [][]byte
	for i := 0; len(in) > 0; i++ {
		k := 1 + int(pattern[i%len(pattern)]&15)
		k = min(k, len(in))
		out = append(out, in[:k])
		in = in[k:]
	}
	return out
}

func addSSESeeds(f *testing.F, withLimit bool) {
	seeds := append([]string{}, splitterCorpus...)
	seeds = append(seeds,
		roleEv()+toolEv(0, "a")+toolArgsEv(0, "{}")+contentEv("x")+doneEv,
		ev(`{"meta":{"tools_used":["m"]}}`)+doneEv,
		ev(`{"error":{"message":"e"}}`),
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r",
	)
	for _, s := range seeds {
		for _, p := range []string{"", "\x00", "\x03\x01", "\x07\x00\x0f"} {
			if withLimit {
				f.Add([]byte(s), []byte(p), uint16(24))
				f.Add([]byte(s), []byte(p), uint16(0))
			} else {
				f.Add([]byte(s), []byte(p))
			}
		}
	}
}

// FuzzSSESplitter: any bytes, any chunking, any limit: every byte is handed
// on once and in order, the buffer never holds more than the limit, and the
// events are those of the whole input fed at once.
func FuzzSSESplitter(f *testing.F) {
	addSSESeeds(f, true)
	f.Fuzz(func(t *testing.T, in, pattern []byte, limit uint16) {
		max := int(limit)
		if max == 0 {
			max = len(in) + 1 // no event is oversize
		}
		s := &SSESplitter{Max: max}
		var h splitRec
		for _, p := range fuzzPieces(in, pattern) {
			s.Feed(p, &h)
			if len(s.buf) > max {
				t.Fatalf("buffer holds %d bytes, limit %d", len(s.buf), max)
			}
		}
		s.Close(&h)
		if got := h.all(); !bytes.Equal(got, in) {
			t.Fatalf("bytes handed on differ\n got %q\nwant %q", got, in)
		}
		evs, over := h.events(t)
		for i, e := range evs {
			if over[i] != (eventSize(e) > max) {
				t.Fatalf("event of %d bytes, limit %d: oversize=%v", eventSize(e), max, over[i])
			}
		}
		evs = normalizeSplitCRLF(evs)
		ref := wholeEvents(in)
		if len(evs) != len(ref) {
			t.Fatalf("%d events, whole input gives %d\n got %q\nwant %q", len(evs), len(ref), evs, ref)
		}
		for i := range ref {
			if !bytes.Equal(evs[i], ref[i]) {
				t.Fatalf("event %d = %q, whole input gives %q", i, evs[i], ref[i])
			}
		}
	})
}

// FuzzRewriterPassthrough: with nothing to say (no meta, no tool calls),
// the rewriter's output is its input, byte for byte, whatever the chunking
// and the limit; a chat stream cut short (SPEC 11.1) is its input followed
// by one final meta event that says so.
func FuzzRewriterPassthrough(f *testing.F) {
	addSSESeeds(f, true)
	f.Fuzz(func(t *testing.T, in, pattern []byte, limit uint16) {
		if bytes.Contains(in, []byte("meta")) || bytes.Contains(in, []byte("tool_calls")) || bytes.Contains(in, []byte("function_call")) {
			return
		}
		max := int(limit)
		if max == 0 {
			max = 1 << 20
		}
		var w recWriter
		r := NewRewriter(&w, StreamOptions{MaxEvent: max, FinalMeta: true}, nil)
		for _, p := range fuzzPieces(in, pattern) {
			if _, err := r.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		out, want := w.buf.Bytes(), withCRsCompleted(in, max)
		if r.Reply().Interrupted {
			rest, ok := bytes.CutPrefix(out, want)
			if !ok || bytes.Count(rest, []byte("data: ")) != 1 || !bytes.Contains(rest, []byte(`"meta":{"interrupted":true}`)) {
				t.Fatalf("cut short: output is not the input and one meta event\n got %q\n  in %q", out, want)
			}
			return
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("output differs\n got %q\nwant %q", out, want)
		}
	})
}

// FuzzRewriterToolCalls: with tool calls but no upstream meta, the output
// is the input plus at most one final meta event, set apart by the line
// ends that close an unterminated last event; the meta event is one line,
// a valid chunk.
func FuzzRewriterToolCalls(f *testing.F) {
	addSSESeeds(f, false)
	f.Add([]byte(toolEv(0, "a")[:40]+toolEv(1, "b")), []byte("\x02"))
	f.Add([]byte(`data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"x"}}]}}]}`), []byte{})
	f.Fuzz(func(t *testing.T, in, pattern []byte) {
		if bytes.Contains(in, []byte("meta")) {
			return
		}
		var w recWriter
		r := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true}, nil)
		for _, p := range fuzzPieces(in, pattern) {
			r.Write(p)
		}
		r.Close()
		out := w.buf.String()
		metas, rest := cutMetaEvents(t, out)
		if len(metas) > 1 {
			t.Fatalf("%d meta events", len(metas))
		}
		want := string(withCRsCompleted(in, 1<<20))
		if len(metas) == 0 {
			if out != want {
				t.Fatalf("no meta event, but the output differs\n got %q\nwant %q", out, want)
			}
			if !r.Reply().Meta.Empty() {
				t.Fatalf("meta %s collected but not written", r.Reply().Meta.JSON())
			}
			return
		}
		eol := streamEOL(in)
		metaEventDataEOL(t, metas[0], eol)
		// Besides the meta event, only the line ends that close an
		// unterminated upstream event (in the stream's line ending, after
		// the LF of a CR last) may have been added, right before it.
		before, after, _ := strings.Cut(out, metas[0])
		for _, term := range []string{"", eol, eol + eol, "\n", "\n" + eol} {
			if strings.HasSuffix(before, term) && strings.TrimSuffix(before, term)+after == want {
				prev := strings.TrimSuffix(before, term)
				if term != "" && term[0] == '\n' && eol != "\n" && !strings.HasSuffix(prev, "\r") {
					continue // not a CR's LF: another term may fit
				}
				if term != "" && (strings.HasSuffix(prev, "\n\n") || strings.HasSuffix(prev, "\r\n\r\n") || prev == "") {
					t.Fatalf("added %q after an event that was already terminated\n%q", term, out)
				}
				return
			}
		}
		t.Fatalf("output minus the meta event is not the input\n got %q\nwant %q", rest, want)
	})
}
