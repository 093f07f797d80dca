package translate

import (
	"bytes"
	"io"
	"math/rand"
	"regexp"
	"testing"
	"time"

	"github.com/tidwall/sjson"
)

// writeOnly hides WriteMadeDeltas: the converter then writes every chunk
// through Write, to be split and read as any other event.
type writeOnly struct{ io.Writer }

// convertBothWays runs in through a converter of format f into a rewriter
// twice, once with the made text deltas handed over unread
// (WriteMadeDeltas) and once read as any event, in the same pieces.
func convertBothWays(t *testing.T, f Format, in []byte, pieces []int, setup func(*StreamOptions)) (fast, read string, fastRep, readRep *Reply, fastStats, readStats Stats) {
	t.Helper()
	run := func(hide bool, stats *Stats) (string, *Reply) {
		var out bytes.Buffer
		sse := StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Protocol: FormatSSE, Stats: stats, Chat: ChatOptions{Model: "m"}}
		setup(&sse)
		rw := NewRewriter(&out, sse, nil)
		conv := ConvertOptions{Model: "m", Created: 1, MaxLine: 1 << 20, HustleSummary: true, Reply: rw.Reply()}
		var dst io.Writer = rw
		if hide {
			dst = writeOnly{rw}
		}
		var c io.WriteCloser
		if f == FormatDataStream {
			c = NewDataStreamConverter(dst, conv)
		} else {
			c = NewUIStreamConverter(dst, conv)
		}
		rest := in
		for _, n := range pieces {
			n = min(n, len(rest))
			c.Write(rest[:n])
			rest = rest[n:]
		}
		c.Write(rest)
		c.Close()
		rw.Close()
		return generatedID.ReplaceAllString(out.String(), `"id":"chatcmpl-X"`), rw.Reply()
	}
	fast, fastRep = run(false, &fastStats)
	read, readRep = run(true, &readStats)
	return
}

// TestMadeDeltasSameAsRead: text deltas a converter hands the rewriter
// unread give the client the same bytes, and the record the same text,
// meta and counts, as when the rewriter reads them, whole or in pieces,
// for run-once (the text collected), timing and structured replies (which
// read every delta).
func TestMadeDeltasSameAsRead(t *testing.T) {
	dir := upstreamFixturesDir(t)
	inputs := []struct {
		f  Format
		in string
	}{
		{FormatDataStream, mixedStream},
		{FormatDataStream, string(loadUpstreamFixture(t, dir, "vercel-data-stream-v1-tool-call-deltas.txt"))},
		{FormatDataStream, "0:\"a\"\n0:\"b\"\n3:\"oops\"\n0:\"c\"\ng:\"r\"\nd:{\"finishReason\":\"stop\"}\n0:\"late\"\n"},
		{FormatUIStream, string(loadUpstreamFixture(t, dir, "vercel-ui-message-stream-v1-error.sse"))},
		{FormatUIStream, "data: {\"type\":\"start\",\"messageId\":\"m1\"}\n\ndata: {\"type\":\"text-delta\",\"id\":\"0\",\"delta\":\"Hel\"}\n\ndata: {\"type\":\"text-delta\",\"id\":\"0\",\"delta\":\"lo\"}\n\ndata: {\"type\":\"reasoning-delta\",\"id\":\"r\",\"delta\":\"hm\"}\n\ndata: {\"type\":\"finish\"}\n\ndata: [DONE]\n\n"},
		{FormatUIStream, "data: {\"type\":\"text-delta\",\"id\":\"0\",\"delta\":\"Hel\"}\n\ndata: {\"type\":\"text-delta\",\"id\":\"0\",\"delta\":\"lo\"}\n\ndata: {\"type\":\"error\",\"errorText\":\"boom\"}\n\n"},
	}
	setups := map[string]func(*StreamOptions){
		"plain": func(*StreamOptions) {},
		"run-once": func(o *StreamOptions) {
			o.Reply = &Reply{Asked: Asked{WantContent: true, MaxContent: 1 << 20}}
		},
		"timing":     func(o *StreamOptions) { o.Reply = &Reply{Asked: Asked{Timing: true, Start: time.Now()}} },
		"structured": func(o *StreamOptions) { o.Chat.Structured = NewReplyStream(1 << 20) },
	}
	rng := rand.New(rand.NewSource(1))
	for i, c := range inputs {
		for name, setup := range setups {
			for try := 0; try < 20; try++ {
				var pieces []int
				if try > 0 {
					for n := 0; n < len(c.in); {
						k := 1 + rng.Intn(64)
						pieces = append(pieces, k)
						n += k
					}
				}
				fast, read, fr, rr, fs, rs := convertBothWays(t, c.f, []byte(c.in), pieces, setup)
				// Each run's timing figures are its own clock readings: on a
				// loaded machine one run can take a millisecond more.
				fast, read = clockFree(fast), clockFree(read)
				if fast != read {
					t.Fatalf("input %d, %s, pieces %v: the client got\n%s\nwant\n%s", i, name, pieces, fast, read)
				}
				// timing's figures are the clock's; whether text was seen is
				// compared instead.
				fm, _ := sjson.DeleteBytes(fr.Meta.JSON(), "timing")
				rm, _ := sjson.DeleteBytes(rr.Meta.JSON(), "timing")
				if fr.Content() != rr.Content() || string(fm) != string(rm) || fs != rs || fr.firstText.IsZero() != rr.firstText.IsZero() {
					t.Fatalf("input %d, %s: record differs: text %q / %q, meta %s / %s, stats %+v / %+v",
						i, name, fr.Content(), rr.Content(), fr.Meta.JSON(), rr.Meta.JSON(), fs, rs)
				}
			}
		}
	}
}

// clockFigures are the numbers meta.timing gives (SPEC 9.3).
var clockFigures = regexp.MustCompile(`"(first_token_ms|total_ms)":[0-9]+`)

// clockFree is a client's stream with meta.timing's figures as "ms":0.
func clockFree(s string) string { return clockFigures.ReplaceAllString(s, `"$1":0`) }
