package translate

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
