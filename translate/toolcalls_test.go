package translate

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// toolCallsOf returns meta.tool_calls of m, decoded (nil when absent).
func toolCallsOf(t *testing.T, m *Meta) []map[string]any {
	t.Helper()
	raw := m.Get(KeyToolCalls)
	if raw == nil {
		return nil
	}
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("tool_calls is not JSON: %v: %s", err, raw)
	}
	return out
}

func TestClippedArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		args string
		want int // bytes kept
		clip bool
	}{
		{"short", "{}", 2, false},
		{"exactly the bound", strings.Repeat("a", MaxToolArgBytes), MaxToolArgBytes, false},
		{"one byte over", strings.Repeat("a", MaxToolArgBytes+1), MaxToolArgBytes, true},
		{"two-byte character across", strings.Repeat("a", MaxToolArgBytes-1) + "é", MaxToolArgBytes - 1, true},
		{"two-byte character ends at the bound", strings.Repeat("a", MaxToolArgBytes-2) + "éz", MaxToolArgBytes, true},
		{"three-byte character across", strings.Repeat("a", MaxToolArgBytes-2) + "€", MaxToolArgBytes - 2, true},
		{"four-byte character across", strings.Repeat("a", MaxToolArgBytes-1) + "😀", MaxToolArgBytes - 1, true},
		{"four-byte character three bytes before", strings.Repeat("a", MaxToolArgBytes-3) + "😀", MaxToolArgBytes - 3, true},
		{"invalid byte at the bound", strings.Repeat("a", MaxToolArgBytes-1) + "\xff\xff", MaxToolArgBytes, true},
		{"stray continuation bytes", strings.Repeat("a", MaxToolArgBytes-2) + "\x80\x80\x80\x80", MaxToolArgBytes, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls toolCalls
			c := calls.begin("f", callKey{}, false, DefaultMaxMetaBytes)
			c.add(tc.args)
			got, clipped := c.clippedArgs()
			if len(got) != tc.want || clipped != tc.clip {
				t.Fatalf("kept %d bytes, clipped %v; want %d, %v", len(got), clipped, tc.want, tc.clip)
			}
			if string(got) != tc.args[:tc.want] {
				t.Fatal("not a prefix")
			}
		})
	}
}

func TestAddArgsDecodesWithinBound(t *testing.T) {
	// 5,000 escaped é: decoded, 10,000 bytes, clipped to 2,048 of them;
	// the decoding stops near the bound rather than at the end.
	lit := `"` + strings.Repeat(`\u00e9`, 5000) + `"`
	var calls toolCalls
	c := calls.begin("f", callKey{}, false, DefaultMaxMetaBytes)
	calls.addArgs(c, lit)
	got, clipped := c.clippedArgs()
	if !clipped || string(got) != strings.Repeat("é", MaxToolArgBytes/2) {
		t.Fatalf("clipped %v, %d bytes", clipped, len(got))
	}
	if len(calls.scratch) > 6*keepArgs {
		t.Fatalf("decoded %d bytes for %d kept", len(calls.scratch), keepArgs)
	}
	// A surrogate pair whose escape the cut would split still decodes.
	c = calls.begin("g", callKey{}, false, DefaultMaxMetaBytes)
	calls.addArgs(c, `"`+strings.Repeat("a", MaxToolArgBytes-1)+`\ud83d\ude00"`)
	if got, _ := c.clippedArgs(); len(got) != MaxToolArgBytes-1 || !utf8.Valid(c.args) {
		t.Fatalf("kept %d bytes, %q", len(got), c.args[len(c.args)-4:])
	}
}

func TestToolCallsBegin64(t *testing.T) {
	var calls toolCalls
	for i := 0; i < MaxToolCalls+10; i++ {
		c := calls.begin("f", callKey{int64(i), 0}, true, DefaultMaxMetaBytes)
		if (c != nil) != (i < MaxToolCalls) {
			t.Fatalf("call %d: entry %v", i, c != nil)
		}
	}
	if calls.find(callKey{3, 0}) == nil || calls.find(callKey{MaxToolCalls + 1, 0}) != nil {
		t.Fatal("find")
	}
}

func TestToolCallNamesWithinMetaBound(t *testing.T) {
	// Names are held only while they fit the meta's bound: a name too
	// large is left out at once, its place kept.
	var calls toolCalls
	a := calls.begin(strings.Repeat("n", 90), callKey{}, false, 100)
	b := calls.begin(strings.Repeat("m", 20), callKey{}, false, 100)
	c := calls.begin("ok", callKey{}, false, 100)
	if a.out || !b.out || c.out || calls.names > 100 {
		t.Fatalf("out: %v %v %v, names %d", a.out, b.out, c.out, calls.names)
	}
}

// chatStreamMeta runs a chat stream through a rewriter with
// tool_arguments on and returns its meta.
func chatStreamMeta(t *testing.T, body string, maxMeta int) *Meta {
	t.Helper()
	var rep Reply
	rep.ToolArguments = true
	w := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: &rep, MaxMeta: maxMeta}, nil)
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &rep.Meta
}

