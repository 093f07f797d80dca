package translate

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// KeyCost is the meta key of the reply's cost in US dollars (SPEC 9.2).
const KeyCost = "cost_usd"

// SetCost records a cost the upstream reported (usage.cost, LiteLLM's
// x-litellm-response-cost header, Hustle's costUsd); the first one found
// wins, as SPEC 9.2 orders them. Negative, infinite or NaN figures are not
// costs.
func (r *Reply) SetCost(usd float64) {
	if r.HasCost || usd < 0 || math.IsInf(usd, 0) || math.IsNaN(usd) {
		return
	}
	r.Cost, r.HasCost = usd, true
}

// setCostFrom records a usage object's cost (OpenRouter's usage.cost).
func (r *Reply) setCostFrom(usage gjson.Result) {
	if c := usage.Get("cost"); c.Type == gjson.Number {
		r.SetCost(c.Num)
	}
}

// ParseCostHeader reads a cost header's value (x-litellm-response-cost).
func ParseCostHeader(v string) (float64, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// appendCost appends a cost as its shortest decimal, rounded to 9 places.
func appendCost(dst []byte, usd float64) []byte {
	usd = math.Round(usd*1e9) / 1e9
	return strconv.AppendFloat(dst, usd, 'f', -1, 64)
}
