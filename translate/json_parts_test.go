package translate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Replies of every protocol for the equivalence checks: the chat seeds of
// json_reply_equiv_test.go, the benchmarks' replies, and Responses objects
// and Anthropic messages in the shapes that take each branch of their
// reading (tools by type and by name, escapes in keys and in types,
// repeated keys, their own meta, usage with and without details and cost).
var protocolReplySeeds = []string{
	`{"object":"response","output":[{"type":"web_search_call","id":"ws"},{"type":"function_call","name":"get_weather"},{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7,"input_tokens_details":{"cached_tokens":1},"output_tokens_details":{"reasoning_tokens":2},"cost":0.25}}`,
	`{"object":"response","output":[{"name":"n1","type":"mcp_call","name":"n2"},{"type":"_call"},{"type":"custom_tool_call","name":7},{"type":"x_call","type":"function_call"}],"meta":{"k":1}}`,
	`{"object":"response","output":{"a":{"type":"file_search_call"},"b":[{"type":"y_call"}]},"usage":{"input_tokens_details":{"x":1},"input_tokens_details":{"cached_tokens":5},"input_tokens":1}}`,
	`{"object":"response","output":[{"type":"function\u005fcall","name":"esc\u0041"},{"type":"a\"_call"}]}`,
	`{"obj\u0065ct":"response","output":[{"type":"function_call","name":"escaped key"}]}`,
	`{"object":"resp\u006fnse","output":[{"type":"code_interpreter_call"}],"meta":{"tools_used":["own"]}}`,
	`{"object":"response","object":"chat","output":[{"type":"image_generation_call"}]}`,
	`{"object":"response","meta":{"usage":"theirs"},"usage":{"input_tokens":1.5e1,"output_tokens":-1,"total_tokens":"x"}}`,
	`{"object":"response","meta":{},"output":[]}`,
	`{"object":"response","meta":null}`,
	`{"object":"response","meta":{"a":1},"output":[{"type":"local_shell_call"}]}`,
	`{"object":"response","meta":{"tools_used":["shell"]},"output":[{"type":"shell_call"}]}`,
	`{"type":"message","content":[{"type":"text","text":"a"},{"type":"tool_use","name":"get_weather"},{"type":"server_tool_use","name":"web_search"},{"type":"mcp_tool_use","name":"m"},{"type":"tool_use","name":1}],"usage":{"input_tokens":50,"cache_creation_input_tokens":20,"cache_read_input_tokens":300,"output_tokens":60,"cost":1e-3}}`,
	`{"type":"message","content":[{"type":"tool\u005fuse","name":"esc"}],"usage":{"output_tokens":9}}`,
	`{"type":"message","content":"just text","usage":{"cache_read_input_tokens":4}}`,
	`{"type":"message","type":"other","content":[{"type":"tool_use","name":"t"}]}`,
	`{"type":"message","content":[{"type":"tool_use","name":"t"}],"meta":{"tools_used":["t"]}}`,
	`{"type":"message","content":[{"type":"tool_use","name":"t"}],"meta":{"tools_used":["t"],"usage":1}}`,
	" \n {\"type\":\"message\",\"content\":[{\"type\":\"tool_use\",\"name\":\"ws\"}]} \n",
	`{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":2}}`,
	`{"type":"message","meta":[1]}`,
	// The index's reading of tools: a function_call before tool_calls, in
	// a second message, without a name and then with one; functions
	// without a name, twice; and more tools than the index holds.
	`{"choices":[{"message":{"function_call":{"arguments":"{}"},"content":"a"},"message":{"function_call":{"name":"fc2"},"tool_calls":[{"function":{"x":1},"function":{"name":"t1","name":"t1b"},"function":{"name":"t1c"}},{"function":"s"},[],{"function":{"name":{"a":"b"}}}]},"message":{"tool_calls":[{"function":{"name":"late"}}]}},{"message":[{"tool_calls":[{"function":{"name":"arr"}}]}]}]}`,
	`{"choices":[{"message":{"tool_calls":{"0":{"function":{"name":"obj"}}},"function_call":{"name":[1]}}},{"message":{"function_call":{"name":"fc"},"function_call":{"name":"fc2"}}}],"usage":{"prompt_tokens_details":[1],"prompt_tokens_details":{"cached_tokens":"s"},"prompt_tokens":1}}`,
	manyTools(`{"choices":[{"message":{"tool_calls":[`, `{"function":{"name":"t%d"}}`, `]}}]}`),
	manyTools(`{"object":"response","output":[`, `{"type":"function_call","name":"f%d"}`, `]}`),
	manyTools(`{"type":"message","content":[`, `{"type":"tool_use","name":"b%d"}`, `]}`),
	manyTools(`{"object":"response","output":[`, `{"type":"function_call","id":"%d"},{"type":"x%d_call"}`, `]}`),
	`{"object":"response","choices":[{"message":{"tool_calls":[{"function":{"name":"not chat"}}]}}],"content":[{"type":"tool_use","name":"not anthropic"}],"output":[{"type":"a_call"}]}`,
	`{"type":"message","output":[{"type":"a_call"}],"content":[{"type":"x","type":"tool_use","name":"n"},{"name":"m","type":"server_tool_use"},{"type":["tool_use"]}]}`,
	// Chat replies with cost, structured text and choices' meta together.
	`{"choices":[{"message":{"content":"{\"reply\":\"hi\",\"structured_result\":{\"type\":\"list\",\"items\":[1]}}"},"meta":{"a":1}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"cost":0.1},"meta":{"b":2}}`,
	`{"content":"{\"reply\":\"top\",\"status\":\"ok\"}","meta":{}}`,
	`{"choices":[{"message":{"content":"{\"reply\":\"x\"}"}},{"meta":{}}],"choices":[{"message":{"content":"{\"reply\":\"y\"}"}}]}`,
}