func TestChatStreamToolCalls(t *testing.T) {
	ev := func(s string) string { return "data: " + s + "\n\n" }
	body := ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`) +
		// A second choice's call with the same index is another call.
		ev(`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"name":"g","arguments":"["}}]}}]}`) +
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`) +
		ev(`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"]"}}]}}]}`) +
		// Named only after it began.
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{"}}]}}]}`) +
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"late","arguments":"}"}}]}}]}`) +
		// Cut short inside: no chunk.
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"zz"}}]}}]`) +
		ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`) + ev("[DONE]")
	got := toolCallsOf(t, chatStreamMeta(t, body, 0))
	want := []map[string]any{
		{"name": "f", "arguments": `{"x":1}`},
		{"name": "g", "arguments": `[]`},
		{"name": "late", "arguments": `{}`},
	}
	if !jsonEqualValues(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestToolCallsOffAddsNothing(t *testing.T) {
	body := "data: " + `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}` + "\n\ndata: [DONE]\n\n"
	var rep Reply
	w := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: &rep}, nil)
	w.Write([]byte(body))
	w.Close()
	if rep.Meta.Has(KeyToolCalls) || len(rep.calls.list) != 0 {
		t.Fatal("tool_calls without tool_arguments")
	}
	out, meta, _ := RewriteJSONReply([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`), nil, JSONOptions{})
	if meta.Has(KeyToolCalls) || strings.Contains(string(out), "tool_calls\":[{\"name") {
		t.Fatal("tool_calls without tool_arguments")
	}
}

func TestToolCallsLeftOutByMetaBound(t *testing.T) {
	var rep Reply
	rep.ToolArguments = true
	rep.Meta.Limit(320, nil)
	body := `{"choices":[{"message":{"tool_calls":[` +
		`{"function":{"name":"a","arguments":"` + strings.Repeat("x", 200) + `"}},` +
		`{"function":{"name":"b","arguments":"` + strings.Repeat("y", 200) + `"}},` +
		`{"function":{"name":"c","arguments":"1"}}]}}]}`
	_, meta, ok := RewriteJSONReply([]byte(body), nil, JSONOptions{Reply: &rep})
	if !ok {
		t.Fatal("not rewritten")
	}
	got := toolCallsOf(t, meta)
	if len(got) != 2 || got[0]["name"] != "a" || got[1]["name"] != "c" {
		t.Fatalf("got %v", got)
	}
	if n := len(meta.JSON()); n > 320 {
		t.Fatalf("meta of %d bytes past its bound", n)
	}
}

// jsonEqualValues compares two values as JSON.
func jsonEqualValues(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return jsonscan.Equal(x, y)
}

func TestToolCallsMakeRoomForStructuredMetadata(t *testing.T) {
	// A streamed structured reply's metadata is known only at the end:
	// tool_calls, written last, leaves out its entry rather than it.
	ev := func(s string) string { return "data: " + s + "\n\n" }
	body := ev(`{"choices":[{"index":0,"delta":{"content":"{\"reply\":\"hi\",\"intent\":\"question\"}"}}]}`) +
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"`+strings.Repeat("a", 150)+`"}}]}}]}`) +
		ev(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"name":"g","arguments":"1"}}]}}]}`) +
		ev(`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`) + ev("[DONE]")
	var rep Reply
	rep.ToolArguments = true
	w := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: &rep, MaxMeta: 300, Chat: ChatOptions{Structured: NewReplyStream(1 << 20)}}, nil)
	w.Write([]byte(body))
	w.Close()
	if !rep.Meta.Has(KeyStructuredMetadata) {
		t.Fatalf("structured_metadata left out: %s", rep.Meta.JSON())
	}
	got := toolCallsOf(t, &rep.Meta)
	if len(got) != 1 || got[0]["name"] != "g" {
		t.Fatalf("tool_calls %v", got)
	}
	if n := len(rep.Meta.JSON()); n > 300 {
		t.Fatalf("meta of %d bytes", n)
	}
}

func TestResponsesItemsWithoutIndexOrID(t *testing.T) {
	// Items with neither output_index nor id: the n-th .done gives the
	// arguments of the n-th .added.
	item := func(name, args string) string {
		return `{"type":"function_call","name":"` + name + `","arguments":"` + args + `"}`
	}
	body := namedEvent("response.created", responsesCreated) +
		namedEvent("response.output_item.added", `{"type":"response.output_item.added","item":`+item("f", "")+`}`) +
		namedEvent("response.output_item.added", `{"type":"response.output_item.added","item":`+item("g", "")+`}`) +
		namedEvent("response.output_item.done", `{"type":"response.output_item.done","item":`+item("f", "1")+`}`) +
		namedEvent("response.output_item.done", `{"type":"response.output_item.done","item":`+item("g", "2")+`}`) +
		responsesCompleted("")
	var rep Reply
	rep.ToolArguments = true
	w, _ := OpenStream(FormatResponses, io.Discard, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: &rep}, ConvertOptions{}, nil)
	w.Write([]byte(body))
	w.Close()
	got := toolCallsOf(t, &rep.Meta)
	want := []map[string]any{{"name": "f", "arguments": "1"}, {"name": "g", "arguments": "2"}}
	if !jsonEqualValues(got, want) {
		t.Fatalf("got %v", got)
	}
}
