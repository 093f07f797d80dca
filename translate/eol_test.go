package translate

import (
	"bytes"
	"math/rand"
	"testing"
)

// eolFinder.next must agree with the byte-at-a-time IndexAny it replaces,
// for the increasing start positions the splitter and EventData use.
func checkEOL(t *testing.T, b []byte, steps []int) {
	t.Helper()
	f := eolFinder{b: b, nl: -2}
	i := 0
	for _, step := range steps {
		if i >= len(b) {
			return
		}
		want := bytes.IndexAny(b[i:], "\r\n")
		if want >= 0 {
			want += i
		}
		if got := f.next(i); got != want {
			t.Fatalf("next(%d) on %q = %d, want %d", i, b, got, want)
		}
		if want < 0 {
			return
		}
		// Move on past the line end, or by a small random step (never back).
		if step%2 == 0 {
			i = want + 1
		} else {
			i += 1 + step%3
		}
	}
}

func TestEOLFinder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("ab\r\n:")
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		steps := make([]int, 50)
		for i := range steps {
			steps[i] = rng.Intn(6)
		}
		checkEOL(t, b, steps)
	}
}

func FuzzEOLFinder(f *testing.F) {
	f.Add([]byte("data: x\r\n\r\nb\rc\n"), []byte{0, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b, s []byte) {
		steps := make([]int, len(s)+len(b))
		for i := range steps {
			if i < len(s) {
				steps[i] = int(s[i])
			}
		}
		checkEOL(t, b, steps)
	})
}
