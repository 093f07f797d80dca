package translate

import (
	"io"
	"testing"
	"time"
)

// The per-event pass-through path of every event protocol allocates
// nothing once the rewriter has warmed up: whole events, events split
// over two writes, the frequent events that carry no text, with the
// module's options (a shared record, timing on).
func TestProtocolPassthroughAllocs(t *testing.T) {
	protocols := []struct {
		name     string
		protocol Format
		warm     string   // what a stream starts with
		events   []string // typical events of its body
	}{
		{"chat", FormatSSE, roleEv() + contentEv("Hi"), []string{
			contentEv("Hello"), contentEv("a \"quoted\" word"), toolArgsEv(0, `{"q":`),
		}},
		{"responses", FormatResponses, rCreated + rFCAdded + rMsgAdd + rText1, []string{
			rText2, rFCArgs, rEv("response.output_text.delta", `,"sequence_number":9,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"more"`),
		}},
		{"anthropic", FormatAnthropic, aStart + aText0 + aTextDelta("0", "Hi"), []string{
			aTextDelta("0", "Hello"), aPing, aArgs1,
		}},
	}
	for _, p := range protocols {
		for _, timing := range []bool{false, true} {
			for i, e := range p.events {
				ev := []byte(e)
				half1, half2 := ev[:len(ev)/2], ev[len(ev)/2:]
				for name, write := range map[string]func(r *Rewriter){
					"whole": func(r *Rewriter) { r.Write(ev) },
					"split": func(r *Rewriter) { r.Write(half1); r.Write(half2) },
				} {
					rep := &Reply{Asked: Asked{Timing: timing, Start: time.Now()}}
					var out countWriter
					r := NewRewriter(&out, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Protocol: p.protocol, Reply: rep}, nil)
					io.WriteString(r, p.warm)
					write(r)
					if n := testing.AllocsPerRun(200, func() { write(r) }); n != 0 {
						t.Errorf("%s event %d %s (timing %v): %v allocations per Write", p.name, i, name, timing, n)
					}
					// Every event went through (AllocsPerRun runs once more).
					if want := len(p.warm) + 202*len(ev); out.n != want {
						t.Fatalf("%s event %d %s: %d bytes out, want %d", p.name, i, name, out.n, want)
					}
				}
			}
		}
	}
}

// countWriter counts the bytes written to it, without keeping them.
type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }
