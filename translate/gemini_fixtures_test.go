package translate_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/httpmeta"
)

// The real Gemini recordings (testdata/fixtures/gemini, and the gemini-*
// streams of testdata/fixtures/upstream) through the whole handler, with the
// upstream writing them whole and 1 to 7 bytes at a time: what a person
// reads off each one — the tools it called, its usage, its text (run-once)
// — worked out by hand from the files with SPEC 4.6 and 9.1.
type geminiFixture struct {
	meta string // the meta the reply gets ("": none, the reply passes byte for byte)
	text string // run-once content
	// blocked: the prompt was blocked, run-once answers 502 with this message.
	blocked string
	stream  bool // the recording is a stream (set by the test)
}

var geminiFixtures = map[string]geminiFixture{
	// Thought parts (not text), "hello", an empty STOP event; gemma counts
	// its thoughts in thoughtsTokenCount.
	"gemini/gemma-4-output-usage.chunks.txt": {meta: `{"usage":{"input_tokens":6,"output_tokens":77,"total_tokens":83,"reasoning_tokens":76}}`, text: "hello"},
	// executableCode is code_execution; the tool-use prompt counts as input (23 + 289).
	"gemini/google-code-execution-multiple-results.json": {meta: `{"tools_used":["code_execution"],"usage":{"input_tokens":312,"output_tokens":35,"total_tokens":347}}`,
		text: "The code execution resulted in the following output:\n\n```\nok\n```\n\nFollowed by an error:\n\n```python\nZeroDivisionError: division by zero\n```"},
	// content: {} and NO_IMAGE: no text at all; candidatesTokenCount absent is 0.
	"gemini/google-image-no-image-live.json": {meta: `{"usage":{"input_tokens":9,"output_tokens":0,"total_tokens":9}}`, text: "No response from gateway."},
	"gemini/google-reasoning-gemini3.json": {meta: `{"usage":{"input_tokens":9,"output_tokens":287,"total_tokens":296,"reasoning_tokens":258}}`,
		text: "There are **3** \"r\"s in strawberry.\n\nHere is the breakdown: st**r**awbe**rr**y."},
	// Recorded SSE-framed with LF; a call with nested args and an id.
	"gemini/google-recursive-tool-call.chunks.txt": {meta: `{"tools_used":["search"],"usage":{"input_tokens":694,"output_tokens":231,"total_tokens":925,"reasoning_tokens":205}}`},
	// Vertex: read_theme, then read_screen three times with streamed
	// partialArgs and nameless closing calls; usageMetadata with only
	// trafficType until the STOP event.
	"gemini/google-stream-no-args-tool-call.chunks.txt":                                        {meta: `{"tools_used":["read_theme","read_screen"],"usage":{"input_tokens":249,"output_tokens":241,"total_tokens":490,"reasoning_tokens":183}}`},
	"gemini/google-stream-tool-call-arguments.chunks.txt":                                      {meta: `{"tools_used":["getWeather"],"usage":{"input_tokens":26,"output_tokens":155,"total_tokens":181,"reasoning_tokens":132}}`},
	"gemini/google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": {meta: `{"tools_used":["writeItems"],"usage":{"input_tokens":54,"output_tokens":195,"total_tokens":249,"reasoning_tokens":121}}`},
	"gemini/google-strict-forced-tool-choice-any.json": {meta: `{"tools_used":["createMeeting"],"usage":{"input_tokens":61,"output_tokens":1046,"total_tokens":1107,"reasoning_tokens":1005}}`,
		text: "No response from gateway."},
	// The last event's empty text carries only a thoughtSignature.
	"gemini/google-text.chunks.txt": {meta: `{"usage":{"input_tokens":9,"output_tokens":208,"total_tokens":217,"reasoning_tokens":185}}`,
		text: "There are **3** \"r\"s in strawberry.\n\nst**r**awbe**rr**y"},
	"gemini/google-tool-call-gemini3.chunks.txt": {meta: `{"tools_used":["weather"],"usage":{"input_tokens":29,"output_tokens":819,"total_tokens":848,"reasoning_tokens":804}}`},
	"gemini/google-tool-call.json": {meta: `{"tools_used":["weather"],"usage":{"input_tokens":29,"output_tokens":908,"total_tokens":937,"reasoning_tokens":893}}`,
		text: "No response from gateway."},
	// An empty text part is no text: 55 + 89 tool-use prompt tokens in, 51 + 56 out.
	"gemini/google-tool-use-usage.json": {meta: `{"usage":{"input_tokens":144,"output_tokens":107,"total_tokens":251,"reasoning_tokens":56}}`,
		text: "No response from gateway."},
	// 76 events of one call's nested streamed arguments.
	"gemini/google-vertex-stream-tool-call-arguments-nested.1.chunks.txt": {meta: `{"tools_used":["cookRecipe"],"usage":{"input_tokens":31,"output_tokens":1710,"total_tokens":1741,"reasoning_tokens":1026}}`},
	// An inlineData image part, then an empty text on STOP; CRLF-framed SSE.
	"gemini/issue-10660-image-thought-signature.chunks.txt": {meta: `{"usage":{"input_tokens":8,"output_tokens":1386,"total_tokens":1394,"reasoning_tokens":167}}`},
	"gemini/issue-10781.1.chunks.txt": {meta: `{"tools_used":["get_weather"],"usage":{"input_tokens":83,"output_tokens":199,"total_tokens":282,"reasoning_tokens":178}}`,
		text: "Let me check."},
	"gemini/issue-18073-empty-text-thought-signature.chunks.txt": {meta: `{"usage":{"input_tokens":15,"output_tokens":53,"total_tokens":68,"reasoning_tokens":52}}`, text: "4"},
	// A blocked prompt: no candidate; its usageMetadata still counts.
	"gemini/issue-19758-prompt-block.chunks.txt": {meta: `{"usage":{"input_tokens":9,"output_tokens":0,"total_tokens":9}}`, blocked: "Blocked: PROHIBITED_CONTENT"},
	"gemini/issue-19758-prompt-block.json":       {meta: `{"usage":{"input_tokens":9,"output_tokens":0,"total_tokens":9}}`, blocked: "Blocked: PROHIBITED_CONTENT"},
	// Every count: 19 + 63 in, 3 of them cached, 4 + 56 out.
	"gemini/issue-19822-complete-usage.json": {meta: `{"usage":{"input_tokens":82,"output_tokens":60,"total_tokens":142,"cached_input_tokens":3,"reasoning_tokens":56}}`,
		text: "42"},
	"gemini/issue-19822-google-search-live.chunks.txt": {meta: `{"usage":{"input_tokens":325,"output_tokens":370,"total_tokens":695,"reasoning_tokens":333}}`,
		text: "The current date is Wednesday, August 26, 2026."},

	"upstream/gemini-stream-basic-crlf.sse": {meta: `{"usage":{"input_tokens":7,"output_tokens":10,"total_tokens":17}}`,
		text: "The capital of Wyoming is **Cheyenne**.\n"},
	"upstream/gemini-stream-thinking-function-call-crlf.sse": {meta: `{"tools_used":["now"],"usage":{"input_tokens":38,"output_tokens":174,"total_tokens":212,"reasoning_tokens":168}}`},
	// Its first event is already terminal (finishReason STOP), with neither
	// tools nor usage: nothing to add. The raw error object after the
	// events is no SSE data and passes as it came; run-once stops at the
	// terminal event.
	"upstream/gemini-vertex-stream-error-mid-stream.sse": {text: "First "},
}

