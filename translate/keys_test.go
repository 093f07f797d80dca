package translate

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// An event's data is read when it is a JSON object, its first byte after
// JSON white space '{': a Responses stream opens (SPEC 11.1) at its first.
func TestEventObjectStart(t *testing.T) {
	for data, object := range map[string]bool{`{}`: true, " \t{} ": true, `[{}]`: false, `"{}"`: false, "\v{}": false, ``: false} {
		r := NewRewriter(io.Discard, StreamOptions{MaxEvent: 1 << 10, Protocol: FormatResponses}, nil)
		_, _ = r.Write([]byte("data:" + data + "\n\n"))
		if r.opened != object {
			t.Errorf("data %q: opened %v", data, r.opened)
		}
	}
}

// deltaToolNames, behind the key scan, must find what the two #
// queries it replaces found behind bytes.Contains("tool_calls") and
// bytes.Contains("function_call"). (Keys spelt with \u escapes are not
// looked for, before or after.)
func refToolNames(s string) []string {
	var names []string
	add := func(_, n gjson.Result) bool {
		if n.Type == gjson.String {
			names = append(names, n.Str)
		}
		return true
	}
	if strings.Contains(s, `"tool_calls"`) {
		gjson.Get(s, "choices.#.delta.tool_calls.#.function.name").ForEach(func(_, ns gjson.Result) bool {
			ns.ForEach(add)
			return true
		})
	}
	if strings.Contains(s, `"function_call"`) {
		gjson.Get(s, "choices.#.delta.function_call.name").ForEach(add)
	}
	return names
}

func newToolNames(s string) []string {
	var names []string
	keys := keySet((&jsonscan.KeyScanner{Table: chatProtocol.stream.keyTable}).Scan([]byte(s)))
	if keys&hasName != 0 {
		deltaToolNames(s, keys, func(n string) { names = append(names, n) })
	}
	return names
}

var toolNameSeeds = []string{
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"get_weather","arguments":""}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"name\":1}"}}]}}]}`,
	`{"choices":[{"delta":{"function_call":{"name":"legacy"}}},{"delta":{"tool_calls":[{"function":{"name":"b"}},{"function":{"name":"c"}}]}}]}`,
	`{"choices":{"a":{"delta":{"tool_calls":[{"function":{"name":"obj"}}]}}}}`,
	`{"choices":[{"delta":{"tool_calls":{"function":{"name":"notarray"}}}}]}`,
	`{"choices":[{"delta":{"tool_calls":[1,{"function":[{"name":"x"}]},{"function":{"name":7}},{"function":{"name":"ok"}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"a"}}],"function_call":{"name":"z"}}}]}`,
}

func TestDeltaToolNames(t *testing.T) {
	for _, s := range toolNameSeeds {
		if got, want := newToolNames(s), refToolNames(s); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", s, got, want)
		}
	}
}

func FuzzDeltaToolNames(f *testing.F) {
	for _, s := range toolNameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Contains(s, `\u`) || !gjson.Valid(s) {
			// Escaped keys are not looked for either way (but gjson may see
			// them); on invalid JSON what gjson finds is unspecified.
			return
		}
		if got, want := newToolNames(s), refToolNames(s); !slices.Equal(got, want) {
			t.Fatalf("%s:\n got %q\nwant %q", s, got, want)
		}
	})
}
