package translate

import (
	"math"
	"strconv"

	"github.com/tidwall/gjson"
)

// KeyCost is the meta key of the reply's cost in US dollars (SPEC 9.2).
const KeyCost = "cost_usd"

// SetCostHeader records the cost in LiteLLM's x-litellm-response-cost
// header, which the caller reads: like Hustle's costUsd (hustle.go, a lower
// rank), a cost the upstream reported outside a usage object. A value that
// is not a number, or a negative, infinite or NaN figure, is not a cost. Of
// the upstream's own figures SPEC 9.2 takes usage.cost first, the header
// next, Hustle's last, whatever order they come in (the header is read
// before the body): a figure replaces one of a lower rank; of one rank the
// first wins.
func (r *Reply) SetCostHeader(v string) {
	if v == "" {
		return // most replies: no header, and no error value made
	}
	if usd, err := strconv.ParseFloat(v, 64); err == nil {
		r.setRankedCost(usd, costHeader)
	}
}

// costRank orders the upstream's own cost figures (SPEC 9.2).
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