// geminiFixtureDir is testdata/fixtures of the repository.
func geminiFixtureDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "fixtures"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// loadGeminiFixture reads a recording as the upstream sends it, framed as
// testdata/fixtures/gemini/SOURCES.md says: a .json reply as it is; a
// stream of one JSON object a line re-framed as Gemini frames it,
// "data: <line>\r\n\r\n"; an SSE-framed recording as it is.
func loadGeminiFixture(t *testing.T, name string) (body []byte, stream bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(geminiFixtureDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case strings.HasSuffix(name, ".json"):
		return b, false
	case bytes.HasPrefix(b, []byte("data:")):
		return b, true
	}
	var out []byte
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSuffix(line, "\r"); line != "" {
			out = append(append(append(out, "data: "...), line...), "\r\n\r\n"...)
		}
	}
	return out, true
}

// Every file of testdata/fixtures/gemini has its expectation, and so has
// every Gemini stream of testdata/fixtures/upstream.
func TestGeminiFixturesAllListed(t *testing.T) {
	dir := geminiFixtureDir(t)
	var want []string
	for _, pat := range []string{"gemini/*.json", "gemini/*.txt", "upstream/gemini-*"} {
		files, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range files {
			rel, _ := filepath.Rel(dir, f)
			want = append(want, filepath.ToSlash(rel))
		}
	}
	var got []string
	for name := range geminiFixtures {
		got = append(got, name)
	}
	sort.Strings(want)
	sort.Strings(got)
	if len(want) != 24 || !reflect.DeepEqual(got, want) {
		t.Fatalf("recordings on disk:\n%q\nexpectations:\n%q", want, got)
	}
}

