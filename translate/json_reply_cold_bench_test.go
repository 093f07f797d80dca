package translate

import (
	"testing"
	"time"
)

// Behind Caddy a reply is not rewritten in a loop: between two replies the
// server runs its own code (and the kernel, and other processes), and the
// rewrite starts with its code and data out of the caches and the TLB. End
// to end the module's Caddy spends about as much more per JSON request as
// the rewrite costs cold, many times what it costs hot (bench/HISTORY.md,
// "the JSON gap is cold code"). BenchmarkJSONReplyCold measures it that way.

// evictBytes is twice this machine's last-level cache (32 MiB).
const evictBytes = 64 << 20

var evictBuf []byte

// evictCaches writes one byte in every cache line of a buffer larger than
// the last-level cache: what was cached before, code and data, and the TLB
// entries of its pages, are gone after.
func evictCaches() {
	if evictBuf == nil {
		evictBuf = make([]byte, evictBytes)
	}
	for i := 0; i < len(evictBuf); i += 64 {
		evictBuf[i]++
	}
}

// BenchmarkJSONReplyCold is BenchmarkJSONReplyParts2K with cold caches:
// before each reply the caches are evicted, and the reply's own bytes
// written again (in the module they have just been copied from the
// upstream, so they are cached). It reports two figures per reply:
//
//   - cold-ns/reply: everything cold, as after a request's worth of other
//     work;
//   - state-cold-ns/reply: the same, but with the code run just before on
//     the same reply with state of its own (every path the reply takes is
//     warm, and its bytes): what is left is the cost of the rewrite's own
//     state (the record, the plan, the meta) being cold.
//
// ns/op is dominated by the eviction (two per iteration, about 13 ms)
// and means nothing: one second is about 80 replies, so -count 3 and
// medians.
func BenchmarkJSONReplyCold(b *testing.B) {
	for _, c := range benchJSONReplies {
		b.Run(c.name, func(b *testing.B) {
			body := make([]byte, len(c.body))
			var rep, warmRep Reply
			var parts, warmParts JSONReplyParts
			extra, warmExtra := new(Meta), new(Meta)
			rewrite := func(parts *JSONReplyParts, rep *Reply, extra *Meta, body []byte) {
				*rep = Reply{}
				rep.Meta.Limit(DefaultMaxMetaBytes, nil)
				if _, ok := parts.Rewrite(body, extra, JSONOptions{Reply: rep}); !ok || !parts.Changed() {
					b.Fatal("not rewritten")
				}
			}
			var cold, stateCold time.Duration
			for i := 0; i < b.N; i++ {
				evictCaches()
				copy(body, c.body)
				t := time.Now()
				rewrite(&parts, &rep, extra, body)
				cold += time.Since(t)

				evictCaches()
				copy(body, c.body)
				rewrite(&warmParts, &warmRep, warmExtra, body)
				t = time.Now()
				rewrite(&parts, &rep, extra, body)
				stateCold += time.Since(t)
			}
			b.ReportMetric(float64(cold.Nanoseconds())/float64(b.N), "cold-ns/reply")
			b.ReportMetric(float64(stateCold.Nanoseconds())/float64(b.N), "state-cold-ns/reply")
		})
	}
}
