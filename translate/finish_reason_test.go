package translate

import (
	"bytes"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// finishReasonSetRef is finishReasonFrom as bytes.Index finds the key
// without its first quote, checked after (so that a key may begin at the
// closing quote of another), the reference its one-byte search must agree
// with.
func finishReasonSetRef(data []byte) bool {
	needle := []byte(`finish_reason"`)
	for i := 1; i <= len(data); {
		j := bytes.Index(data[i:], needle)
		if j < 0 {
			return false
		}
		at := i + j
		i = at + len(needle)
		if data[at-1] != '"' {
			continue
		}
		k := jsonscan.Space(string(data), i)
		if k >= len(data) || data[k] != ':' {
			continue
		}
		k = jsonscan.Space(string(data), k+1)
		if k < len(data) && data[k] != 'n' {
			return true
		}
	}
	return false
}

var finishReasonSeeds = []string{
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"choices":[{"finish_reason":null},{"finish_reason" : "length"}]}`,
	`{"choices":[{"delta":{"content":"\"finish_reason\":\"stop\""}}]}`,
	`{"x_finish_reason":"stop"}`, `"finish_reason"`, `"finish_reason":`, `"finish_reason": `,
	`_"finish_reason":1`, `{"finish_reason"` + "\t\r\n:\n" + `0}`, `finish_reason":"stop"`, `_`, ``,
	`"finish_reason""finish_reason":"a"`, `{"finish_reason":nul}`,
}

func TestFinishReasonSet(t *testing.T) {
	for _, s := range finishReasonSeeds {
		checkFinishReasonSet(t, []byte(s))
	}
	for s, want := range map[string]bool{
		finishReasonSeeds[0]: false, finishReasonSeeds[1]: true, finishReasonSeeds[2]: true,
		finishReasonSeeds[3]: false, `{"x_finish_reason":"stop"}`: false,
	} {
		if got := finishReasonFrom([]byte(s), 0); got != want {
			t.Errorf("finishReasonFrom(%s, 0) = %v, want %v", s, got, want)
		}
	}
}

func FuzzFinishReasonSet(f *testing.F) {
	for _, s := range finishReasonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFinishReasonSet)
}

func checkFinishReasonSet(t *testing.T, data []byte) {
	// From any place up to the key's first occurrence, as the key scan's
	// first key is.
	want := finishReasonSetRef(data)
	first := bytes.Index(data, []byte(`"finish_reason"`))
	if first < 0 {
		first = len(data)
	}
	for at := 0; at <= first; at++ {
		if got := finishReasonFrom(data, at); got != want {
			t.Fatalf("finishReasonFrom(%q, %d) = %v, the reference %v", data, at, got, want)
		}
	}
}
