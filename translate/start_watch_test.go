package translate

import (
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// startWatch must never miss the write at which looking at the held bytes
// first decides the format: for random bodies cut into random writes, the
// first write after which the held bytes decide is one startWatch asks to
// look at.
func TestStartWatchNeverMissesTheDecision(t *testing.T) {
	rng := rand.New(rand.NewSource(int64(seedFor(t))))
	pieces := []string{"\n", "\r", "\r\n", "0:", `"x"`, "data: ", `{"type":"start"}`, "d", "a", ":", "\xEF\xBB\xBF", " ", "event: e", "{}"}
	for n := 0; n < 20000; n++ {
		var body strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			body.WriteString(pieces[rng.Intn(len(pieces))])
		}
		b := body.String()
		for _, f := range []Format{FormatSniffPlain, FormatSniffEvents} {
			var w startWatch
			held := 0
			for held < len(b) {
				step := 1 + rng.Intn(4)
				p := b[held:min(len(b), held+step)]
				held += len(p)
				look := w.worth([]byte(p), f == FormatSniffEvents)
				if _, decided := detectStart(f, []byte(b[:held]), 1<<20, false, true); decided {
					if !look {
						t.Fatalf("format %v, body %q: decided after %d bytes, but startWatch did not ask to look", f, b, held)
					}
					break
				}
			}
		}
	}
}

// However the first event comes, the held bytes are looked at a few times
// in all, not once per write.
func TestStartWatchLooksAFewTimes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write string
		n     int
		f     Format
	}{
		{"a long first line, a byte at a time", "x", 100000, FormatSniffEvents},
		{"many lines of one event, one per write", "data: x\n", 20000, FormatSniffEvents},
		{"blank lines before a plain text", "\n", 100000, FormatSniffPlain},
		{"CRLF lines, one per write", "id: 1\r\n", 20000, FormatSniffEvents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w startWatch
			looks := 0
			for i := 0; i < tc.n; i++ {
				if w.worth([]byte(tc.write), tc.f == FormatSniffEvents) {
					looks++
				}
			}
			if looks > 12 {
				t.Fatalf("%d looks over %d writes", looks, tc.n)
			}
		})
	}
}

// seedFor is a fixed seed, or LLM_META_SEED's when set (to look further).
func seedFor(t *testing.T) int {
	if s, err := strconv.Atoi(os.Getenv("LLM_META_SEED")); err == nil {
		t.Logf("seed %d", s)
		return s
	}
	return 16
}
