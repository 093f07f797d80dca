package translate

import (
	"testing"

	"github.com/tidwall/gjson"
)

// chunkFields must answer as the GetMany it replaces, for valid JSON (the
// collector checks validity first).
func checkChunkFields(t *testing.T, s string) {
	got := chunkFields(s)
	want := gjson.GetMany(s, "error", "choices.0.delta.content", "choices", "choices.0.index")
	for i := range want {
		if got[i].Exists() != want[i].Exists() || got[i].Raw != want[i].Raw || got[i].Type != want[i].Type || got[i].Str != want[i].Str {
			t.Fatalf("%s: field %d = %#v, want %#v", s, i, got[i], want[i])
		}
	}
}

var chunkSeeds = []string{
	`{"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}`,
	`{"error":{"message":"boom"}}`,
	`{"choices":[],"error":"x"}`,
	`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}]}`,
	`{"choices":{"0":{"delta":{"content":"obj"}}}}`,
	`{"ch\u006fices":[{"delta":{"content":"esc"}}],"choices":[{"delta":{"content":"second"}}]}`,
	`{"error":1,"error":2,"choices":[1],"choices":[2]}`,
	`{"choices":{"0":{},"0":{"delta":{"content":"x"},"index":0}}}`,
	`[1,2]`, `"s"`, `{}`,
}

func TestChunkFields(t *testing.T) {
	for _, s := range chunkSeeds {
		checkChunkFields(t, s)
	}
}

func FuzzChunkFields(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !gjson.Valid(s) {
			return
		}
		checkChunkFields(t, s)
	})
}
