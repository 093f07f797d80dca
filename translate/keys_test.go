package translate

import (
	"bytes"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// scanKeys must find exactly what the six bytes.Contains it replaces find.
func containsKeys(data []byte) (set uint8) {
	for bit, k := range map[uint8]string{hasMeta: `"meta"`, hasToolCall: `"tool_calls"`, hasFuncCall: `"function_call"`, hasError: `"error"`, hasName: `"name"`, hasUsage: `"usage"`} {
		if bytes.Contains(data, []byte(k)) {
			set |= bit
		}
	}
	return set
}

func TestScanKeys(t *testing.T) {
	cases := []string{
		``, `"`, `"meta`, `"meta"`, `{"meta":{}}`, `x"error"`, `"tool_calls"`, `"function_call"`,
		`{"content":"\"meta\""}`, `""""""""meta"`, `"tool_call"`, `"function_calls"`,
		`{"id":"c","choices":[{"delta":{"tool_calls":[{"function":{"name":"f"}}]}}],"meta":{},"error":{}}`,
		`{"usage":{}}`, `"usage`, `"usag"`,
	}
	for _, c := range cases {
		if got, want := scanKeys([]byte(c)), containsKeys([]byte(c)); got != want {
			t.Errorf("scanKeys(%q) = %b, want %b", c, got, want)
		}
	}
	rng := rand.New(rand.NewSource(2))
	words := []string{`"`, `meta`, `name`, `tool_calls`, `function_call`, `error`, `usage`, `x`, `\`, `{`, `:`, ` `}
	for n := 0; n < 50000; n++ {
		var b []byte
		for k := rng.Intn(12); k > 0; k-- {
			b = append(b, words[rng.Intn(len(words))]...)
		}
		if got, want := scanKeys(b), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	}
}

func FuzzScanKeys(f *testing.F) {
	f.Add([]byte(`{"meta":{"tools_used":["x"]},"error":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := scanKeys(b), containsKeys(b); got != want {
			t.Fatalf("scanKeys(%q) = %b, want %b", b, got, want)
		}
	})
}

func TestStartsObject(t *testing.T) {
	for s, want := range map[string]bool{``: false, `{`: true, " \t\r\n{": true, ` [`: false, `x{`: false, "\v{": false} {
		if got := startsObject([]byte(s)); got != want {
			t.Errorf("startsObject(%q) = %v", s, got)
		}
	}
}

// deltaToolNames, behind the scanKeys look-up, must find what the two #
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
	keys := scanKeys([]byte(s))
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
