// The official Go client, github.com/openai/openai-go, through Caddy +
// llm_meta. The client keeps fields it does not model in JSON.ExtraFields,
// so an app reads meta.tools_used there: on the completion (JSON) and on
// the chunk that carries it (stream).
package openaigo

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/llm-meta/llm_meta/clients/go/stack"
)

var st *stack.Stack

func TestMain(m *testing.M) { stack.Main(m, &st) }

// meta is the part of llm_meta's meta an app reads here.
type meta struct {
	ToolsUsed []string    `json:"tools_used"`
	Usage     stack.Usage `json:"usage"`
	CostUSD   *float64    `json:"cost_usd"`
}

func client() *openai.Client {
	c := openai.NewClient(option.WithBaseURL(st.Base+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &c
}

func params(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    model,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is the weather in Paris?")},
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return c
}

// metaOf decodes an ExtraFields "meta" entry; ok is false when absent.
func metaOf(t *testing.T, raw string) (m meta, ok bool) {
	t.Helper()
	if raw == "" {
		return m, false
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("meta %s: %v", raw, err)
	}
	return m, true
}

func TestJSON(t *testing.T) {
	for _, model := range []string{"json-tools", "json-meta"} {
		t.Run(model, func(t *testing.T) {
			want := st.Scenario(model)
			c, err := client().Chat.Completions.New(ctx(t), params(model))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Choices[0].Message.Content; got != want.Text {
				t.Errorf("content %q, want %q", got, want.Text)
			}
			if got := string(c.Choices[0].FinishReason); got != want.FinishReason {
				t.Errorf("finish_reason %q, want %q", got, want.FinishReason)
			}
			m, ok := metaOf(t, c.JSON.ExtraFields["meta"].Raw())
			if !ok || !slices.Equal(m.ToolsUsed, want.ToolsUsed) {
				t.Errorf("meta.tools_used %v (present: %v), want %v", m.ToolsUsed, ok, want.ToolsUsed)
			}
			want.CheckUsage(t, m.Usage, m.CostUSD)
		})
	}
	t.Run("json-tools keeps its tool calls", func(t *testing.T) {
		c, err := client().Chat.Completions.New(ctx(t), params("json-tools"))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tc := range c.Choices[0].Message.ToolCalls {
			names = append(names, tc.Function.Name)
		}
		if !slices.Equal(names, []string{"get_weather", "search_web"}) {
			t.Errorf("tool calls %v", names)
		}
	})
}

func TestStream(t *testing.T) {
	for _, model := range []string{"sse-tools", "sse-meta", "v4-data", "v7-ui"} {
		t.Run(model, func(t *testing.T) {
			want := st.Scenario(model)
			stream := client().Chat.Completions.NewStreaming(ctx(t), params(model))
			var acc openai.ChatCompletionAccumulator
			var metas []meta
			var last openai.ChatCompletionChunk
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				if m, ok := metaOf(t, chunk.JSON.ExtraFields["meta"].Raw()); ok {
					metas = append(metas, m)
				}
				last = chunk
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if got := acc.Choices[0].Message.Content; got != want.Text {
				t.Errorf("text %q, want %q", got, want.Text)
			}
			if got := string(acc.Choices[0].FinishReason); got != want.FinishReason {
				t.Errorf("finish_reason %q, want %q", got, want.FinishReason)
			}
			if len(metas) != 1 || !slices.Equal(metas[0].ToolsUsed, want.ToolsUsed) {
				t.Fatalf("meta chunks %+v, want one with tools_used %v", metas, want.ToolsUsed)
			}
			// the client did not ask for usage: llm_meta did, and put it in meta
			want.CheckUsage(t, metas[0].Usage, metas[0].CostUSD)
			if _, ok := metaOf(t, last.JSON.ExtraFields["meta"].Raw()); !ok || len(last.Choices) != 0 {
				t.Errorf("the last chunk is not the meta chunk with no choices: %s", last.RawJSON())
			}
		})
	}
	t.Run("sse-text: no meta chunk", func(t *testing.T) {
		want := st.Scenario("sse-text")
		stream := client().Chat.Completions.NewStreaming(ctx(t), params("sse-text"))
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			acc.AddChunk(chunk)
			if _, ok := metaOf(t, chunk.JSON.ExtraFields["meta"].Raw()); ok {
				t.Errorf("a meta chunk in a stream with nothing to add: %s", chunk.RawJSON())
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if got := acc.Choices[0].Message.Content; got != want.Text {
			t.Errorf("text %q, want %q", got, want.Text)
		}
	})
	t.Run("sse-tools: the accumulated tool calls", func(t *testing.T) {
		stream := client().Chat.Completions.NewStreaming(ctx(t), params("sse-tools"))
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		var calls [][2]string
		for _, tc := range acc.Choices[0].Message.ToolCalls {
			calls = append(calls, [2]string{tc.Function.Name, tc.Function.Arguments})
		}
		if want := [][2]string{{"get_weather", `{"city":"Paris"}`}, {"search_web", `{"q":"Paris events"}`}}; !slices.Equal(calls, want) {
			t.Errorf("tool calls %v, want %v", calls, want)
		}
	})
}