// piecewise is an upstream that answers body in pieces of n bytes (0:
// whole), flushing after each, as a slow upstream's writes arrive.
func piecewise(body []byte, stream bool, n int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if stream {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		for rest := body; len(rest) > 0; {
			k := len(rest)
			if n > 0 {
				k = min(n, k)
			}
			_, _ = w.Write(rest[:k])
			_ = rc.Flush()
			rest = rest[k:]
		}
	})
}

// geminiPost is a Gemini request for a reply of that kind, run-once or not.
// geminiPost is a request for the model the recorded reply names (its
// first modelVersion), so that its meta has no model_served (SPEC 11.2,
// tested on its own).
var modelVersionRE = regexp.MustCompile(`"modelVersion":\s*"([^"]+)"`)

func geminiPost(in []byte, stream, runOnce bool) *http.Request {
	model := "gemini-2.5-flash"
	if m := modelVersionRE.FindSubmatch(in); m != nil {
		model = string(m[1])
	}
	path := "/v1beta/models/" + model + ":generateContent"
	if stream {
		path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	if runOnce {
		body += `,"run_once":true`
	}
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body+"}"))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestGeminiFixturesThroughHandler(t *testing.T) {
	h := httpmeta.New(httpmeta.DefaultConfig())
	for name, want := range geminiFixtures {
		t.Run(name, func(t *testing.T) {
			in, stream := loadGeminiFixture(t, name)
			for n := range 8 {
				what := "whole"
				if n > 0 {
					what = strconv.Itoa(n) + "-byte pieces"
				}
				w := httptest.NewRecorder()
				h.Wrap(piecewise(in, stream, n)).ServeHTTP(w, geminiPost(in, stream, false))
				out := w.Body.Bytes()
				if w.Code != http.StatusOK {
					t.Fatalf("%s: status %d", what, w.Code)
				}
				if stream {
					checkGeminiStream(t, what, in, out, want.meta)
				} else {
					checkGeminiJSON(t, what, in, out, want.meta)
				}

				w = httptest.NewRecorder()
				h.Wrap(piecewise(in, stream, n)).ServeHTTP(w, geminiPost(in, stream, true))
				want.stream = stream
				checkGeminiRunOnce(t, what, w, want)
			}
		})
	}
}

// checkGeminiJSON: the reply is the upstream's with its meta as a new
// top-level key, or byte for byte when there is none.
func checkGeminiJSON(t *testing.T, what string, in, out []byte, meta string) {
	t.Helper()
	if meta == "" {
		if !bytes.Equal(out, in) {
			t.Fatalf("%s: a reply with nothing to add changed:\n%s", what, out)
		}
		return
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: reply is not JSON: %v\n%s", what, err, out)
	}
	gotMeta, _ := json.Marshal(got["meta"])
	delete(got, "meta")
	assertSameJSON(t, what+": meta", string(gotMeta), meta)
	assertSameJSONValue(t, what+": the reply without its meta", got, in)
}

// geminiEventEnd finds where each event of a recording ends: a line end
// and the blank line after it, each CRLF, LF or CR.
var geminiEventEnd = regexp.MustCompile(`(?:\r\n|\n|\r)(?:\r\n|\n|\r)`)

func splitGeminiEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		loc := geminiEventEnd.FindIndex(b)
		if loc == nil {
			return append(out, b)
		}
		out = append(out, b[:loc[1]])
		b = b[loc[1]:]
	}
	return out
}

