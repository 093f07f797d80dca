package translate

import (
	"bytes"
	"testing"

	"github.com/tidwall/gjson"
)

// The request side of SPEC 4.5 and 9.1: the protocol a request speaks,
// what each keeps of its body, and stream_usage.

func TestRequestKindOf(t *testing.T) {
	cases := []struct {
		path      string
		anthropic bool
		want      RequestKind
	}{
		{"/v1/chat/completions", false, RequestChat},
		{"/v1/responses", false, RequestResponses},
		{"/openai/v1/responses", false, RequestResponses},
		{"/responses", false, RequestResponses},
		{"/v1/myresponses", false, RequestChat},
		{"/v1/responses/resp_1", false, RequestChat},
		{"/v1/messages", false, RequestAnthropic},
		{"/anthropic/v1/messages", false, RequestAnthropic},
		{"/v1/messages/count_tokens", false, RequestChat},
		{"/v1/chat/completions", true, RequestAnthropic},
		{"/", true, RequestAnthropic},
		{"/v1/responses", true, RequestResponses},
		{"", false, RequestChat},
	}
	for _, c := range cases {
		if got := RequestKindOf(c.path, anthropicHeader(c.anthropic)); got != c.want {
			t.Errorf("%q (anthropic-version %v): %v, want %v", c.path, c.anthropic, got, c.want)
		}
	}
}

