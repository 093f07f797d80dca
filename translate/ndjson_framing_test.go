package translate

import (
	"bytes"
	"testing"
)

// TestNDJSONFraming runs the test's lines protocol (RegisterLines) over
// bodies that exercise its framing, whole and in pieces of 1 to 7 bytes.
func TestNDJSONFraming(t *testing.T) {
	RegisterLines()
	cases := []struct {
		name, in, want string
		max            int
	}{{
		name: "a BOM passes, the first line is read without it",
		in:   "\xEF\xBB\xBF{\"tool\":\"a\",\"done\":true}\n",
		want: "\xEF\xBB\xBF{\"tool\":\"a\",\"done\":true,\"meta\":{\"tools_used\":[\"a\"]}}\n",
	}, {
		name: "cut short: the protocol's error line after an LF the module adds",
		in:   "{\"tool\":\"a\"}\n{\"tool\":\"b\"}",
		want: "{\"tool\":\"a\"}\n{\"tool\":\"b\"}\n{\"error\":\"cut\"}\n",
	}, {
		name: "a lone CR ends no line; blank lines and non-objects pass unread",
		in:   "{\"tool\":\"a\"}\r{\"tool\":\"x\"}\n\n[1]\n{\"done\":true}\n",
		want: "{\"tool\":\"a\"}\r{\"tool\":\"x\"}\n\n[1]\n{\"done\":true,\"meta\":{\"tools_used\":[\"a\"]}}\n",
	}, {
		name: "a line too long passes unread, and the stream is never called cut short",
		in:   "{\"tool\":\"a\"}\n{\"tool\":\"long-long-long\"}\n",
		want: "{\"tool\":\"a\"}\n{\"tool\":\"long-long-long\"}\n",
		max:  20,
	}}
	for _, c := range cases {
		for piece := 0; piece <= 7; piece++ {
			var out bytes.Buffer
			var stats Stats
			max := c.max
			if max == 0 {
				max = 1 << 20
			}
			r := NewRewriter(&out, StreamOptions{MaxEvent: max, FinalMeta: true, MarkInterrupted: true, Protocol: formatLines, Stats: &stats}, nil)
			writePieces(t, r, c.in, piece)
			if out.String() != c.want {
				t.Errorf("%s, pieces of %d: got  %q\nwant %q", c.name, piece, out.String(), c.want)
			}
			if c.max > 0 && (stats.Oversize != 1 || r.Reply().Interrupted) {
				t.Errorf("%s, pieces of %d: oversize %d, interrupted %v", c.name, piece, stats.Oversize, r.Reply().Interrupted)
			}
		}
	}
}

func writePieces(t *testing.T, r *Rewriter, in string, piece int) {
	t.Helper()
	for rest := in; rest != ""; {
		n := len(rest)
		if piece > 0 {
			n = min(n, piece)
		}
		if _, err := r.Write([]byte(rest[:n])); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// FuzzNDJSONFraming holds the NDJSON framing to what SPEC 4.7 asks of any
// body: without final_meta every byte passes as it came; with it, what
// comes out does not depend on how the writes cut the body, and is the
// body itself when it has no terminal line.
func FuzzNDJSONFraming(f *testing.F) {
	f.Add([]byte("{\"tool\":\"a\"}\n{\"meta\":{\"x\":1}}\n{\"done\":true}\r\n{}\n"), uint8(3), uint8(40))
	f.Add([]byte("\xEF\xBB\xBF{\"done\":true,\"meta\":1}"), uint8(1), uint8(8))
	f.Add([]byte("{\"tool\":\"\u2028\"}\r{\"done\":true}\n\n"), uint8(2), uint8(0))
	f.Add([]byte("\xEF\xBB\xBF{\"tool\":\"a\",\"done\":true}\r\n"), uint8(2), uint8(23))
	f.Fuzz(func(t *testing.T, body []byte, piece, max uint8) {
		RegisterLines()
		run := func(finalMeta bool, piece int) (string, *Reply) {
			var out bytes.Buffer
			r := NewRewriter(&out, StreamOptions{MaxEvent: int(max) + 1, FinalMeta: finalMeta, Protocol: formatLines}, nil)
			writePieces(t, r, string(body), piece)
			return out.String(), r.Reply()
		}
		n := int(piece%7) + 1
		if got, _ := run(false, n); got != string(body) {
			t.Fatalf("final_meta off, pieces of %d: got %q", n, got)
		}
		whole, rep := run(true, 0)
		if got, _ := run(true, n); got != whole {
			t.Fatalf("pieces of %d: got %q, whole %q", n, got, whole)
		}
		if !rep.Terminal && !bytes.Contains(body, []byte(`"meta"`)) && whole != string(body) {
			t.Fatalf("no terminal line: got %q", whole)
		}
	})
}
