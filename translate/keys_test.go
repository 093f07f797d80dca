package translate

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestStartsObject(t *testing.T) {
	for s, want := range map[string]bool{``: false, `{`: true, " \t\r\n{": true, ` [`: false, `x{`: false, "\v{": false} {
		if got := startsObject([]byte(s)); got != want {
			t.Errorf("startsObject(%q) = %v", s, got)
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
	keys := keySet(chatProtocol.keyTable.Scan([]byte(s)))
	if keys&(hasToolCall|hasFuncCall) != 0 && keys&hasName != 0 {
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
