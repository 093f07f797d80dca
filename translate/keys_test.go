package translate

import (
	"bytes"
	"math/rand"
	"testing"
)

// scanKeys must find exactly what the four bytes.Contains it replaces find.
func containsKeys(data []byte) (set uint8) {
	for bit, k := range map[uint8]string{hasMeta: `"meta"`, hasToolCall: `"tool_calls"`, hasFuncCall: `"function_call"`, hasError: `"error"`} {
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
	}
	for _, c := range cases {
		if got, want := scanKeys([]byte(c)), containsKeys([]byte(c)); got != want {
			t.Errorf("scanKeys(%q) = %b, want %b", c, got, want)
		}
	}
	rng := rand.New(rand.NewSource(2))
	words := []string{`"`, `meta`, `tool_calls`, `function_call`, `error`, `x`, `\`, `{`, `:`, ` `}
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
