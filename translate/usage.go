package translate

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// KeyUsage is the meta key of the reply's token usage (SPEC 9.1).
const KeyUsage = "usage"

// Usage is a reply's token usage in the one shape of SPEC 9.1, read from
// whichever shape the upstream's protocol reports it in. The zero value
// knows nothing; the has* flags say which counts the upstream gave (a 0 it
// gave is kept).
type Usage struct {
	Input, Output, Total, Cached, Reasoning int64

	hasInput, hasOutput, hasTotal, hasCached, hasReasoning bool

	// An input counted in parts (Anthropic's uncached input, cache reads
	// and cache writes), kept apart so that a later usage object naming
	// one of them updates the sum.
	inputParts [3]int64
}

// Known reports whether any count is known.
func (u *Usage) Known() bool { return u.hasInput || u.hasOutput }

func (u *Usage) setInput(n int64)     { u.Input, u.hasInput = n, true }
func (u *Usage) setOutput(n int64)    { u.Output, u.hasOutput = n, true }
func (u *Usage) setTotal(n int64)     { u.Total, u.hasTotal = n, true }
func (u *Usage) setCached(n int64)    { u.Cached, u.hasCached = n, true }
func (u *Usage) setReasoning(n int64) { u.Reasoning, u.hasReasoning = n, true }

// count reads a whole non-negative count; anything else is not a count.
func count(v gjson.Result) (int64, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	return countOf(v.Num)
}

// countOf is count for a number already read.
func countOf(f float64) (int64, bool) {
	if f < 0 || f > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// usageCount is one count of a usage object, when it gave it.
type usageCount struct {
	n  int64
	ok bool
}

// usageNames is where one protocol's usage object keeps its counts: the
// paths (a dotted one names a member of a details object) of the counts,
// then that of the cost (SPEC 9.1, 9.2). The counts are input, output,
// total, cached and reasoning (apply); or, for an input counted in parts,
// the uncached input, the cache reads, the cache writes and the output
// (applyParts). An empty path: the protocol gives no such count. The index
// records each count in a slot (setUp).
type usageNames struct {
	paths []string
	parts bool
	slots []int // the index's slot of each path (registration)
}

// maxUsageCounts is the most counts a usage object gives (apply's).
const maxUsageCounts = 5

// read reads a usage object by the names into u. It reports false,
// changing nothing, when the object holds no count.
func (u *Usage) read(usage gjson.Result, n *usageNames) bool {
	var c [maxUsageCounts]usageCount
	k := len(n.paths) - 1
	for i, path := range n.paths[:k] {
		if path != "" {
			c[i].n, c[i].ok = count(usage.Get(path))
		}
	}
	return u.applyAs(n, c[:k])
}

// readUsage reads a usage object of a protocol whose counts are where n
// says into the record: its counts, and its cost (setCostFrom). A value
// that is not an object has neither.
func (r *Reply) readUsage(usage gjson.Result, n *usageNames) {
	if usage.IsObject() {
		r.Usage.read(usage, n)
		r.setCostFrom(usage)
	}
}

// applyAs applies the counts read by the names.
func (u *Usage) applyAs(n *usageNames, c []usageCount) bool {
	if n.parts {
		return u.applyParts(c)
	}
	return u.apply(c)
}

// apply replaces u with the counts of a usage object in the usual order:
// input, output, total, cached, reasoning.
func (u *Usage) apply(c []usageCount) bool {
	if !u.replace(c[0].n, c[0].ok, c[1].n, c[1].ok) {
		return false
	}
	if c[2].ok {
		u.setTotal(c[2].n)
	}
	if c[3].ok {
		u.setCached(c[3].n)
	}
	if c[4].ok {
		u.setReasoning(c[4].n)
	}
	return true
}

// applyParts updates u with the counts of a usage object whose input
// comes in parts: the uncached input, the cache reads, the cache writes,
// the output. Each count given replaces the one before (a later object
// names only what changed); the input is the sum of its parts.
func (u *Usage) applyParts(c []usageCount) bool {
	plain, read, made, out := c[0], c[1], c[2], c[3]
	if !plain.ok && !read.ok && !made.ok && !out.ok {
		return false
	}
	for i, part := range c[:3] {
		if part.ok {
			u.inputParts[i] = part.n
		}
	}
	if read.ok {
		u.setCached(read.n)
	}
	if plain.ok || read.ok || made.ok {
		u.setInput(u.inputParts[0] + u.inputParts[1] + u.inputParts[2])
	}
	if out.ok {
		u.setOutput(out.n)
	}
	return true
}

// replace starts u anew with the input and output counts that are known;
// it reports false, changing nothing, when neither is.
func (u *Usage) replace(in int64, okIn bool, out int64, okOut bool) bool {
	if !okIn && !okOut {
		return false
	}
	*u = Usage{}
	if okIn {
		u.setInput(in)
	}
	if okOut {
		u.setOutput(out)
	}
	return true
}

func firstCount(v gjson.Result, keys ...string) (int64, bool) {
	for _, k := range keys {
		if n, ok := count(v.Get(k)); ok {
			return n, true
		}
	}
	return 0, false
}

// appendCounts appends the input and output counts after the bytes in and
// out (an object's opening and first key, then a comma and the second
// key), then total_tokens: the members SPEC 9.1's object and chat's share.
func (u *Usage) appendCounts(dst []byte, in, out string) []byte {
	dst = append(dst, in...)
	dst = strconv.AppendInt(dst, u.Input, 10)
	dst = append(dst, out...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	dst = append(dst, `,"total_tokens":`...)
	return strconv.AppendInt(dst, u.TotalTokens(), 10)
}

// TotalTokens is the upstream's total, else input + output.
func (u *Usage) TotalTokens() int64 {
	if u.hasTotal {
		return u.Total
	}
	return u.Input + u.Output
}

// AppendJSON appends the usage object of SPEC 9.1.
func (u *Usage) AppendJSON(dst []byte) []byte {
	dst = u.appendCounts(dst, `{"input_tokens":`, `,"output_tokens":`)
	if u.hasCached {
		dst = append(dst, `,"cached_input_tokens":`...)
		dst = strconv.AppendInt(dst, u.Cached, 10)
	}
	if u.hasReasoning {
		dst = append(dst, `,"reasoning_tokens":`...)
		dst = strconv.AppendInt(dst, u.Reasoning, 10)
	}
	return append(dst, '}')
}
