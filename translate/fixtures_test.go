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

// The meta each recorded stream gets (tools_used, usage), worked out by
// hand from the files ("": no OpenAI tool calls and no usage chunk, so no
// final meta event).
var fixtureMeta = map[string]string{
	// Two parallel calls, index 0 then 1; the name only on each first delta.
	"openai-chat-stream-parallel-tool-calls-usage.sse": `{"tools_used":["GetWeatherArgs","get_stock_price"],"usage":{"input_tokens":149,"output_tokens":60,"total_tokens":209,"reasoning_tokens":0}}`,
	// Anthropic's OpenAI-compatible endpoint: the only call has index 1.
	"openai-compat-anthropic-tool-call-index1.sse": `{"tools_used":["read_file"]}`,
	// deepseek-reasoner: reasoning, then one call; cached and reasoning tokens.
	"deepseek-reasoning-tool-call.chunks.jsonl": `{"tools_used":["weather"],"usage":{"input_tokens":339,"output_tokens":83,"total_tokens":422,"cached_input_tokens":320,"reasoning_tokens":39}}`,
	// The continuation delta repeats "name":"", which must not be added.
	"mistral-glm-tool-call-deltas.chunks.jsonl": `{"tools_used":["webSearchTool"],"usage":{"input_tokens":171,"output_tokens":14,"total_tokens":185,"cached_input_tokens":128}}`,

	"openai-chat-stream-refusal-usage.sse":                `{"usage":{"input_tokens":79,"output_tokens":11,"total_tokens":90,"reasoning_tokens":0}}`,
	"openai-chat-stream-length-usage.sse":                 `{"usage":{"input_tokens":79,"output_tokens":1,"total_tokens":80,"reasoning_tokens":0}}`,
	"openai-chat-stream-json-schema-usage.sse":            `{"usage":{"input_tokens":79,"output_tokens":14,"total_tokens":93,"reasoning_tokens":0}}`,
	"azure-openai-prompt-filter-first-chunk.chunks.jsonl": `{"usage":{"input_tokens":15,"output_tokens":78,"total_tokens":93,"cached_input_tokens":0,"reasoning_tokens":64}}`,
	"openai-responses-error.chunks.jsonl":                 "",
	// Native formats read as chat chunks: tool use is not in
	// choices[*].delta.tool_calls, and their usage is not a chat usage.
	"anthropic-messages-tool-use.sse":               "",
	"gemini-stream-basic-crlf.sse":                  "",
	"gemini-stream-thinking-function-call-crlf.sse": "",
	"gemini-vertex-stream-error-mid-stream.sse":     "",
	// Not OpenAI SSE at all: the SSE rewriter must pass them untouched.
	"vercel-data-stream-v1-tool-call-deltas.txt": "",
	"vercel-ui-message-stream-v1-error.sse":      "",
}

// fixtureTools is tools_used of a fixture's expected meta.
func fixtureTools(meta string) []string {
	var tools []string
	for _, v := range gjson.Get(meta, "tools_used").Array() {
		tools = append(tools, v.Str)
	}
	return tools
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
func TestUpstreamFixturesThroughRewriter(t *testing.T) {
	dir := upstreamFixturesDir(t)
	for _, name := range fixtureNames(t, dir) {
		t.Run(name, func(t *testing.T) {
			meta, known := fixtureMeta[name]
			if !known {
				t.Fatalf("new fixture %s: add its expected meta to fixtureMeta", name)
			}
			tools := fixtureTools(meta)
			in := string(loadUpstreamFixture(t, dir, name))
			want := in
			if meta != "" {
				metaEv := fixtureMetaEvent(t, in, meta)
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
				out, r := rewrite(t, in, n, StreamOptions{FinalMeta: true, Stats: &stats}, nil)
				if out != want {
					t.Fatalf("%s: output differs (%d bytes, want %d)\n%s", chunkName(n), len(out), len(want), firstDiff(out, want))
				}
				if got := r.Reply().Meta.Tools(); !equalStrings(got, tools) {
					t.Fatalf("%s: tools_used %q, want %q", chunkName(n), got, tools)
				}
				wantFinal := int64(0)
				if meta != "" {
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
				if rest != in || int64(len(metas)) != wantFinal {
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
	out, _ := rewrite(t, in, 3, StreamOptions{FinalMeta: true, Chat: ChatOptions{BareMeta: true}}, nil)
	if want := in[:i] + `data: {"meta":` + fixtureMeta[name] + "}\n\n" + in[i:]; out != want {
		t.Fatalf("bare:\n%s", firstDiff(out, want))
	}
	if out, _ := rewrite(t, in, 5, StreamOptions{}, nil); out != in {
		t.Fatal("final_meta off changed the stream")
	}
}

// fixtureMetaEvent builds the expected final meta event: a chunk with the
// id, created and model of the stream's last chunk, as written there.
func fixtureMetaEvent(t *testing.T, in string, meta string) string {
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
