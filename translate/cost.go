package translate

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// KeyCost is the meta key of the reply's cost in US dollars (SPEC 9.2).
const KeyCost = "cost_usd"

// SetCostHeader records the cost in LiteLLM's x-litellm-response-cost
// header, which the caller reads before the body: its rank (costRank), not
// that order, decides which figure wins.
func (r *Reply) SetCostHeader(v string) {
	if v == "" {
		return // most replies: no header, and no error value made
	}
	if usd, err := strconv.ParseFloat(v, 64); err == nil {
		r.setRankedCost(usd, costHeader)
	}
}

// costRank orders the cost figures as SPEC 9.2 takes them, whatever order
// they come in: a figure replaces one of a lower rank; of one rank the
// first wins. A negative, infinite or NaN figure is not a cost.
type costRank uint8

const (
	costNone   costRank = iota
	costPrices          // from the prices table: only when the upstream gave none
	costHustle          // Hustle's costUsd
	costHeader          // x-litellm-response-cost
	costUsage           // usage.cost (OpenRouter), in any protocol's usage object
)

func (r *Reply) setRankedCost(usd float64, rank costRank) {
	if rank <= r.costRank || usd < 0 || math.IsInf(usd, 0) || math.IsNaN(usd) {
		return
	}
	r.Cost, r.HasCost, r.costRank = usd, true, rank
}

// setCostFrom records a usage object's cost (OpenRouter's usage.cost).
func (r *Reply) setCostFrom(usage gjson.Result) {
	if c := usage.Get("cost"); c.Type == gjson.Number {
		r.setRankedCost(c.Num, costUsage)
	}
}

// appendCost appends a cost as its shortest decimal, rounded to 9 places.
func appendCost(dst []byte, usd float64) []byte {
	usd = math.Round(usd*1e9) / 1e9
	return strconv.AppendFloat(dst, usd, 'f', -1, 64)
}

// Price is one row of the prices table (SPEC 9.2): US dollars per million
// tokens for the models its glob matches.
type Price struct {
	// Model is a model glob (SPEC 1): * and ? match / too.
	Model string `json:"model"`
	// Input and Output are the prices of input and output tokens.
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput is the price of cached input tokens; nil: Input.
	CachedInput *float64 `json:"cached_input,omitempty"`
}

// PriceOf returns the first row whose glob matches model.
func PriceOf(prices []Price, model string) (*Price, bool) {
	if model == "" {
		return nil, false
	}
	for i := range prices {
		if MatchModel(prices[i].Model, model) {
			return &prices[i], true
		}
	}
	return nil, false
}

// Cost is the cost of usage at this price: (input − cached) × input +
// cached × cached input + output × output, over one million.
func (p *Price) Cost(u *Usage) float64 {
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	cached := min(u.Cached, u.Input)
	return (float64(u.Input-cached)*p.Input + float64(cached)*cachedPrice + float64(u.Output)*p.Output) / 1e6
}