// manyTools is head, then 40 items (each item with %d for its number),
// then tail.
func manyTools(head, item, tail string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < 40; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.Replace(item, "%d", strconv.Itoa(i%30), 1))
	}
	return b.String() + tail
}

// partsCorpus is every reply the parts are checked on: the seeds, the
// benchmarks' replies, the fuzz corpus kept in testdata, the upstream
// bodies of the shared conformance cases when they are there.
func partsCorpus(t testing.TB) [][]byte {
	RegisterTally()
	var out [][]byte
	for _, s := range append(append(append([]string(nil), jsonReplySeeds...), protocolReplySeeds...), choiceMetaSeeds...) {
		out = append(out, []byte(s))
	}
	for _, c := range benchJSONReplies {
		out = append(out, c.body)
	}
	files, _ := filepath.Glob("testdata/fuzz/FuzzRewriteJSONReplyEquiv/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// go test fuzz v1 / []byte("...")
		for _, line := range strings.Split(string(b), "\n") {
			if q, ok := strings.CutPrefix(line, "[]byte("); ok {
				if v, err := strconv.Unquote(strings.TrimSuffix(q, ")")); err == nil {
					out = append(out, []byte(v))
				}
			}
		}
	}
	return out
}

// partsCalls are the options the parts are checked with: as the module
// forwards, with the end hook and the prices table (id and model read),
// structured, and as run-once reads (the text of every protocol).
func partsCalls() []func() (*Meta, JSONOptions) {
	var trimmed Meta
	trimmed.SetTrimmed(3)
	return []func() (*Meta, JSONOptions){
		func() (*Meta, JSONOptions) { return nil, JSONOptions{} },
		func() (*Meta, JSONOptions) {
			return &trimmed, JSONOptions{Reply: new(Reply), Buf: make([]byte, 0, 64)}
		},
		func() (*Meta, JSONOptions) {
			rep := &Reply{Asked: Asked{Prices: []Price{{Model: "*", Input: 1, Output: 2}}, RequestModel: "m"}}
			return nil, JSONOptions{Reply: rep, BeforeEnd: func(r *Reply) { r.Meta.AddTool("hook:" + r.ID + ":" + r.Model) }}
		},
		func() (*Meta, JSONOptions) { return &trimmed, JSONOptions{Structured: true} },
		func() (*Meta, JSONOptions) {
			return nil, JSONOptions{Reply: &Reply{Asked: Asked{WantContent: true}}}
		},
	}
}

