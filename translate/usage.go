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
	if v.Type != gjson.Number || v.Num < 0 || v.Num > 1<<53 {
		return 0, false
	}
	return int64(v.Num), true
}

// usageShape names where one protocol's usage object keeps each count.
type usageShape struct{ input, output, total, cached, reasoning string }

var (
	chatUsage = usageShape{"prompt_tokens", "completion_tokens", "total_tokens",
		"prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"}
	responsesUsage = usageShape{"input_tokens", "output_tokens", "total_tokens",
		"input_tokens_details.cached_tokens", "output_tokens_details.reasoning_tokens"}
)

// ReadChat replaces u with a chat completion's usage object. It reports
// false, changing nothing, when usage holds no count.
func (u *Usage) ReadChat(usage gjson.Result) bool { return u.read(usage, &chatUsage) }

// ReadResponses replaces u with a Responses API usage object.
func (u *Usage) ReadResponses(usage gjson.Result) bool { return u.read(usage, &responsesUsage) }

func (u *Usage) read(usage gjson.Result, k *usageShape) bool {
	in, okIn := count(usage.Get(k.input))
	out, okOut := count(usage.Get(k.output))
	if !u.replace(in, okIn, out, okOut) {
		return false
	}
	if n, ok := count(usage.Get(k.total)); ok {
		u.setTotal(n)
	}
	if n, ok := count(usage.Get(k.cached)); ok {
		u.setCached(n)
	}
	if n, ok := count(usage.Get(k.reasoning)); ok {
		u.setReasoning(n)
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
	plain, okPlain := count(usage.Get("input_tokens"))
	read, okRead := count(usage.Get("cache_read_input_tokens"))
	made, okMade := count(usage.Get("cache_creation_input_tokens"))
	out, okOut := count(usage.Get("output_tokens"))
	if !okPlain && !okRead && !okMade && !okOut {
		return false
	}
	if okPlain {
		u.anthropicPlain = plain
	}
	if okRead {
		u.anthropicRead = read
		u.setCached(read)
	}
	if okMade {
		u.anthropicMade = made
	}
	if okPlain || okRead || okMade {
		u.setInput(u.anthropicPlain + u.anthropicRead + u.anthropicMade)
	}
	if okOut {
		u.setOutput(out)
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
