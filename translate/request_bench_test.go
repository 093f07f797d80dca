package translate

import "testing"

// benchRequest is a typical 240-byte chat request, a stream or not.
func benchRequest(stream string) []byte {
	return []byte(`{"model":"gpt-4o-mini","stream":` + stream + `,"messages":[` +
		`{"role":"system","content":"You are a helpful assistant. Answer briefly."},` +
		`{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`)
}

// BenchmarkRequestUnchanged is the look every POST gets before it goes
// upstream (a typical 240-byte chat request with nothing to change): one
// pass over its quotes, eight bytes at a time. Three passes with
// bytes.IndexByte per quote took 245 ns on the machine of BENCHMARKS.md;
// this one 72 ns.
func BenchmarkRequestUnchanged(b *testing.B) {
	body := benchRequest("false")
	opts := RequestOptions{StructuredModels: []string{"*"}, StreamUsage: true}
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !RequestUnchanged(body, opts) {
			b.Fatal("the request was found to need a change")
		}
	}
}

// BenchmarkRequestTop reads the top level of such a request: its model,
// as a reply's record reads it once the reply has ended (model_served and
// the price, SPEC 9.2, 11.2), and the change a chat stream that does not
// ask for its usage gets (stream_options appended, SPEC 9.1). The body is
// validated either way.
func BenchmarkRequestTop(b *testing.B) {
	b.Run("reply_model", func(b *testing.B) {
		body := benchRequest("false")
		var r Reply
		for b.Loop() {
			r.SetRequest("", body)
			if r.requestModel() != "gpt-4o-mini" {
				b.Fatal("model not read")
			}
		}
	})
	b.Run("ask_usage", func(b *testing.B) {
		body := benchRequest("true")
		opts := RequestOptions{Kind: RequestChat, StreamUsage: true}
		for b.Loop() {
			if res, _ := RewriteRequest(body, opts); !res.WithholdUsage {
				b.Fatal("the stream was not asked for its usage")
			}
		}
	})
}
