package translate

import "testing"

// BenchmarkRequestUnchanged is the look every POST gets before it goes
// upstream (a typical 240-byte chat request with nothing to change): one
// pass over its quotes, eight bytes at a time. Three passes with
// bytes.IndexByte per quote took 245 ns on the machine of BENCHMARKS.md;
// this one 72 ns.
func BenchmarkRequestUnchanged(b *testing.B) {
	body := []byte(`{"model":"gpt-4o-mini","stream":false,"messages":[` +
		`{"role":"system","content":"You are a helpful assistant. Answer briefly."},` +
		`{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`)
	opts := RequestOptions{StructuredModels: []string{"*"}, StreamUsage: true}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !RequestUnchanged(body, opts) {
			b.Fatal("the request was found to need a change")
		}
	}
}
