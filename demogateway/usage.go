package demogateway

import "math"

// OpenRouter-like prices of the cost-reporting model, in USD per million
// tokens (what OpenRouter charges for gpt-4o-mini).
const (
	priceInput       = 0.15
	priceCachedInput = 0.075
	priceOutput      = 0.60
)

// tokenCounts is one reply's usage, counted once and written in the shape of
// the protocol that carries it, so that the same request reports the same
// numbers whichever API it came through.
type tokenCounts struct {
	input  int // every input token, cached ones included
	cached int // of input, those a prompt cache served
	output int
	cost   *float64 // USD; only from the model that plays OpenRouter
}

// tokens counts the usage of a reply of completion tokens to req.
func (c *chatRequest) tokens(completion int) tokenCounts {
	t := tokenCounts{input: c.promptTokens(), cached: c.cachedTokens(), output: completion}
	if c.reportsCost() {
		usd := float64(t.input-t.cached)*priceInput + float64(t.cached)*priceCachedInput + float64(t.output)*priceOutput
		usd = math.Round(usd*1e3) / 1e9 // per million tokens, kept to 9 decimals as OpenRouter does
		t.cost = &usd
	}
	return t
}

// usage is OpenAI's chat completion usage, with the details OpenAI always
// sends and OpenRouter's cost.
type usage struct {
	PromptTokens            int               `json:"prompt_tokens"`
	CompletionTokens        int               `json:"completion_tokens"`
	TotalTokens             int               `json:"total_tokens"`
	PromptTokensDetails     promptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails completionDetails `json:"completion_tokens_details"`
	Cost                    *float64          `json:"cost,omitempty"`
}

type promptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type completionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

func (t tokenCounts) chat() usage {
	return usage{PromptTokens: t.input, CompletionTokens: t.output, TotalTokens: t.input + t.output,
		PromptTokensDetails: promptDetails{t.cached}, Cost: t.cost}
}

// responsesUsage is the Responses API's usage object.
type responsesUsage struct {
	InputTokens         int                `json:"input_tokens"`
	InputTokensDetails  inputTokensDetails `json:"input_tokens_details"`
	OutputTokens        int                `json:"output_tokens"`
	OutputTokensDetails completionDetails  `json:"output_tokens_details"`
	TotalTokens         int                `json:"total_tokens"`
	Cost                *float64           `json:"cost,omitempty"`
}

type inputTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

func (t tokenCounts) responses() *responsesUsage {
	return &responsesUsage{InputTokens: t.input, InputTokensDetails: inputTokensDetails{t.cached},
		OutputTokens: t.output, TotalTokens: t.input + t.output, Cost: t.cost}
}

// anthropicUsage is the Messages API's usage: input_tokens counts only the
// tokens the cache did not serve, as Anthropic counts them.
type anthropicUsage struct {
	InputTokens              int      `json:"input_tokens"`
	CacheCreationInputTokens int      `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int      `json:"cache_read_input_tokens"`
	OutputTokens             int      `json:"output_tokens"`
	Cost                     *float64 `json:"cost,omitempty"`
}

func (t tokenCounts) anthropic() anthropicUsage {
	return anthropicUsage{InputTokens: t.input - t.cached, CacheReadInputTokens: t.cached,
		OutputTokens: t.output, Cost: t.cost}
}
