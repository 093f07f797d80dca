package translate

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// upstreamFixturesDir is testdata/fixtures/upstream at the repository root
// (the directory holding go.mod): recorded upstream streams, with their
// origins in SOURCES.md there.
func upstreamFixturesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
	fx := filepath.Join(dir, "testdata", "fixtures", "upstream")
	if st, err := os.Stat(fx); err != nil || !st.IsDir() {
		t.Fatalf("upstream fixtures not found at %s: %v", fx, err)
	}
	return fx
}

// loadUpstreamFixture reads a recorded stream as its wire bytes, framed as
// SOURCES.md says: .sse (and the data stream's .txt) as they are;
// .chunks.jsonl re-framed as "data: <line>\n\n".
func loadUpstreamFixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".chunks.jsonl") {
		return b
	}
	var out []byte
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		out = append(out, "data: "...)
		out = append(out, line...)
		out = append(out, "\n\n"...)
	}
	return out
}

// The tools each recorded stream used, worked out by hand from the files
// (nil: no OpenAI tool calls, so no final meta event).
var fixtureTools = map[string][]string{
	// Two parallel calls, index 0 then 1; the name only on each first delta.
	"openai-chat-stream-parallel-tool-calls-usage.sse": {"GetWeatherArgs", "get_stock_price"},
	// Anthropic's OpenAI-compatible endpoint: the only call has index 1.
	"openai-compat-anthropic-tool-call-index1.sse": {"read_file"},
	// deepseek-reasoner: reasoning, then one call.
	"deepseek-reasoning-tool-call.chunks.jsonl": {"weather"},
	// The continuation delta repeats "name":"", which must not be added.
	"mistral-glm-tool-call-deltas.chunks.jsonl": {"webSearchTool"},

	"openai-chat-stream-refusal-usage.sse":                nil,
	"openai-chat-stream-length-usage.sse":                 nil,
	"openai-chat-stream-json-schema-usage.sse":            nil,
	"azure-openai-prompt-filter-first-chunk.chunks.jsonl": nil,
	"openai-responses-error.chunks.jsonl":                 nil,
	// Native formats: tool use is not in choices[*].delta.tool_calls.
	"anthropic-messages-tool-use.sse":               nil,
	"gemini-stream-basic-crlf.sse":                  nil,
	"gemini-stream-thinking-function-call-crlf.sse": nil,
	"gemini-vertex-stream-error-mid-stream.sse":     nil,
	// Not OpenAI SSE at all: the SSE rewriter must pass them untouched.
	"vercel-data-stream-v1-tool-call-deltas.txt": nil,
	"vercel-ui-message-stream-v1-error.sse":      nil,
}

func fixtureNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SOURCES.md" || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	return names
}

// Every recorded upstream stream through the SSE rewriter, whole and in
// pieces of 1 to 7 bytes: every upstream byte reaches the client intact and
// in order, and the only addition is one final meta event with the right
// tools_used, right before [DONE] (or at the end when there is none).
func TestUpstreamFixturesThroughSSERewriter(t *testing.T) {
	dir := upstreamFixturesDir(t)
	for _, name := range fixtureNames(t, dir) {
		t.Run(name, func(t *testing.T) {
			tools, known := fixtureTools[name]
			if !known {
				t.Fatalf("new fixture %s: add its expected tools_used to fixtureTools", name)
			}
			in := string(loadUpstreamFixture(t, dir, name))
			want := in
			if tools != nil {
				metaEv := fixtureMetaEvent(t, in, tools)
				if i := doneEventStart(in); i >= 0 {
					want = in[:i] + metaEv + in[i:]
				} else {
					if !strings.HasSuffix(in, "\n\n") {
						t.Fatal("fixture with tools does not end with a blank line; the expectation needs a terminator")
					}
					want = in + metaEv
				}
			}
			for _, n := range chunkSizes() {
				var stats Stats
				out, r := rewrite(t, in, n, SSEOptions{FinalMeta: true, Stats: &stats}, nil)
				if out != want {
					t.Fatalf("%s: output differs (%d bytes, want %d)\n%s", chunkName(n), len(out), len(want), firstDiff(out, want))
				}
				if got := r.Meta().Tools(); !equalStrings(got, tools) {
					t.Fatalf("%s: tools_used %q, want %q", chunkName(n), got, tools)
				}
				wantFinal := int64(0)
				if len(tools) > 0 {
					wantFinal = 1
				}
				if stats.FinalMeta != wantFinal {
					t.Fatalf("%s: %d final meta events", chunkName(n), stats.FinalMeta)
				}
				if stats.Oversize != 0 {
					t.Fatalf("%s: %d oversize events", chunkName(n), stats.Oversize)
				}
				// And with the meta event taken out, the upstream's bytes exactly.
				metas, rest := cutMetaEvents(t, out)
				if rest != in || len(metas) != min(len(tools), 1) {
					t.Fatalf("%s: %d meta events; rest equal to input: %v", chunkName(n), len(metas), rest == in)
				}
			}
		})
	}
}

