package demogateway

import (
	"math"
	"strings"
	"testing"
)

// A two-turn conversation in each protocol's request shape.
const (
	chatTwoTurns = `{"model":"%s","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"},
		{"role":"assistant","content":"Hi! How can I help?"},{"role":"user","content":"Weather in Paris?"}]%s}`
	responsesTwoTurns = `{"model":"%s","instructions":"Be brief.","input":[{"role":"user","content":"Hello there"},
		{"role":"assistant","content":"Hi! How can I help?"},{"role":"user","content":"Weather in Paris?"}]%s}`
	messagesTwoTurns = `{"model":"%s","max_tokens":512,"system":"Be brief.","messages":[{"role":"user","content":"Hello there"},
		{"role":"assistant","content":"Hi! How can I help?"},{"role":"user","content":"Weather in Paris?"}]%s}`
)

func body(format, model, extra string) string {
	return strings.Replace(strings.Replace(format, "%s", model, 1), "%s", extra, 1)
}

// The same conversation reports the same token counts in every protocol,
// each in its own shape.
func TestUsageSameInEveryProtocol(t *testing.T) {
	c := decode[completion](t, post(t, "/v1/chat/completions", body(chatTwoTurns, "demo-openai", "")).Body.Bytes()).Usage
	if c.PromptTokens == 0 || c.CompletionTokens == 0 || c.TotalTokens != c.PromptTokens+c.CompletionTokens {
		t.Fatalf("chat usage = %+v", c)
	}
	// system + the first two turns: 9 + 11 + 19 characters, about 4 a token.
	if c.PromptTokensDetails.CachedTokens != 39/4 || c.CompletionTokensDetails.ReasoningTokens != 0 {
		t.Errorf("chat usage details = %+v", c)
	}

	r := decode[responseObject](t, post(t, "/v1/responses", body(responsesTwoTurns, "demo-openai", "")).Body.Bytes()).Usage
	if r.InputTokens != c.PromptTokens || r.InputTokensDetails.CachedTokens != c.PromptTokensDetails.CachedTokens ||
		r.OutputTokens != c.CompletionTokens || r.TotalTokens != c.TotalTokens {
		t.Errorf("responses usage %+v differs from chat's %+v", r, c)
	}

	a := decode[anthropicMessage](t, post(t, "/v1/messages", body(messagesTwoTurns, "demo-openai", "")).Body.Bytes()).Usage
	if a.InputTokens+a.CacheReadInputTokens+a.CacheCreationInputTokens != c.PromptTokens ||
		a.CacheReadInputTokens != c.PromptTokensDetails.CachedTokens || a.OutputTokens != c.CompletionTokens {
		t.Errorf("anthropic usage %+v differs from chat's %+v", a, c)
	}
}

// demo-openrouter reports its price as usage.cost in every protocol, JSON
// and stream; other models never do.
func TestCostLikeOpenRouter(t *testing.T) {
	c := decode[completion](t, post(t, "/v1/chat/completions", body(chatTwoTurns, "demo-openrouter", "")).Body.Bytes()).Usage
	if c.Cost == nil {
		t.Fatalf("no cost in chat usage")
	}
	want := (float64(c.PromptTokens-c.PromptTokensDetails.CachedTokens)*0.15 +
		float64(c.PromptTokensDetails.CachedTokens)*0.075 + float64(c.CompletionTokens)*0.60) / 1e6
	if math.Abs(*c.Cost-want) > 1e-9 || *c.Cost <= 0 {
		t.Errorf("cost %v, want %v", *c.Cost, want)
	}
	cost := *c.Cost

	// chat stream: in the usage chunk, when usage is asked for
	data := sseData(t, post(t, "/v1/chat/completions",
		body(chatTwoTurns, "demo-openrouter", `,"stream":true,"stream_options":{"include_usage":true}`)).Body.String())
	cs := chunks(t, data)
	if u := decode[usage](t, cs[len(cs)-1].Usage); u.Cost == nil || *u.Cost != cost {
		t.Errorf("chat stream usage chunk: %s", data[len(data)-2])
	}

	// Responses: JSON and response.completed
	r := decode[responseObject](t, post(t, "/v1/responses", body(responsesTwoTurns, "demo-openrouter", "")).Body.Bytes())
	if r.Usage.Cost == nil || *r.Usage.Cost != cost {
		t.Errorf("responses usage = %+v", r.Usage)
	}
	evs := namedEvents(t, post(t, "/v1/responses", body(responsesTwoTurns, "demo-openrouter", `,"stream":true`)).Body.String())
	_, completed := accumulateResponse(t, evs)
	if got := completed["usage"].(jsonObject)["cost"]; got != cost {
		t.Errorf("response.completed usage cost = %v, want %v", got, cost)
	}

	// Anthropic: JSON usage, and message_delta's usage in the stream
	a := decode[anthropicMessage](t, post(t, "/v1/messages", body(messagesTwoTurns, "demo-openrouter", "")).Body.Bytes())
	if a.Usage.Cost == nil || *a.Usage.Cost != cost {
		t.Errorf("anthropic usage = %+v", a.Usage)
	}
	evs = namedEvents(t, post(t, "/v1/messages", body(messagesTwoTurns, "demo-openrouter", `,"stream":true`)).Body.String())
	for _, e := range evs {
		if (e.name == "message_delta") != strings.Contains(string(e.data), `"cost":`) {
			t.Errorf("the cost goes once, in message_delta's usage: %s %s", e.name, e.data)
		}
	}
	if got := accumulateMessage(t, evs)["usage"].(jsonObject)["cost"]; got != cost {
		t.Errorf("anthropic stream cost = %v, want %v", got, cost)
	}

	for _, tc := range [][2]string{
		{"/v1/chat/completions", body(chatTwoTurns, "demo-openai", `,"stream":true,"stream_options":{"include_usage":true}`)},
		{"/v1/chat/completions", body(chatTwoTurns, "demo-structured", "")},
		{"/v1/responses", body(responsesTwoTurns, "gpt-4.1", `,"stream":true`)},
		{"/v1/messages", body(messagesTwoTurns, "claude-sonnet-4-5", "")},
	} {
		if b := post(t, tc[0], tc[1]).Body.String(); strings.Contains(b, `"cost"`) {
			t.Errorf("%s %s: cost from a model that does not report it", tc[0], tc[1])
		}
	}
}
