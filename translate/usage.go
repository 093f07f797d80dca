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

	// Anthropic's three parts of the input, kept apart so that a
	// message_delta naming one of them updates the sum.
	anthropicPlain, anthropicRead, anthropicMade int64
}

// Known reports whether any count is known.
func (u *Usage) Known() bool { return u.hasInput || u.hasOutput }

// Reset forgets every count.
func (u *Usage) Reset() { *u = Usage{} }

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

// usageShape names where one protocol's usage object keeps each count, in
// the order of usageCounts: input, output, total, cached, reasoning (a
// dotted name is a path). An Anthropic usage object has its own rules
// (anthropicUsage).
type usageShape [5]string

var (
	chatUsage = usageShape{"prompt_tokens", "completion_tokens", "total_tokens",
		"prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"}
	responsesUsage = usageShape{"input_tokens", "output_tokens", "total_tokens",
		"input_tokens_details.cached_tokens", "output_tokens_details.reasoning_tokens"}
	// anthropicUsage: the uncached input, the cache reads, the cache
	// writes, the output.
	anthropicUsage = [4]string{"input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"}
)

// usageCount is one count of a usage object, when it gave it.
type usageCount struct {
	n  int64
	ok bool
}

// ReadChat replaces u with a chat completion's usage object. It reports
// false, changing nothing, when usage holds no count.
func (u *Usage) ReadChat(usage gjson.Result) bool { return u.read(usage, &chatUsage) }

// ReadResponses replaces u with a Responses API usage object.
func (u *Usage) ReadResponses(usage gjson.Result) bool { return u.read(usage, &responsesUsage) }

func (u *Usage) read(usage gjson.Result, k *usageShape) bool {
	var c [5]usageCount
	for i, path := range k {
		c[i].n, c[i].ok = count(usage.Get(path))
	}
	return u.apply(&c)
}

// apply replaces u with the counts of a usage object (usageShape's order).
func (u *Usage) apply(c *[5]usageCount) bool {
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

// UpdateAnthropic updates u with an Anthropic usage object: message_start's,
// then each message_delta's, whose counts replace the ones they name.
// input_tokens counts every input token: the uncached ones plus the cache
// reads and writes.
func (u *Usage) UpdateAnthropic(usage gjson.Result) bool {
	if !usage.IsObject() {
		return false
	}
	var c [4]usageCount
	for i, key := range anthropicUsage {
		c[i].n, c[i].ok = count(usage.Get(key))
	}
	return u.applyAnthropic(&c)
}

// applyAnthropic updates u with the counts of an Anthropic usage object
// (anthropicUsage's order).
func (u *Usage) applyAnthropic(c *[4]usageCount) bool {
	plain, read, made, out := c[0], c[1], c[2], c[3]
	if !plain.ok && !read.ok && !made.ok && !out.ok {
		return false
	}
	if plain.ok {
		u.anthropicPlain = plain.n
	}
	if read.ok {
		u.anthropicRead = read.n
		u.setCached(read.n)
	}
	if made.ok {
		u.anthropicMade = made.n
	}
	if plain.ok || read.ok || made.ok {
		u.setInput(u.anthropicPlain + u.anthropicRead + u.anthropicMade)
	}
	if out.ok {
		u.setOutput(out.n)
	}
	return true
}

// ReadAISDK replaces u with an AI SDK usage object (data stream d:, UI
// stream finish or message-metadata): promptTokens/completionTokens (AI SDK
// 4), inputTokens/outputTokens (5 and later) or their snake_case forms.
func (u *Usage) ReadAISDK(usage gjson.Result) bool {
	in, okIn := firstCount(usage, "inputTokens", "promptTokens", "input_tokens", "prompt_tokens")
	out, okOut := firstCount(usage, "outputTokens", "completionTokens", "output_tokens", "completion_tokens")
	if !u.replace(in, okIn, out, okOut) {
		return false
	}
	if n, ok := firstCount(usage, "totalTokens", "total_tokens"); ok {
		u.setTotal(n)
	}
	if n, ok := firstCount(usage, "cachedInputTokens", "cached_input_tokens"); ok {
		u.setCached(n)
	}
	if n, ok := firstCount(usage, "reasoningTokens", "reasoning_tokens"); ok {
		u.setReasoning(n)
	}
	return true
}

// ReadHustle replaces u with Hustle's token_usage (or path_info) element:
// tokensIn, tokensOut, cachedTokens. Its totalTokens counts something else,
// so the total is always input + output.
func (u *Usage) ReadHustle(el gjson.Result) bool {
	in, okIn := count(el.Get("tokensIn"))
	out, okOut := count(el.Get("tokensOut"))
	if !u.replace(in, okIn, out, okOut) {
		return false
	}
	if n, ok := count(el.Get("cachedTokens")); ok {
		u.setCached(n)
	}
	return true
}

// replace starts u anew with the input and output counts that are known;
// it reports false, changing nothing, when neither is.
func (u *Usage) replace(in int64, okIn bool, out int64, okOut bool) bool {
	if !okIn && !okOut {
		return false
	}
	u.Reset()
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

// TotalTokens is the upstream's total, else input + output.
func (u *Usage) TotalTokens() int64 {
	if u.hasTotal {
		return u.Total
	}
	return u.Input + u.Output
}

// AppendJSON appends the usage object of SPEC 9.1.
func (u *Usage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.Input, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.Output, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens(), 10)
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
