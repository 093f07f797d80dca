package translate

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unsafe"
)

// splitItem is one call an SSESplitter made on its handler.
type splitItem struct {
	raw      []byte
	oversize bool
	first    bool
}

// splitRec records what a splitter hands on, copying the bytes (they are
// only valid during the call).
type splitRec struct {
	items []splitItem
	// in, when set, is the caller's current buffer: events handed over
	// without a copy lie inside it.
	in      []byte
	aliased int
}

func (h *splitRec) Event(raw []byte) {
	if h.in != nil && within(h.in, raw) {
		h.aliased++
	}
	h.items = append(h.items, splitItem{raw: bytes.Clone(raw)})
}

func (h *splitRec) Oversize(p []byte, first bool) {
	h.items = append(h.items, splitItem{raw: bytes.Clone(p), oversize: true, first: first})
}

// all is every byte handed on, in order.
func (h *splitRec) all() []byte {
	var b []byte
	for _, it := range h.items {
		b = append(b, it.raw...)
	}
	return b
}

// events returns the raw events, each oversize event's pieces joined into
// one, and whether each was oversize.
func (h *splitRec) events(t *testing.T) (evs [][]byte, over []bool) {
	t.Helper()
	for i, it := range h.items {
		switch {
		case !it.oversize:
			evs = append(evs, it.raw)
			over = append(over, false)
		case it.first:
			evs = append(evs, bytes.Clone(it.raw))
			over = append(over, true)
		default:
			if i == 0 || !h.items[i-1].oversize {
				t.Fatalf("oversize piece %d with first=false does not follow a piece of its event", i)
			}
			evs[len(evs)-1] = append(evs[len(evs)-1], it.raw...)
		}
	}
	return evs, over
}

