package translate

import (
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"
)

// The reply record: its text for run-once, its error, and meta.timing
// (SPEC 9.3).

// timingOf reads meta.timing from a meta object's JSON: total_ms, and
// first_token_ms when present.
func timingOf(t *testing.T, name string, meta []byte) (first, total int64, hasFirst bool) {
	t.Helper()
	var m struct {
		Timing *map[string]json.Number `json:"timing"`
	}
	if err := json.Unmarshal(meta, &m); err != nil || m.Timing == nil {
		t.Fatalf("%s: no timing in meta %s (%v)", name, meta, err)
	}
	tm := *m.Timing
	for k := range tm {
		if k != "total_ms" && k != "first_token_ms" {
			t.Fatalf("%s: timing key %q in %s", name, k, meta)
		}
	}
	total, err := tm["total_ms"].Int64()
	if err != nil || total < 0 {
		t.Fatalf("%s: total_ms %q in %s", name, tm["total_ms"], meta)
	}
	if f, ok := tm["first_token_ms"]; ok {
		first, err = f.Int64()
		if err != nil || first < 0 || first > total {
			t.Fatalf("%s: first_token_ms %q, total %d", name, f, total)
		}
		return first, total, true
	}
	return 0, total, false
}

func timed() *Reply { return &Reply{Asked: Asked{Timing: true, Start: time.Now()}} }

// Every protocol's stream gets meta.timing: total_ms always,
// first_token_ms only when reply text went by.
func TestTimingInStreams(t *testing.T) {
	term := rEv("response.completed", `,"response":{"id":"r","output":[]}`)
	cases := []struct {
		name      string
		in        string
		protocol  Format
		metaData  string // JSON path of the meta in the last event's data
		wantFirst bool
	}{
		{"chat with text", roleEv() + contentEv("Hi") + doneEv, FormatSSE, "meta", true},
		{"chat without text", roleEv() + toolEv(0, "f") + finishChunkEv("tool_calls") + doneEv, FormatSSE, "meta", false},
		{"chat nothing else to say", finishChunkEv("stop") + doneEv, FormatSSE, "meta", false},
		{"responses with text", rText1 + term, FormatResponses, "response.meta", true},
		{"responses without text", rFCAdded + term, FormatResponses, "response.meta", false},
		{"anthropic with text", aStart + aText0 + aTextDelta("0", "Hi") + aStopEv, FormatAnthropic, "meta", true},
		{"anthropic without text", aStart + aTool1 + aArgs1 + aStopEv, FormatAnthropic, "meta", false},
	}
	for _, c := range cases {
		runPieces(t, c.in, func() StreamOptions {
			return StreamOptions{FinalMeta: true, Protocol: c.protocol, Reply: timed()}
		}, func(p pieceRun) {
			data := lastEventData(t, p.out)
			if c.protocol == FormatSSE {
				// The final meta event comes before [DONE].
				evs := wholeEvents([]byte(p.out))
				d, _, _ := EventData(evs[len(evs)-2], nil)
				data = string(d)
			}
			meta := metaAt(t, data, c.metaData)
			if _, _, hasFirst := timingOf(t, c.name+" "+p.name, meta); hasFirst != c.wantFirst {
				t.Fatalf("%s %s: first_token_ms present %v, want %v: %s", c.name, p.name, hasFirst, c.wantFirst, meta)
			}
		})
	}
	// A converted stream: the first content chunk counts.
	rep := timed()
	var w recWriter
	rw := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}, nil)
	conv := NewDataStreamConverter(rw, ConvertOptions{Reply: rep, MaxLine: 1 << 20})
	io.WriteString(conv, "0:\"Hi\"\nd:{\"finishReason\":\"stop\"}\n")
	conv.Close()
	if _, _, hasFirst := timingOf(t, "data stream", rep.Meta.JSON()); !hasFirst {
		t.Fatalf("data stream: no first_token_ms in %s", rep.Meta.JSON())
	}
}

// metaAt returns the JSON value at a dotted path of data.
func metaAt(t *testing.T, data, path string) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("not JSON: %q", data)
	}
	for _, k := range splitPath(path) {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("no %s in %s", path, data)
		}
		v = m[k]
	}
	b, _ := json.Marshal(v)
	return b
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return out
}

// A JSON reply gets meta.timing (total_ms only): with timing on, no reply
// is byte-identical (SPEC 9.3), even one with nothing else to say.
func TestTimingInJSONReplies(t *testing.T) {
	for _, body := range []string{
		`{"id":"c","choices":[{"message":{"role":"assistant","content":"Hi"}}]}`,
		`{"id":"c","choices":[{"message":{"content":"Hi","tool_calls":[{"function":{"name":"f"}}]}}]}`,
		`{"object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"Hi"}]}]}`,
		`{"type":"message","content":[{"type":"text","text":"Hi"}]}`,
	} {
		out, _, ok := RewriteJSONReply([]byte(body), nil, JSONOptions{Reply: timed()})
		if !ok {
			t.Fatalf("%s: not read", body)
		}
		name := body
		if _, _, hasFirst := timingOf(t, name, metaAt(t, string(out), "meta")); hasFirst {
			t.Fatalf("%s: first_token_ms in a JSON reply: %s", body, out)
		}
	}
}

// Run-once text: AddText collects only when asked, NextPart joins parts
// with "\n" (never before the first text, never for empty text), and
// MaxContent bounds it.
func TestReplyText(t *testing.T) {
	var r Reply
	r.AddText("ignored")
	if r.Content() != "" {
		t.Fatalf("text collected without WantContent: %q", r.Content())
	}
	r = Reply{Asked: Asked{WantContent: true}}
	r.NextPart()
	r.AddText("a")
	r.AddText("b")
	r.NextPart()
	r.AddText("")
	r.NextPart()
	r.AddText("c")
	if got := r.Content(); got != "ab\nc" {
		t.Fatalf("content %q", got)
	}
	r = Reply{Asked: Asked{WantContent: true, MaxContent: 4}}
	if !r.AddText("abcd") || r.TooLarge() {
		t.Fatal("4 bytes within a limit of 4")
	}
	if r.AddText("e") || !r.TooLarge() {
		t.Fatal("5 bytes past a limit of 4")
	}
	// A stream whose text outgrows the limit fails the Write.
	var w recWriter
	rw := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, Reply: &Reply{Asked: Asked{WantContent: true, MaxContent: 3}}}, nil)
	if _, err := io.WriteString(rw, contentEv("ab")+contentEv("cd")); !errors.Is(err, ErrContentTooLarge) {
		t.Fatalf("Write: %v, want ErrContentTooLarge", err)
	}
}

// The first error message is kept.
func TestReplyErrorFirstKept(t *testing.T) {
	var r Reply
	if _, ok := r.Err(); ok {
		t.Fatal("error on a new record")
	}
	r.SetError("first")
	r.SetError("second")
	if msg, ok := r.Err(); !ok || msg != "first" {
		t.Fatalf("Err = %q %v", msg, ok)
	}
}