// checkParts holds RewriteJSONReply to the reference that always parses
// and edits with sjson (byte for byte, meta and record included), and the
// pieces of JSONReplyParts to RewriteJSONReply.
func checkParts(t *testing.T, body []byte) {
	in := append([]byte(nil), body...)
	var parts JSONReplyParts
	for i, call := range partsCalls() {
		extra, opts := call()
		extra0, opts0 := call()
		extra1, opts1 := call()
		want, wmeta, wok := rewriteJSONReplyRef(body, extra0, opts0)
		got, gmeta, gok := RewriteJSONReply(body, extra, opts)
		if !bytes.Equal(body, in) {
			t.Fatalf("call %d: the body was changed", i)
		}
		if gok != wok {
			t.Fatalf("call %d %s: ok %v, before %v", i, body, gok, wok)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("call %d %s:\n got %s\nwant %s", i, body, got, want)
		}
		if gok && wok && !bytes.Equal(gmeta.JSON(), wmeta.JSON()) {
			t.Fatalf("call %d %s: meta %s, before %s", i, body, gmeta.JSON(), wmeta.JSON())
		}
		if gok && opts.Reply != nil {
			g, w := opts.Reply, opts0.Reply
			if g.Usage != w.Usage || g.HasCost != w.HasCost || g.Cost != w.Cost || g.Content() != w.Content() {
				t.Fatalf("call %d %s: record %+v %v %v %q, before %+v %v %v %q", i, body,
					g.Usage, g.HasCost, g.Cost, g.Content(), w.Usage, w.HasCost, w.Cost, w.Content())
			}
		}
		// The same call as pieces: the same bytes, its length known first.
		pmeta, pok := parts.Rewrite(body, extra1, opts1)
		if pok != gok || pok && !bytes.Equal(pmeta.JSON(), gmeta.JSON()) {
			t.Fatalf("call %d %s: parts ok %v meta %s", i, body, pok, pmeta.JSON())
		}
		changed := len(got) != len(body) || len(got) > 0 && &got[0] != &body[0]
		if parts.Changed() != (pok && changed) {
			t.Fatalf("call %d %s: Changed %v", i, body, parts.Changed())
		}
		var w bytes.Buffer
		n, err := parts.WriteTo(&w)
		if err != nil || int(n) != w.Len() || parts.Len() != w.Len() || !bytes.Equal(w.Bytes(), got) {
			t.Fatalf("call %d %s: parts wrote %d (Len %d, %v):\n%s\nwant\n%s", i, body, n, parts.Len(), err, w.Bytes(), got)
		}
		if joined := bytes.Join(parts.Pieces(nil), nil); !bytes.Equal(joined, got) {
			t.Fatalf("call %d %s: pieces %q", i, body, parts.Pieces(nil))
		}
		if whole, ok := parts.Whole(); ok != (len(parts.Pieces(nil)) <= 1) || ok && !bytes.Equal(whole, got) {
			t.Fatalf("call %d %s: Whole %v %q, %d pieces", i, body, ok, whole, len(parts.Pieces(nil)))
		}
		if !bytes.Equal(parts.AppendTo(nil), got) {
			t.Fatalf("call %d %s: AppendTo differs", i, body)
		}
	}
}

func TestJSONReplyPartsEquiv(t *testing.T) {
	for i, body := range partsCorpus(t) {
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkParts(t, body) })
	}
}

func FuzzJSONReplyParts(f *testing.F) {
	for _, body := range partsCorpus(f) {
		f.Add(body)
	}
	f.Fuzz(checkParts)
}

// The index reads what gjson reads: protocol, usage and cost of the
// protocol seeds, whatever their keys' escapes.
func TestJSONIndexProtocols(t *testing.T) {
	for _, s := range protocolReplySeeds {
		var x jsonIndex
		if !replyPaths.Scan(s, &x.Index) {
			t.Fatalf("not valid: %s", s)
		}
		if got, want := jsonProtocolOf(s, &x.Top), jsonProtocolOf(s, gjsonTop(s)); got != want {
			t.Errorf("%s: protocol %v, gjson %v", s, got, want)
		}
	}
}