// normalizeSplitCRLF undoes the one way chunking changes event boundaries:
// when a blank line ends in CR at the end of a Feed, the event is handed on
// at once and the LF of that CRLF, read in the next Feed, starts the next
// event's bytes. Moving it back gives the events of the whole input.
func normalizeSplitCRLF(evs [][]byte) [][]byte {
	var out [][]byte
	for _, e := range evs {
		if n := len(out); n > 0 && len(e) > 0 && e[0] == '\n' {
			if prev := out[n-1]; len(prev) > 0 && prev[len(prev)-1] == '\r' {
				out[n-1] = append(prev[:len(prev):len(prev)], '\n')
				e = e[1:]
				if len(e) == 0 {
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// feedSplitter feeds in to s in pieces of n bytes (n <= 0: at once), each
// through a buffer that is overwritten after the Feed, then closes s.
func feedSplitter(s *SSESplitter, h *splitRec, in []byte, n int, check func()) {
	feedSplitterSizes(s, h, in, func() int { return n }, check)
}

func feedSplitterSizes(s *SSESplitter, h *splitRec, in []byte, size func() int, check func()) {
	buf := make([]byte, len(in))
	for len(in) > 0 {
		k := size()
		if k <= 0 || k > len(in) {
			k = len(in)
		}
		p := buf[:k]
		copy(p, in[:k])
		h.in = p
		s.Feed(p, h)
		h.in = nil
		for i := range p {
			p[i] = 0xA5 // the caller reuses its buffer
		}
		if check != nil {
			check()
		}
		in = in[k:]
	}
	s.Close(h)
}

// wholeEvents is the reference: the events of the whole input fed at once
// to a splitter with no practical limit.
func wholeEvents(in []byte) [][]byte {
	var h splitRec
	s := &SSESplitter{Max: len(in) + 1}
	s.Feed(in, &h)
	s.Close(&h)
	var evs [][]byte
	for _, it := range h.items {
		evs = append(evs, it.raw)
	}
	return evs
}

func chunkSizes() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7} }

func chunkName(n int) string {
	if n == 0 {
		return "whole"
	}
	return fmt.Sprintf("%d-byte", n)
}

var splitterCorpus = []string{
	"data: a\n\ndata: b\n\n",
	"data: a\r\n\r\ndata: b\r\n\r\n",
	"data: a\r\rdata: b\r\r",
	"data: a\r\n\ndata: b\n\r\ndata: c\r\r\ndata: d\n\r",
	": keep-alive\n\nid: 1\nevent: message\ndata: {\"x\":1}\n\ndata:{\"y\":2}\n\n: still here\n\ndata: [DONE]\n\n",
	"data: one\ndata: two\r\ndata: three\rdata:\n\n",
	"\n\n\r\n\rdata: after blank lines\n\n",
	"\xEF\xBB\xBFdata: bom\n\ndata: x\n\n",
	"data: unterminated",
	"data: unterminated line\n",
	"data: ends in CR\r\n\r",
	"data: x\n\n\n\n",
	"",
	"no newline at all and quite long compared with a small limit",
	"data: " + strings.Repeat("L", 100) + "\n\ndata: s\n\n" + strings.Repeat("M", 80) + "\r\n\r\ndata: t\r\rdata: " + strings.Repeat("N", 70),
}

func TestSSESplitterEvents(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"data: a\n\ndata: b\n\n", []string{"data: a\n\n", "data: b\n\n"}},
		{"data: a\r\n\r\ndata: b\r\n\r\n", []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}},
		{"data: a\r\rdata: b\r\r", []string{"data: a\r\r", "data: b\r\r"}},
		{"data: a\r\n\ndata: b\n\r\ndata: c\r\r\n", []string{"data: a\r\n\n", "data: b\n\r\n", "data: c\r\r\n"}},
		{": ping\n\ndata: x\n\n", []string{": ping\n\n", "data: x\n\n"}},
		{"\n\r\n\rdata: x\n\n", []string{"\n", "\r\n", "\r", "data: x\n\n"}},
		{"event: e\nid: 7\ndata: a\ndata: b\n\n", []string{"event: e\nid: 7\ndata: a\ndata: b\n\n"}},
		{"data: a\n\ndata: tail", []string{"data: a\n\n", "data: tail"}},
		{"data: a\n\ndata: tail\n", []string{"data: a\n\n", "data: tail\n"}},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			var h splitRec
			feedSplitter(&SSESplitter{Max: 1 << 20}, &h, []byte(c.in), n, nil)
			evs, _ := h.events(t)
			evs = normalizeSplitCRLF(evs)
			got := make([]string, len(evs))
			for i, e := range evs {
				got[i] = string(e)
			}
			if !equalStrings(got, c.want) {
				t.Errorf("%q %s: events %q, want %q", c.in, chunkName(n), got, c.want)
			}
		}
	}
}

// A CRLF split across two Feeds is one line end: no phantom blank line.
func TestSSESplitterCRLFAcrossFeeds(t *testing.T) {
	type step struct {
		feed string
		want []string // events handed on during this Feed
	}
	cases := [][]step{
		// CR ends a data line: the LF that follows belongs to it.
		{{"data: a\r", nil}, {"\n", nil}, {"\r\n", []string{"data: a\r\n\r\n"}}},
		// CR ends the blank line: the event goes at once, without waiting
		// for the next byte; the LF that follows is not a second blank line.
		{{"data: a\r\n\r", []string{"data: a\r\n\r"}}, {"\n", nil}, {"data: b\r\n\r\n", []string{"\ndata: b\r\n\r\n"}}},
		{{"data: a\r", nil}, {"\r", []string{"data: a\r\r"}}, {"\n", nil}, {"\n", []string{"\n\n"}}},
		// A CR then another CR: two line ends.
		{{"data: a\r", nil}, {"\rdata: b\n\n", []string{"data: a\r\r", "data: b\n\n"}}},
	}
	for i, steps := range cases {
		s := &SSESplitter{Max: 1 << 10}
		var h splitRec
		for _, st := range steps {
			before := len(h.items)
			s.Feed([]byte(st.feed), &h)
			var got []string
			for _, it := range h.items[before:] {
				got = append(got, string(it.raw))
			}
			if !equalStrings(got, st.want) {
				t.Fatalf("case %d, Feed(%q): events %q, want %q", i, st.feed, got, st.want)
			}
		}
	}
}

