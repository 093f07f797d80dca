package translate

import (
	"strconv"
	"strings"
	"testing"
)

// The prefix-2 elements of the datastream-hustle conformance case.
const (
	hustleReasoningEl    = `{"type":"reasoning","thinking":"The user asks what is hot on Polymarket, which maps to the polymarket category.","networks":[],"categories":["required","polymarket"],"activeIntent":"Finding trending prediction market events on Polymarket","confidence":0.96,"timestamp":"2025-12-13T08:35:13.689Z"}`
	hustleIntentEl       = `{"type":"intent_context","intentContext":{"networks":[],"categories":["required","polymarket"],"activeIntent":"Finding trending prediction market events on Polymarket","turnsSinceUpdate":0,"lastConfidence":0.96},"categories":["required","polymarket"],"confidence":0.96,"stickyFallbackApplied":false,"timestamp":"2025-12-13T08:35:13.689Z"}`
	hustleDevToolsEl     = `{"type":"dev_tools_info","qualifiedCategories":["required","polymarket"],"availableTools":["wallet","calculateAdjustedPrice","getPolyMarketEvents","searchPolyMarketEvents"],"toolCount":27,"timestamp":"2025-12-13T08:35:13.689Z"}`
	hustleTokenUsageEl   = `{"type":"token_usage","message":"[PATH_1_TOKENS] Actual usage - Input: 471169, Output: 754","tokensIn":471169,"tokensOut":754,"cachedTokens":330626,"totalTokens":141297,"threshold":30000,"thresholdReached":true,"messageRetentionCount":1,"costUsd":1.2694071,"toolsExecuted":1,"maxSteps":7,"maxToolsReached":false,"timedOut":false}`
	hustleCaseSummary    = `{"type":"key_value","entries":[{"key":"Intent","value":"Finding trending prediction market events on Polymarket"},{"key":"Reasoning","value":"The user asks what is hot on Polymarket, which maps to the polymarket category."},{"key":"Categories","value":"required, polymarket"},{"key":"Confidence","value":"0.96"},{"key":"Available tools","value":"27"},{"key":"Tokens","value":"471169 in / 754 out"},{"key":"Cost","value":"$1.2694071"}]}`
	hustleCaseHustleJSON = `{"reasoning":` + hustleReasoningEl + `,"intent_context":` + hustleIntentEl + `,"dev_tools_info":` + hustleDevToolsEl + `,"token_usage":` + hustleTokenUsageEl + `}`
)

// The summary of the datastream-hustle conformance case, exactly.
func TestHustleSummaryOfConformanceCase(t *testing.T) {
	var h Hustle
	for _, el := range []string{hustleReasoningEl, hustleIntentEl, hustleDevToolsEl, hustleTokenUsageEl} {
		h.AddElement([]byte(el))
	}
	var m Meta
	m.AddTool("getPolyMarketEvents")
	h.AppendTo(&m, true)
	if got := string(m.Get(KeyHustle)); got != hustleCaseHustleJSON {
		t.Errorf("hustle:\n got %s\nwant %s", got, hustleCaseHustleJSON)
	}
	if got := string(m.Get(KeyStructuredResult)); got != hustleCaseSummary {
		t.Errorf("structured_result:\n got %s\nwant %s", got, hustleCaseSummary)
	}
	want := `{"tools_used":["getPolyMarketEvents"],"hustle":` + hustleCaseHustleJSON + `,"structured_result":` + hustleCaseSummary + `}`
	if got := string(m.JSON()); got != want {
		t.Errorf("meta:\n got %s\nwant %s", got, want)
	}
}

func TestHustleKindsReplaceAndKeepOrder(t *testing.T) {
	var h Hustle
	if !h.Empty() {
		t.Fatal("zero Hustle not empty")
	}
	h.AddElement([]byte(`{"type":"token_usage","tokensIn":1,"tokensOut":2}`))
	h.AddElement([]byte(` {"type":"reasoning","thinking":"first"} `))
	h.AddElement([]byte(`{"type":"other","x":1}`))
	h.AddElement([]byte(`{"type":"reasoning","thinking":"second"}`)) // replaces, keeps its place
	h.AddElement([]byte(`"plain"`))
	h.AddElement([]byte(`{"no":"type"}`))
	h.AddElement([]byte(`{"type":7}`))
	h.AddElement([]byte(`not json`)) // ignored
	h.AddElement([]byte(``))         // ignored
	if h.Empty() {
		t.Fatal("Hustle empty after elements")
	}
	var m Meta
	h.AppendTo(&m, false)
	want := `{"token_usage":{"type":"token_usage","tokensIn":1,"tokensOut":2},"reasoning":{"type":"reasoning","thinking":"second"},"data":[{"type":"other","x":1},"plain",{"no":"type"},{"type":7}]}`
	if got := string(m.Get(KeyHustle)); got != want {
		t.Errorf("hustle:\n got %s\nwant %s", got, want)
	}
	if m.Has(KeyStructuredResult) {
		t.Error("summary false gave a structured_result")
	}
}