// stream_usage (SPEC 9.1): a chat stream that does not ask for its usage
// is asked, other stream_options keys kept; nothing else is.
func TestRewriteRequestStreamUsage(t *testing.T) {
	chatUsage := RequestOptions{StreamUsage: true}
	cases := []struct {
		name     string
		body     string
		opts     RequestOptions
		want     string // "" = body unchanged
		withhold bool
	}{
		{"asked", `{"model":"m","stream":true,"messages":[]}`, chatUsage,
			`{"model":"m","stream":true,"messages":[],"stream_options":{"include_usage":true}}`, true},
		{"other keys kept", `{"stream":true,"stream_options":{"include_obfuscation":false}}`, chatUsage,
			`{"stream":true,"stream_options":{"include_obfuscation":false,"include_usage":true}}`, true},
		{"include_usage false", `{"stream":true,"stream_options":{"include_usage":false,"x":1}}`, chatUsage,
			`{"stream":true,"stream_options":{"include_usage":true,"x":1}}`, true},
		{"stream_options null", `{"stream":true,"stream_options":null}`, chatUsage,
			`{"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"with a flag", `{"stream":true,"run_once":true}`, chatUsage,
			`{"stream":true,"stream_options":{"include_usage":true}}`, true},
		{"the client asked", `{"stream":true,"stream_options":{"include_usage":true}}`, chatUsage, "", false},
		{"not streaming", `{"stream":false,"messages":[]}`, chatUsage, "", false},
		{"no stream key", `{"messages":[]}`, chatUsage, "", false},
		{"stream not a boolean", `{"stream":"true"}`, chatUsage, "", false},
		{"stream_usage off", `{"stream":true}`, RequestOptions{}, "", false},
		{"responses", `{"model":"gpt-4.1","input":"x","stream":true}`, RequestOptions{StreamUsage: true, Kind: RequestResponses}, "", false},
		{"anthropic", `{"model":"claude","stream":true,"messages":[]}`, RequestOptions{StreamUsage: true, Kind: RequestAnthropic}, "", false},
	}
	for _, c := range cases {
		body := []byte(c.body)
		res, ok := RewriteRequest(body, c.opts)
		if !ok {
			t.Fatalf("%s: not an object", c.name)
		}
		if c.want == "" {
			if res.Changed || !bytes.Equal(res.Body, body) {
				t.Fatalf("%s: changed into %s", c.name, res.Body)
			}
		} else if !res.Changed || !sameJSON(t, string(res.Body), c.want) {
			t.Fatalf("%s:\n got %s (changed %v)\nwant %s", c.name, res.Body, res.Changed, c.want)
		}
		if res.WithholdUsage != c.withhold {
			t.Fatalf("%s: WithholdUsage %v", c.name, res.WithholdUsage)
		}
		if string(body) != c.body {
			t.Fatalf("%s: the input was written to", c.name)
		}
		checkRequestUnchanged(t, body, c.opts)
	}
}

// A request that repeats stream_options, or include_usage in it, is read
// as JSON.parse reads it (the last copy counts). When that does not ask
// for the usage, the body sent upstream holds one stream_options, with the
// last copy's other keys and one include_usage, true: an upstream reading
// the first copy and one reading the last both send the usage chunk that
// the module then withholds. When the last copy asks, nothing changes and
// nothing is withheld, as for a client that asked.
func TestRewriteRequestStreamUsageRepeated(t *testing.T) {
	opts := RequestOptions{StreamUsage: true}
	asks := []string{
		`{"stream":true,"stream_options":{"include_usage":false},"stream_options":{"include_usage":true}}`,
		`{"stream":true,"stream_options":{"include_usage":false,"include_usage":true}}`,
		`{"stream":true,"stream_options":{},"stream_options":{"include_usage":false,"include_usage":true}}`,
	}
	for _, body := range asks {
		res, ok := RewriteRequest([]byte(body), opts)
		if !ok || res.Changed || res.WithholdUsage || string(res.Body) != body {
			t.Errorf("%s: changed into %s (withhold %v)", body, res.Body, res.WithholdUsage)
		}
		checkRequestUnchanged(t, []byte(body), opts)
	}
	doesNotAsk := []struct{ body, keep string }{
		{`{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"x":1}}`, `"x":1`},
		{`{"stream":true,"stream_options":{"include_usage":true},"stream_options":{"include_usage":false,"x":1},"model":"m"}`, `"x":1`},
		{`{"stream_options":{"include_usage":true,"include_usage":false,"x":[1]},"stream":true}`, `"x":[1]`},
		{`{"stream":true,"stream_options":{"include_usage":true},"stream_options":null}`, ``},
		{`{"run_once":true,"stream":true,"stream_options":{"y":2},"stream_options":{"include_usage":false}}`, ``},
	}
	for _, c := range doesNotAsk {
		res, ok := RewriteRequest([]byte(c.body), opts)
		if !ok || !res.Changed || !res.WithholdUsage {
			t.Errorf("%s: changed %v, withhold %v", c.body, res.Changed, res.WithholdUsage)
			continue
		}
		var so []gjson.Result
		gjson.ParseBytes(res.Body).ForEach(func(k, v gjson.Result) bool {
			if k.Str == "stream_options" {
				so = append(so, v)
			}
			return true
		})
		if len(so) != 1 {
			t.Errorf("%s: sent upstream as %s, want one stream_options", c.body, res.Body)
			continue
		}
		if asked, copies := includeUsage(so[0].Raw, 0); copies != 1 || !asked || so[0].Get("include_usage").Type != gjson.True {
			t.Errorf("%s: sent upstream as %s, want one include_usage, true", c.body, res.Body)
			continue
		}
		want := `{"include_usage":true}`
		if c.keep != "" {
			want = "{" + c.keep + `,"include_usage":true}`
		}
		if so[0].Raw != want {
			t.Errorf("%s: stream_options %s, want %s", c.body, so[0].Raw, want)
		}
		if gjson.GetBytes(res.Body, "stream").Type != gjson.True || gjson.GetBytes(res.Body, "run_once").Exists() {
			t.Errorf("%s: sent upstream as %s", c.body, res.Body)
		}
	}
}

// Responses and Anthropic requests lose the flags of SPEC 3 and nothing
// else: no structured mode, no trimming, no stream_options.
func TestRewriteRequestOtherKinds(t *testing.T) {
	cases := []struct {
		kind       RequestKind
		body, want string
	}{
		{RequestResponses,
			`{"model":"gpt-4.1","input":[{"role":"user","content":"Hello there, how are you?"}],"run_once":true,"return_final_only":false,"enable_structured_output":true,"stream":true}`,
			`{"model":"gpt-4.1","input":[{"role":"user","content":"Hello there, how are you?"}],"stream":true}`},
		{RequestAnthropic,
			`{"model":"claude","max_tokens":10,"enable_structured_output":true,"messages":[{"role":"user","content":"Hello there, how are you?"}],"return_final_only":true,"stream":true}`,
			`{"model":"claude","max_tokens":10,"messages":[{"role":"user","content":"Hello there, how are you?"}],"stream":true}`},
		{RequestResponses, `{"model":"gpt-4.1","input":"x"}`, ""},
	}
	for _, c := range cases {
		opts := RequestOptions{Kind: c.kind, StructuredModels: []string{"*"}, MaxPromptChars: 5, StreamUsage: true}
		res, ok := RewriteRequest([]byte(c.body), opts)
		if !ok {
			t.Fatalf("%s: not an object", c.body)
		}
		if c.want == "" {
			if res.Changed || res.Body == nil || string(res.Body) != c.body {
				t.Fatalf("%s: changed into %s", c.body, res.Body)
			}
			continue
		}
		if !res.Changed || !sameJSON(t, string(res.Body), c.want) {
			t.Fatalf("kind %v:\n got %s\nwant %s", c.kind, res.Body, c.want)
		}
		if res.Structured || res.WithholdUsage || !res.Meta.Empty() {
			t.Fatalf("kind %v: structured %v, withhold usage %v, meta %s", c.kind, res.Structured, res.WithholdUsage, res.Meta.JSON())
		}
		if wantRunOnce := bytes.Contains([]byte(c.body), []byte(`"run_once":true`)) || bytes.Contains([]byte(c.body), []byte(`"return_final_only":true`)); res.RunOnce != wantRunOnce {
			t.Fatalf("kind %v: RunOnce %v", c.kind, res.RunOnce)
		}
	}
}

// Model globs (SPEC 1): the whole name; * and ? match / too.
func TestMatchModel(t *testing.T) {
	cases := []struct {
		glob, model string
		want        bool
	}{
		{"gpt-4o", "gpt-4o", true},
		{"gpt-4o", "gpt-4o-mini", false},
		{"gpt-4o", "openai/gpt-4o", false},
		{"GPT-4o", "gpt-4o", false},
		{"*", "", true},
		{"*", "openai/gpt-4o", true},
		{"openai/*", "openai/gpt-4o", true},
		{"openai/*", "openai/azure/gpt-4o", true},
		{"*/gpt-4o", "azure/openai/gpt-4o", true},
		{"*gpt-4o", "openai/gpt-4o", true},
		{"openai/*", "anthropic/claude", false},
		{"a?b", "a/b", true},
		{"a?b", "a//b", false},
		{"claude-*", "claude-sonnet-4-5", true},
		{"claude-*", "anthropic/claude-sonnet", false},
		{"gpt-4o-mini-????-??-??", "gpt-4o-mini-2024-07-18", true},
		{"[gc]*", "claude-3", true},
		{"[^g]*", "gpt-4o", false},
		{"[^g]*", "claude/x", true},
		{"[a-z]*/x", "openai/x", true},
		{`gpt\*`, "gpt*", true},
		{`gpt\*`, "gpt-4o", false},
		{"[", "[", false},
	}
	for _, c := range cases {
		if got := MatchModel(c.glob, c.model); got != c.want {
			t.Errorf("MatchModel(%q, %q) = %v, want %v", c.glob, c.model, got, c.want)
		}
	}
}

// anthropicHeader is a request's headers with an anthropic-version or not.
func anthropicHeader(on bool) Header {
	if !on {
		return nil
	}
	return Header{"Anthropic-Version": {"2023-06-01"}}
}
