package translate

import (
	"bytes"
	"math/rand"
	"testing"
)

// hintCheck is a handler that, for every event, holds what the splitter
// read of its data on the way (Data) against what EventData reads in it.
type hintCheck struct {
	t           *testing.T
	s           *SSESplitter
	known, seen int
}

func (h *hintCheck) Event(raw []byte) {
	h.seen++
	data, ok, known := h.s.Data()
	if !known {
		return
	}
	h.known++
	want, wantOK, _ := EventData(raw, nil)
	if ok != wantOK || !bytes.Equal(data, want) {
		h.t.Fatalf("event %q: the splitter read data %q (ok %v), EventData %q (ok %v)", raw, data, ok, want, wantOK)
	}
}

func (h *hintCheck) Oversize([]byte, bool) {
	if _, _, known := h.s.Data(); known {
		h.t.Fatal("Data is known during Oversize")
	}
}

// The data the splitter reads on the way is what EventData reads, for
// every shape of event and line ending, whole or in any pieces; and for
// events that come whole it is there to read.
func TestSplitterDataSameAsEventData(t *testing.T) {
	lines := []string{
		"data: {\"a\":1}", "data:{\"a\":2}", "data:  two spaces", "data", "data:", "data: ",
		"datax: no", "dat", "event: message", ": comment", "id: 7", "\xEF\xBB\xBFdata: bom",
		"data: [DONE]", "retry: 10", "d",
	}
	eols := []string{"\n", "\r\n", "\r"}
	rng := rand.New(rand.NewSource(5))
	known := 0
	for n := 0; n < 3000; n++ {
		var in []byte
		for e := 1 + rng.Intn(4); e > 0; e-- {
			eol := eols[rng.Intn(len(eols))]
			for l := rng.Intn(4); l > 0; l-- {
				in = append(in, lines[rng.Intn(len(lines))]+eol...)
			}
			in = append(in, eol...)
		}
		s := &SSESplitter{Max: 8 + rng.Intn(64)}
		h := &hintCheck{t: t, s: s}
		if rng.Intn(2) == 0 {
			s.Feed(in, h)
		} else {
			for p := in; len(p) > 0; {
				k := 1 + rng.Intn(min(len(p), 9))
				s.Feed(p[:k], h)
				if s.data != nil {
					t.Fatalf("the splitter keeps a slice of the input after Feed")
				}
				p = p[k:]
			}
		}
		s.Close(h)
		known += h.known
	}
	if known < 1000 {
		t.Errorf("only %d events read on the way", known)
	}
	// Whole events of one data line, in one write: read on the way.
	s := &SSESplitter{Max: 1 << 10}
	h := &hintCheck{t: t, s: s}
	s.Feed([]byte("data: a\n\nevent: x\ndata: b\r\n\r\n: c\ndata\n\nid: 1\n\n"), h)
	if h.seen != 4 || h.known != 4 {
		t.Errorf("%d of %d events read on the way, want 4 of 4", h.known, h.seen)
	}
	// Two data lines are joined by EventData: not read on the way.
	h.seen, h.known = 0, 0
	s.Feed([]byte("data: a\ndata: b\n\n"), h)
	if h.seen != 1 || h.known != 0 {
		t.Errorf("an event of two data lines: %d of %d read on the way, want 0 of 1", h.known, h.seen)
	}
}
