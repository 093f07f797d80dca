// The community Go client, github.com/sashabaranov/go-openai, through
// Caddy + llm_meta. Its response types have fixed fields only, so an app
// reads meta.tools_used from the bytes: in a stream, each chunk's raw JSON
// (RecvRaw, then the chunk and its meta decoded from the same bytes); for
// a JSON reply, the body as its HTTP client received it (a RoundTripper
// that keeps a copy).
package goopenai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/llm-meta/llm_meta/clients/go/stack"
)

var st *stack.Stack

func TestMain(m *testing.M) { stack.Main(m, &st) }

// withMeta is a reply or chunk with the meta an app reads here.
type withMeta struct {
	Meta *struct {
		ToolsUsed []string    `json:"tools_used"`
		Usage     stack.Usage `json:"usage"`
		CostUSD   *float64    `json:"cost_usd"`
	} `json:"meta"`
}

// bodyKeeper is the app's RoundTripper: it keeps a copy of the last
// response body as the client reads it.
type bodyKeeper struct {
	mu   sync.Mutex
	last bytes.Buffer
}

func (k *bodyKeeper) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.last.Reset()
	k.mu.Unlock()
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, writerFunc(func(p []byte) (int, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.last.Write(p)
	})), resp.Body}
	return resp, nil
}

func (k *bodyKeeper) body() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return bytes.Clone(k.last.Bytes())
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func client(keeper *bodyKeeper) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = st.Base + "/v1"
	if keeper != nil {
		cfg.HTTPClient = &http.Client{Transport: keeper}
	}
	return openai.NewClientWithConfig(cfg)
}

func request(model string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    model,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "What is the weather in Paris?"}},
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestJSON(t *testing.T) {
	for _, model := range []string{"json-tools", "json-meta"} {
		t.Run(model, func(t *testing.T) {
			want := st.Scenario(model)
			keeper := &bodyKeeper{}
			resp, err := client(keeper).CreateChatCompletion(ctx(t), request(model))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Choices[0].Message.Content; got != want.Text {
				t.Errorf("content %q, want %q", got, want.Text)
			}
			if got := string(resp.Choices[0].FinishReason); got != want.FinishReason {
				t.Errorf("finish_reason %q, want %q", got, want.FinishReason)
			}
			var m withMeta
			if err := json.Unmarshal(keeper.body(), &m); err != nil {
				t.Fatalf("the kept body: %v", err)
			}
			if m.Meta == nil || !slices.Equal(m.Meta.ToolsUsed, want.ToolsUsed) {
				t.Fatalf("meta %+v, want tools_used %v", m.Meta, want.ToolsUsed)
			}
			want.CheckUsage(t, m.Meta.Usage, m.Meta.CostUSD)
			if model == "json-tools" {
				var names []string
				for _, tc := range resp.Choices[0].Message.ToolCalls {
					names = append(names, tc.Function.Name)
				}
				if !slices.Equal(names, []string{"get_weather", "search_web"}) {
					t.Errorf("tool calls %v", names)
				}
			}
		})
	}
}

func TestStream(t *testing.T) {
	for _, model := range []string{"sse-tools", "sse-meta", "v4-data", "v7-ui", "sse-text"} {
		t.Run(model, func(t *testing.T) {
			want := st.Scenario(model)
			stream, err := client(nil).CreateChatCompletionStream(ctx(t), request(model))
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			var text strings.Builder
			var finish string
			var toolsUsed [][]string
			var last withMeta // the last meta chunk
			chunks := 0
			for {
				raw, err := stream.RecvRaw()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("after %d chunks: %v", chunks, err)
				}
				chunks++
				var chunk openai.ChatCompletionStreamResponse
				var m withMeta
				if err := json.Unmarshal(raw, &chunk); err != nil {
					t.Fatalf("chunk %s: %v", raw, err)
				}
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatalf("chunk %s: %v", raw, err)
				}
				for _, c := range chunk.Choices {
					text.WriteString(c.Delta.Content)
					if c.FinishReason != "" {
						finish = string(c.FinishReason)
					}
				}
				if m.Meta != nil {
					if len(chunk.Choices) != 0 {
						t.Errorf("the meta chunk has choices: %s", raw)
					}
					toolsUsed = append(toolsUsed, m.Meta.ToolsUsed)
					last = m
				}
			}
			if text.String() != want.Text {
				t.Errorf("text %q, want %q", text.String(), want.Text)
			}
			if finish != want.FinishReason {
				t.Errorf("finish_reason %q, want %q", finish, want.FinishReason)
			}
			switch {
			case len(want.ToolsUsed) == 0 && len(toolsUsed) != 0:
				t.Errorf("meta chunks %v in a stream with nothing to add", toolsUsed)
			case len(want.ToolsUsed) > 0 && (len(toolsUsed) != 1 || !slices.Equal(toolsUsed[0], want.ToolsUsed)):
				t.Errorf("meta chunks with tools_used %v, want one with %v", toolsUsed, want.ToolsUsed)
			}
			if last.Meta != nil {
				want.CheckUsage(t, last.Meta.Usage, last.Meta.CostUSD)
			}
		})
	}
	t.Run("Recv reads the same stream without error", func(t *testing.T) {
		stream, err := client(nil).CreateChatCompletionStream(ctx(t), request("sse-tools"))
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Close()
		var text strings.Builder
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range resp.Choices {
				text.WriteString(c.Delta.Content)
			}
		}
		if want := st.Scenario("sse-tools").Text; text.String() != want {
			t.Errorf("text %q, want %q", text.String(), want)
		}
	})
}