func TestSSESplitterClose(t *testing.T) {
	s := &SSESplitter{Max: 64}
	var h splitRec
	s.Feed([]byte("data: a\n\ndata: b"), &h)
	if len(s.buf) == 0 {
		t.Fatal("nothing pending with a partial event")
	}
	s.Close(&h)
	if len(h.items) != 2 || string(h.items[1].raw) != "data: b" || h.items[1].oversize {
		t.Fatalf("items %+v", h.items)
	}
	if s.Close(&h); len(s.buf) != 0 || len(h.items) != 2 {
		t.Fatal("Close did not reset the splitter")
	}
	// Reusable after Close, with no state left over (not even a CR).
	s.Feed([]byte("data: c\r"), &h)
	s.Close(&h)
	h.items = nil
	s.Feed([]byte("\ndata: d\n\n"), &h)
	// "\n" starts a fresh stream: it is a blank line of its own, not the
	// second half of the CRLF the previous stream ended with.
	if len(h.items) != 2 || string(h.items[0].raw) != "\n" || string(h.items[1].raw) != "data: d\n\n" {
		t.Fatalf("after Close: %+v", h.items)
	}
	// Nothing pending: Close hands on nothing.
	var h2 splitRec
	s2 := &SSESplitter{Max: 64}
	s2.Feed([]byte("data: a\n\n"), &h2)
	if s2.Close(&h2); len(h2.items) != 1 {
		t.Fatal("Close with nothing pending")
	}
}

func TestSSESplitterZeroCopy(t *testing.T) {
	s := &SSESplitter{Max: 1 << 10}
	var h splitRec
	in := []byte("data: a\n\ndata: b\n\n: c\n\n")
	h.in = in
	s.Feed(in, &h)
	if len(h.items) != 3 || h.aliased != 3 {
		t.Fatalf("%d events, %d handed over without a copy", len(h.items), h.aliased)
	}
}

// eventSize is the size of an event the splitter compares with its Max:
// the LF of a CRLF that ends its blank line is not counted (it may come in
// the next write).
func eventSize(e []byte) int {
	if n := len(e); bytes.HasSuffix(e, []byte("\r\n")) && (n == 2 || e[n-3] == '\n' || e[n-3] == '\r') {
		return n - 1
	}
	return len(e)
}

// Whatever the chunking, every byte is handed on once, in order, and the
// events are those of the whole input.
func TestSSESplitterChunkingInvariant(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for ci, c := range splitterCorpus {
		in := []byte(c)
		ref := wholeEvents(in)
		for _, max := range []int{1 << 20, 64, 16, 1} {
			run := func(name string, size func() int) {
				s := &SSESplitter{Max: max}
				var h splitRec
				feedSplitterSizes(s, &h, in, size, func() {
					if len(s.buf) > max {
						t.Fatalf("corpus %d max %d %s: buffer holds %d bytes", ci, max, name, len(s.buf))
					}
				})
				if got := h.all(); !bytes.Equal(got, in) {
					t.Fatalf("corpus %d max %d %s: bytes handed on\n got %q\nwant %q", ci, max, name, got, in)
				}
				evs, over := h.events(t)
				for i, e := range evs {
					if over[i] != (eventSize(e) > max) {
						t.Fatalf("corpus %d max %d %s: event %q (%d bytes) oversize=%v", ci, max, name, e, len(e), over[i])
					}
				}
				evs = normalizeSplitCRLF(evs)
				if len(evs) != len(ref) {
					t.Fatalf("corpus %d max %d %s: %d events, want %d\n got %q\nwant %q", ci, max, name, len(evs), len(ref), evs, ref)
				}
				for i := range evs {
					if !bytes.Equal(evs[i], ref[i]) {
						t.Fatalf("corpus %d max %d %s: event %d = %q, want %q", ci, max, name, i, evs[i], ref[i])
					}
				}
			}
			for _, n := range chunkSizes() {
				n := n
				run(chunkName(n), func() int { return n })
			}
			for r := 0; r < 20; r++ {
				run("random", func() int { return 1 + rng.Intn(24) })
			}
		}
	}
}