// bigToolReply is a chat reply of about size bytes, most of it the text of
// its one choice, with tool calls and usage: what a forwarded reply of
// that size adds.
func bigToolReply(size int) []byte {
	return benchSized1(size,
		`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"`,
		`","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},{"id":"c2","type":"function","function":{"name":"get_markets","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":300000,"total_tokens":300009}}`)
}

func benchSized1(size int, head, tail string) []byte {
	return []byte(head + benchProse(size-len(head)-len(tail)) + tail)
}

// A 1 MiB reply with tool calls is held once: its pieces take new memory
// of about the meta's size, where RewriteJSONReply makes a second copy.
func TestJSONReplyPartsHeldOnce(t *testing.T) {
	body := bigToolReply(1 << 20)
	var parts JSONReplyParts
	rep := new(Reply)
	var meta *Meta
	var ok bool
	// TotalAlloc counts the whole process: what another goroutine left by
	// an earlier test allocates meanwhile counts too, so the fewest bytes
	// of three rewrites are what one costs.
	least := ^uint64(0)
	for range 3 {
		parts, *rep = JSONReplyParts{}, Reply{} // nothing of an earlier round reused
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		meta, ok = parts.Rewrite(body, nil, JSONOptions{Reply: rep})
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	if !ok || !parts.Changed() || string(meta.JSON()) != `{"tools_used":["get_weather","get_markets"],"usage":{"input_tokens":9,"output_tokens":300000,"total_tokens":300009}}` {
		t.Fatalf("ok %v changed %v meta %s", ok, parts.Changed(), meta.JSON())
	}
	if least > 4<<10 {
		t.Fatalf("%d bytes allocated for a %d-byte reply", least, len(body))
	}
	pieces := parts.Pieces(nil)
	if len(pieces) != 2 || !sameMemory(pieces[0], body) || parts.Len() != len(body)+len(pieces[1])-1 {
		t.Fatalf("%d pieces, Len %d, the first one the body's own memory: %v", len(pieces), parts.Len(), sameMemory(pieces[0], body))
	}
}

// BenchmarkJSONReply1MiB: a 1 MiB chat reply with tool calls and usage,
// rewritten whole (RewriteJSONReply, a second copy) and as pieces
// (JSONReplyParts, the meta only): B/op is what each holds beside the body.
func BenchmarkJSONReply1MiB(b *testing.B) {
	body := bigToolReply(1 << 20)
	b.Run("RewriteJSONReply", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		var rep Reply
		for i := 0; i < b.N; i++ {
			rep = Reply{}
			out, _, ok := RewriteJSONReply(body, nil, JSONOptions{Reply: &rep})
			if !ok || len(out) <= len(body) {
				b.Fatal("not rewritten")
			}
		}
	})
	b.Run("JSONReplyParts", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		var rep Reply
		var parts JSONReplyParts
		for i := 0; i < b.N; i++ {
			rep = Reply{}
			if _, ok := parts.Rewrite(body, nil, JSONOptions{Reply: &rep}); !ok || parts.Len() <= len(body) {
				b.Fatal("not rewritten")
			}
		}
	})
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errWriteFailed
	}
	f.n -= len(p)
	return len(p), nil
}

var errWriteFailed = errors.New("write failed")

// WriteTo stops at the first failed write and counts what went; a body
// that is not a JSON object is its one piece, unchanged.
func TestJSONReplyPartsWriteTo(t *testing.T) {
	var parts JSONReplyParts
	body := []byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":"t"}}]}}]}`)
	if _, ok := parts.Rewrite(body, nil, JSONOptions{}); !ok || !parts.Changed() {
		t.Fatal("not rewritten")
	}
	w := &failAfter{n: 10}
	n, err := parts.WriteTo(w)
	if !errors.Is(err, errWriteFailed) || n != 10 {
		t.Fatalf("wrote %d, %v", n, err)
	}
	bad := []byte(`{"choices":[`)
	if meta, ok := parts.Rewrite(bad, nil, JSONOptions{}); ok || meta != nil || parts.Changed() || parts.Len() != len(bad) {
		t.Fatalf("invalid body: ok %v, changed %v, Len %d", ok, parts.Changed(), parts.Len())
	}
	if pieces := parts.Pieces(nil); len(pieces) != 1 || !sameMemory(pieces[0], bad) {
		t.Fatalf("pieces %q", pieces)
	}
}