// checkGeminiStream: every event passes byte for byte, except the terminal
// one when there is meta, which is the upstream's with `"meta":{…}` inserted
// (its other bytes unchanged) and says exactly meta.
func checkGeminiStream(t *testing.T, what string, in, out []byte, meta string) {
	t.Helper()
	if meta == "" {
		if !bytes.Equal(out, in) {
			t.Fatalf("%s: a stream with nothing to add changed", what)
		}
		return
	}
	ins, outs := splitGeminiEvents(in), splitGeminiEvents(out)
	if len(ins) != len(outs) {
		t.Fatalf("%s: %d events in, %d out", what, len(ins), len(outs))
	}
	spliced := 0
	for i := range ins {
		if bytes.Equal(ins[i], outs[i]) {
			continue
		}
		spliced++
		a, b := ins[i], outs[i]
		p := 0
		for p < len(a) && a[p] == b[p] {
			p++
		}
		s := 0
		for s < len(a)-p && a[len(a)-1-s] == b[len(b)-1-s] {
			s++
		}
		if p+s != len(a) {
			t.Fatalf("%s: event %d was changed, not only added to:\n in %q\nout %q", what, i, a, b)
		}
		data, _ := bytes.CutPrefix(bytes.TrimRight(b, "\r\n"), []byte("data: "))
		var ev map[string]any
		if err := json.Unmarshal(data, &ev); err != nil {
			t.Fatalf("%s: event %d is not JSON: %v\n%s", what, i, err, data)
		}
		gotMeta, _ := json.Marshal(ev["meta"])
		assertSameJSON(t, what+": meta", string(gotMeta), meta)
	}
	if spliced != 1 {
		t.Fatalf("%s: %d events carry meta, want 1", what, spliced)
	}
}

// checkGeminiRunOnce: one JSON answer with the text and the meta, or the
// 502 of a blocked prompt.
func checkGeminiRunOnce(t *testing.T, what string, w *httptest.ResponseRecorder, want geminiFixture) {
	t.Helper()
	var got struct {
		Content *string         `json:"content"`
		Error   string          `json:"error"`
		Meta    json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatalf("%s: run-once answer is not JSON: %v\n%s", what, err, w.Body)
	}
	if want.blocked != "" {
		if w.Code != http.StatusBadGateway || got.Error != want.blocked {
			t.Fatalf("%s: run-once of a blocked prompt: status %d, %s", what, w.Code, w.Body)
		}
		if got.Content == nil || *got.Content != "" {
			t.Fatalf("%s: run-once of a blocked prompt has no content: %s", what, w.Body)
		}
	} else if w.Code != http.StatusOK || got.Content == nil || *got.Content != want.text {
		t.Fatalf("%s: run-once: status %d, %s\nwant content %q", what, w.Code, w.Body, want.text)
	}
	if want.meta == "" {
		if got.Meta != nil {
			t.Fatalf("%s: run-once has meta %s, want none", what, got.Meta)
		}
		return
	}
	assertSameJSON(t, what+": run-once meta", string(got.Meta), want.meta)
}

func assertSameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation %s: %v", what, want, err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil || !reflect.DeepEqual(g, w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, got, want)
	}
}

func assertSameJSONValue(t *testing.T, what string, got any, want []byte) {
	t.Helper()
	var w any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("%s differs from the upstream's", what)
	}
}

// A :streamGenerateContent reply that is not an event stream (one JSON
// array, without alt=sse) reaches the client as its bytes arrive: what the
// upstream wrote and flushed is there before it writes the rest (SPEC 4.6).
func TestGeminiStreamArrayNotHeld(t *testing.T) {
	first := `[{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}],"role":"model"},"index":0}]}`
	rest := ",\r\n" + `{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP","index":0}]}]`
	w := httptest.NewRecorder()
	var seen string
	upstream := http.HandlerFunc(func(uw http.ResponseWriter, _ *http.Request) {
		uw.Header().Set("Content-Type", "application/json; charset=UTF-8")
		uw.WriteHeader(http.StatusOK)
		_, _ = uw.Write([]byte(first))
		_ = http.NewResponseController(uw).Flush()
		seen = w.Body.String()
		_, _ = uw.Write([]byte(rest))
	})
	r := httptest.NewRequest(http.MethodPost, "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
		strings.NewReader(`{"contents":[{"parts":[{"text":"hi"}]}]}`))
	r.Header.Set("Content-Type", "application/json")
	httpmeta.New(httpmeta.DefaultConfig()).Wrap(upstream).ServeHTTP(w, r)
	if seen != first {
		t.Fatalf("before the rest came, the client had %q, want %q", seen, first)
	}
	if w.Body.String() != first+rest {
		t.Fatalf("body %q, want the upstream's", w.Body)
	}
}