// Streams with tools also come out right in the bare shape and with
// final_meta off.
func TestUpstreamFixturesMetaOptions(t *testing.T) {
	dir := upstreamFixturesDir(t)
	name := "openai-chat-stream-parallel-tool-calls-usage.sse"
	in := string(loadUpstreamFixture(t, dir, name))
	i := doneEventStart(in)
	if i < 0 {
		t.Fatal("no [DONE] in " + name)
	}
	out, _ := rewrite(t, in, 3, SSEOptions{FinalMeta: true, BareMeta: true}, nil)
	if want := in[:i] + `data: {"meta":{"tools_used":["GetWeatherArgs","get_stock_price"]}}` + "\n\n" + in[i:]; out != want {
		t.Fatalf("bare:\n%s", firstDiff(out, want))
	}
	if out, _ := rewrite(t, in, 5, SSEOptions{}, nil); out != in {
		t.Fatal("final_meta off changed the stream")
	}
}

// fixtureMetaEvent builds the expected final meta event: a chunk with the
// id, created and model of the stream's last chunk, as written there.
func fixtureMetaEvent(t *testing.T, in string, tools []string) string {
	t.Helper()
	var last []byte
	for _, e := range wholeEvents([]byte(in)) {
		d, ok, _ := EventData(e, nil)
		if ok && len(d) > 0 && d[0] == '{' && gjson.ValidBytes(d) && !gjson.GetBytes(d, "error").Exists() {
			last = d
		}
	}
	res := gjson.GetManyBytes(last, "id", "created", "model")
	if res[0].Type != gjson.String || res[1].Type != gjson.Number || res[2].Type != gjson.String {
		t.Fatalf("last chunk has no id/created/model: %s", last)
	}
	var meta []byte
	meta = append(meta, `{"tools_used":[`...)
	for i, n := range tools {
		if i > 0 {
			meta = append(meta, ',')
		}
		meta = appendJSONString(meta, n)
	}
	meta = append(meta, "]}"...)
	return `data: {"id":` + res[0].Raw + `,"object":"chat.completion.chunk","created":` + res[1].Raw + `,"model":` + res[2].Raw + `,"choices":[],"meta":` + string(meta) + "}\n\n"
}

// doneEventStart is the offset of the first "data: [DONE]" event, or -1.
func doneEventStart(in string) int {
	off := 0
	for _, e := range wholeEvents([]byte(in)) {
		if d, ok, _ := EventData(e, nil); ok && string(d) == "[DONE]" {
			return off
		}
		off += len(e)
	}
	return -1
}

// firstDiff describes where two strings first differ.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-60)
	return "first difference at byte " + itoa(int64(i)) + ":\n got …" + quoteCut(got[lo:], 160) + "\nwant …" + quoteCut(want[lo:], 160)
}

func quoteCut(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return string(bytes.ReplaceAll([]byte(s), []byte("\n"), []byte(`\n`)))
}
