package translate

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// toolArgsFormats are the replies FuzzToolCalls reads, by its first byte:
// each stream protocol, then a JSON reply (FormatNone here).
var toolArgsFormats = []Format{FormatSSE, FormatResponses, FormatAnthropic, FormatGemini, FormatDataStream, FormatUIStream, FormatNone}

// toolArgsSeeds are the upstream bodies of the tool-args conformance
// cases, each with the format it is read in.
func toolArgsSeeds(f *testing.F) (seeds []struct {
	f    byte
	body []byte
}) {
	names, err := filepath.Glob(filepath.Join("..", "testdata", "conformance", "tool-args-*.txtar"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no tool-args cases: %v", err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		_, up, _ := bytes.Cut(b, []byte("-- upstream.http --\n"))
		up, _, _ = bytes.Cut(up, []byte("\n-- "))
		head, body, _ := bytes.Cut(up, []byte("\n\n"))
		if len(body) > 12<<10 {
			continue // the 64 calls: too slow a seed to mutate
		}
		var k byte
		switch base := filepath.Base(name); {
		case bytes.Contains(head, []byte("application/json")):
			k = 6
		case strings.Contains(base, "responses"):
			k = 1
		case strings.Contains(base, "anthropic"):
			k = 2
		case strings.Contains(base, "gemini"):
			k = 3
		case strings.Contains(base, "datastream"):
			k = 4
		case strings.Contains(base, "uistream"):
			k = 5
		}
		seeds = append(seeds, struct {
			f    byte
			body []byte
		}{k, body})
	}
	return seeds
}

// readToolArgs reads body in format f, in the pieces pattern makes, with
// tool_arguments on or off and meta bounded by maxMeta; it returns the
// record.
func readToolArgs(f Format, body, pattern []byte, on bool, maxMeta int) *Reply {
	rep := &Reply{Asked: Asked{ToolArguments: on}}
	rep.Meta.Limit(maxMeta, nil)
	if f == FormatNone {
		RewriteJSONReply(body, nil, JSONOptions{Reply: rep})
		return rep
	}
	w, _ := OpenStream(f, io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep, MaxMeta: maxMeta}, ConvertOptions{MaxLine: 1 << 20}, nil)
	for _, p := range fuzzPieces(body, pattern) {
		w.Write(p)
	}
	w.Close()
	return rep
}

// FuzzToolCalls: with tool_arguments on, meta.tool_calls does not depend
// on how the body is cut; it holds at most 64 entries whose arguments are
// valid UTF-8 of at most 4,096 bytes (clipped says when they were cut);
// the meta stays within its bound; and the meta is the one the same reply
// gets with tool_arguments off, tool_calls aside (SPEC 11.3, 8.1).
func FuzzToolCalls(f *testing.F) {
	for _, s := range toolArgsSeeds(f) {
		f.Add(s.f, s.body, []byte{}, uint16(0))
		f.Add(s.f, s.body, []byte("\x03\x01"), uint16(300))
	}
	f.Fuzz(func(t *testing.T, which byte, body, pattern []byte, bound uint16) {
		format := toolArgsFormats[int(which)%len(toolArgsFormats)]
		maxMeta := 0 // the default
		if bound > 0 {
			maxMeta = 64 + int(bound)
		}
		whole := readToolArgs(format, body, nil, true, maxMeta)
		cut := readToolArgs(format, body, pattern, true, maxMeta)
		off := readToolArgs(format, body, nil, false, maxMeta)
		got := whole.Meta.Get(KeyToolCalls)
		if !bytes.Equal(cut.Meta.Get(KeyToolCalls), got) {
			t.Fatalf("cut by %v:\n got %s\nwant %s", pattern, cut.Meta.Get(KeyToolCalls), got)
		}
		if n, max := len(whole.Meta.JSON()), whole.Meta.MaxBytes(); n > max {
			t.Fatalf("meta of %d bytes, bound %d", n, max)
		}
		for i := range whole.calls.list {
			c := &whole.calls.list[i]
			if n := len(appendToolCall(nil, c)); n != c.jsonLen() {
				t.Fatalf("entry of %d bytes, counted %d", n, c.jsonLen())
			}
		}
		upstream := off.Meta.Get(KeyToolCalls)
		if upstream == nil {
			// tool_calls aside, the meta is the one without it.
			a, b := withoutMember(t, whole.Meta.JSON(), KeyToolCalls), withoutMember(t, off.Meta.JSON(), KeyToolCalls)
			if !bytes.Equal(a, b) {
				t.Fatalf("meta on:\n%s\noff:\n%s", a, b)
			}
		}
		if got == nil || bytes.Equal(got, upstream) {
			return
		}
		if !utf8.Valid(got) {
			t.Fatalf("tool_calls not valid UTF-8: %q", got)
		}
		var entries []struct {
			Name      *string `json:"name"`
			Arguments *string `json:"arguments"`
			Clipped   *bool   `json:"clipped"`
		}
		if err := json.Unmarshal(got, &entries); err != nil {
			t.Fatalf("tool_calls not JSON: %v: %s", err, got)
		}
		if len(entries) == 0 || len(entries) > MaxToolCalls {
			t.Fatalf("%d entries", len(entries))
		}
		for _, e := range entries {
			if e.Name == nil || e.Arguments == nil || e.Clipped != nil && !*e.Clipped {
				t.Fatalf("entry %s", got)
			}
			// Invalid bytes are written as U+FFFD, three bytes each.
			if n := len(*e.Arguments); n > 3*MaxToolArgBytes || n < MaxToolArgBytes/4 && e.Clipped != nil {
				t.Fatalf("arguments of %d bytes, clipped %v", n, e.Clipped != nil)
			}
		}
	})
}

// withoutMember returns the JSON object obj without its member key.
func withoutMember(t *testing.T, obj []byte, key string) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatalf("meta not JSON: %v: %s", err, obj)
	}
	delete(m, key)
	out, _ := json.Marshal(m)
	return out
}