func TestSSESplitterLimitBoundary(t *testing.T) {
	const max = 32
	exact := "data: " + strings.Repeat("x", max-8) + "\n\n" // max bytes
	if len(exact) != max {
		t.Fatal(len(exact))
	}
	over := "data: " + strings.Repeat("x", max-7) + "\n\n"
	for _, n := range chunkSizes() {
		var h splitRec
		feedSplitter(&SSESplitter{Max: max}, &h, []byte(exact+over+exact), n, nil)
		evs, ov := h.events(t)
		if len(evs) != 3 || ov[0] || !ov[1] || ov[2] {
			t.Fatalf("%s: oversize flags %v for %q", chunkName(n), ov, evs)
		}
		if string(evs[0]) != exact || string(evs[1]) != over || string(evs[2]) != exact {
			t.Fatalf("%s: events %q", chunkName(n), evs)
		}
		firsts := 0
		for _, it := range h.items {
			if it.first {
				firsts++
			}
		}
		if firsts != 1 {
			t.Fatalf("%s: %d pieces with first=true, want 1", chunkName(n), firsts)
		}
	}
}

// An oversize event is handed on as it arrives and the splitter's memory
// stays bounded by Max, whatever the event's size.
func TestSSESplitterOversizeMemoryBounded(t *testing.T) {
	const max = 1 << 20
	const total = 10 << 20
	const feed = 64 << 10
	s := &SSESplitter{Max: max}
	var h countHandler
	buf := make([]byte, feed)
	copy(buf, "data: ")
	sent := 0
	maxLen, maxCap := 0, 0
	for sent < total {
		p := buf
		if sent > 0 {
			for i := range p {
				p[i] = 'a' + byte((sent+i)%26)
			}
		}
		s.Feed(p, &h)
		sent += len(p)
		maxLen = max2(maxLen, len(s.buf))
		maxCap = max2(maxCap, cap(s.buf))
	}
	s.Feed([]byte("\n\ndata: small\n\n"), &h)
	sent += len("\n\ndata: small\n\n")
	if h.bytes != sent {
		t.Fatalf("handed on %d bytes of %d", h.bytes, sent)
	}
	if h.firsts != 1 || h.events != 1 {
		t.Fatalf("firsts=%d events=%d", h.firsts, h.events)
	}
	// len never passes Max; cap is what append made of at most Max bytes.
	if maxLen > max || maxCap > 2*max {
		t.Fatalf("buffer grew to len %d cap %d (max %d, feed %d)", maxLen, maxCap, max, feed)
	}
	if len(s.buf) != 0 {
		t.Fatal("pending after the last event")
	}
}

type countHandler struct {
	bytes, events, firsts, pieces int
}