func TestHustleDataCapped(t *testing.T) {
	var h Hustle
	for i := 0; i < 100; i++ {
		h.AddElement([]byte(strconv.Itoa(i)))
	}
	h.AddElement([]byte(`{"type":"path_info","tokensIn":3}`)) // kinds are not capped
	var m Meta
	h.AppendTo(&m, true)
	var nums []string
	for i := 0; i < MaxHustleData; i++ {
		nums = append(nums, strconv.Itoa(i))
	}
	want := `{"path_info":{"type":"path_info","tokensIn":3},"data":[` + strings.Join(nums, ",") + `]}`
	if got := string(m.Get(KeyHustle)); got != want {
		t.Errorf("hustle:\n got %s\nwant %s", got, want)
	}
}

func TestHustleOnlyDataNoSummary(t *testing.T) {
	var h Hustle
	h.AddElement([]byte(`{"type":"path_complete","path":"PATH_1","totalCostUsd":0.5}`))
	var m Meta
	h.AppendTo(&m, true)
	if got := string(m.JSON()); got != `{"hustle":{"data":[{"type":"path_complete","path":"PATH_1","totalCostUsd":0.5}]}}` {
		t.Errorf("meta %s", got)
	}
}

func TestHustleEmptyAppendsNothing(t *testing.T) {
	var h Hustle
	var m Meta
	h.AppendTo(&m, true)
	if !m.Empty() {
		t.Errorf("empty Hustle set %s", m.JSON())
	}
}

// A structured_result from upstream is never replaced by the summary.
func TestHustleSummaryNeverReplacesUpstream(t *testing.T) {
	var h Hustle
	h.AddElement([]byte(hustleReasoningEl))
	var m Meta
	m.MergeJSON([]byte(`{"structured_result":{"type":"list","items":["upstream"]}}`))
	h.AppendTo(&m, true)
	if got := string(m.Get(KeyStructuredResult)); got != `{"type":"list","items":["upstream"]}` {
		t.Errorf("structured_result replaced: %s", got)
	}
	if !m.Has(KeyHustle) {
		t.Error("hustle missing")
	}
}

func TestHustleSummaryRules(t *testing.T) {
	kv := func(pairs ...string) string {
		var b strings.Builder
		b.WriteString(`{"type":"key_value","entries":[`)
		for i := 0; i < len(pairs); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"key":` + string(JSONString(pairs[i])) + `,"value":` + string(JSONString(pairs[i+1])) + `}`)
		}
		return b.String() + "]}"
	}
	for _, tc := range []struct {
		name string
		els  []string
		want string // "" = no structured_result
	}{
		{"intent from intent_context when reasoning has none",
			[]string{`{"type":"reasoning","thinking":"t","activeIntent":""}`, `{"type":"intent_context","intentContext":{"activeIntent":"Buy"}}`},
			kv("Intent", "Buy", "Reasoning", "t")},
		{"reasoning's intent first",
			[]string{`{"type":"intent_context","intentContext":{"activeIntent":"B"}}`, `{"type":"reasoning","activeIntent":"A"}`},
			kv("Intent", "A")},
		{"categories from reasoning when dev_tools_info has none",
			[]string{`{"type":"reasoning","categories":["a","b"],"networks":["solana","base"]}`, `{"type":"dev_tools_info","qualifiedCategories":[],"toolCount":3}`},
			kv("Categories", "a, b", "Networks", "solana, base", "Available tools", "3")},
		{"empty lists give no entry",
			[]string{`{"type":"reasoning","categories":[],"networks":[""],"confidence":1}`},
			kv("Confidence", "1")},
		{"numbers as shortest decimals",
			[]string{`{"type":"reasoning","confidence":9.6e-1}`, `{"type":"token_usage","tokensIn":1e3,"tokensOut":12345678901234567890,"costUsd":0.0000001}`},
			kv("Confidence", "0.96", "Tokens", "1000 in / 12345678901234567890 out", "Cost", "$0.0000001")},
		{"a negative integer as written, a fraction without its trailing zero",
			[]string{`{"type":"reasoning","confidence":1.50}`, `{"type":"dev_tools_info","toolCount":-3}`},
			kv("Confidence", "1.5", "Available tools", "-3")},
		{"tokens from path_info when there is no token_usage",
			[]string{`{"type":"path_info","path":"PATH_1","tokensIn":100}`},
			kv("Tokens", "100 in")},
		{"token_usage first, cost of the same",
			[]string{`{"type":"path_info","tokensIn":1,"tokensOut":2,"costUsd":9}`, `{"type":"token_usage","tokensOut":754,"costUsd":1.5}`},
			kv("Tokens", "754 out", "Cost", "$1.5")},
		{"string values as they are",
			[]string{`{"type":"dev_tools_info","toolCount":"many"}`, `{"type":"reasoning","confidence":"high","thinking":null}`},
			kv("Confidence", "high", "Available tools", "many")},
		{"a kind with nothing to show gives no summary",
			[]string{`{"type":"intent_context","confidence":0.5}`},
			""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Hustle
			for _, el := range tc.els {
				h.AddElement([]byte(el))
			}
			var m Meta
			h.AppendTo(&m, true)
			if got := string(m.Get(KeyStructuredResult)); got != tc.want {
				t.Errorf("structured_result:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