func (h *countHandler) Event(raw []byte) { h.bytes += len(raw); h.events++ }
func (h *countHandler) Oversize(p []byte, first bool) {
	h.bytes += len(p)
	h.pieces++
	if first {
		h.firsts++
	}
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func TestEventData(t *testing.T) {
	cases := []struct {
		raw  string
		data string
		ok   bool
	}{
		{"data: x\n\n", "x", true},
		{"data:x\n\n", "x", true},
		{"data:  x\n\n", " x", true},
		{"data: x \n\n", "x ", true},
		{"data\n\n", "", true},
		{"data:\n\n", "", true},
		{"data: a\ndata: b\r\ndata: c\rdata:\n\n", "a\nb\nc\n", true},
		{"data: {\"a\":\ndata: 1}\n\n", "{\"a\":\n1}", true},
		{": comment\ndata: y\n: another\n\n", "y", true},
		{": data: no\n\n", "", false},
		{"event: e\nid: 1\nretry: 5\n\n", "", false},
		{"datax: y\n\n", "", false},
		{"Data: y\n\n", "", false},
		{"data : y\n\n", "", false},
		{" data: y\n\n", "", false},
		{"dat\n\n", "", false},
		{"\xEF\xBB\xBFdata: bom\n\n", "bom", true},
		{"data: [DONE]\r\n\r\n", "[DONE]", true},
		{"data: [DONE]\r\r", "[DONE]", true},
		{"data: no terminator", "no terminator", true},
		{"\ndata: after a leading LF\n\n", "after a leading LF", true},
		{"data: a:b: c\n\n", "a:b: c", true},
		{"", "", false},
	}
	for _, c := range cases {
		data, ok, _ := EventData([]byte(c.raw), nil)
		if ok != c.ok || string(data) != c.data {
			t.Errorf("EventData(%q) = %q, %v; want %q, %v", c.raw, data, ok, c.data, c.ok)
		}
	}
}

// within reports whether b lies inside outer's memory: the tests' check
// that bytes are handed on without a copy (the code itself passes offsets).
func within(outer, b []byte) bool {
	if len(outer) == 0 || len(b) == 0 {
		return false
	}
	o := uintptr(unsafe.Pointer(&outer[0]))
	x := uintptr(unsafe.Pointer(&b[0]))
	return x >= o && x+uintptr(len(b)) <= o+uintptr(len(outer))
}

// TestEventDataOffset: eventData says where a single data line's value
// lies in the event, and -1 when the data was joined.
func TestEventDataOffset(t *testing.T) {
	for _, raw := range []string{
		"data: x\n\n", "data:x\r\n\r\n", "\xEF\xBB\xBFdata: bom\n\n", "event: e\r: c\ndata:  two spaces\n\n",
		"id: 1\ndata\n\n", "data: last", "data: a\ndata: b\n\n", "event: none\n\n",
	} {
		b := []byte(raw)
		data, at, ok, _ := eventData(b, nil)
		single := ok && within(b, data) || ok && len(data) == 0 && at >= 0
		switch {
		case at >= 0 && (!ok || at+len(data) > len(b) || len(data) > 0 && &b[at] != &data[0]):
			t.Errorf("%q: at %d, data %q", raw, at, data)
		case at < 0 && single:
			t.Errorf("%q: a single data line without its offset", raw)
		}
	}
}

func TestEventDataBuffers(t *testing.T) {
	raw := []byte("event: x\ndata: single\n\n")
	data, ok, _ := EventData(raw, nil)
	if !ok || !within(raw, data) {
		t.Fatal("single data line must alias raw")
	}
	scratch := make([]byte, 0, 64)
	raw = []byte("data: a\ndata: b\n\n")
	data, ok, sc := EventData(raw, scratch)
	if !ok || string(data) != "a\nb" {
		t.Fatalf("%q", data)
	}
	if unsafe.SliceData(sc) != unsafe.SliceData(scratch) || !within(sc[:cap(sc)], data) {
		t.Fatal("multi-line data not built in the scratch buffer handed in")
	}
	// Reusing the scratch buffer.
	data, _, sc2 := EventData([]byte("data: c\ndata: d\ndata: e\n\n"), sc)
	if string(data) != "c\nd\ne" || unsafe.SliceData(sc2) != unsafe.SliceData(scratch) {
		t.Fatalf("reuse: %q", data)
	}
}

// Every event a stream hands to EventData after splitting gives the same data
// whatever the chunking (the data is what the rewriter inspects).
func TestSSESplitterEventDataStable(t *testing.T) {
	for _, c := range splitterCorpus {
		var want []string
		for _, e := range wholeEvents([]byte(c)) {
			if d, ok, _ := EventData(e, nil); ok {
				want = append(want, string(d))
			}
		}
		for _, n := range chunkSizes() {
			var h splitRec
			feedSplitter(&SSESplitter{Max: 1 << 20}, &h, []byte(c), n, nil)
			var got []string
			for _, it := range h.items {
				if d, ok, _ := EventData(it.raw, nil); ok {
					got = append(got, string(d))
				}
			}
			if !equalStrings(got, want) {
				t.Fatalf("%q %s: data %q, want %q", c, chunkName(n), got, want)
			}
		}
	}
}
