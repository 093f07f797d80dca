package translate

import (
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// meta.usage (SPEC 9.1): one shape from every protocol's usage object.

func TestUsageReaders(t *testing.T) {
	chat := func(u *Usage, v gjson.Result) bool { return u.read(v, &chatUsage) }
	responses := func(u *Usage, v gjson.Result) bool { return u.read(v, &responsesUsage) }
	anthropic := func(u *Usage, v gjson.Result) bool { return u.read(v, &anthropicUsage) }
	aisdk := (*Usage).ReadAISDK
	hustle := func(u *Usage, el gjson.Result) bool { return u.read(el, &hustleUsage) }
	cases := []struct {
		name  string
		read  func(*Usage, gjson.Result) bool
		usage string
		want  string // "" when the reader finds no count
	}{
		{"chat full", chat, `{"prompt_tokens":120,"completion_tokens":45,"total_tokens":165,"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":12}}`,
			`{"input_tokens":120,"output_tokens":45,"total_tokens":165,"cached_input_tokens":100,"reasoning_tokens":12}`},
		{"chat plain", chat, `{"prompt_tokens":10,"completion_tokens":5}`, `{"input_tokens":10,"output_tokens":5,"total_tokens":15}`},
		{"chat zeros given are kept", chat, `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`,
			`{"input_tokens":10,"output_tokens":5,"total_tokens":15,"cached_input_tokens":0,"reasoning_tokens":0}`},
		{"chat total is the upstream's", chat, `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":99}`, `{"input_tokens":10,"output_tokens":5,"total_tokens":99}`},
		{"chat only prompt", chat, `{"prompt_tokens":7}`, `{"input_tokens":7,"output_tokens":0,"total_tokens":7}`},
		{"chat null details", chat, `{"prompt_tokens":1,"completion_tokens":2,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":null}}`,
			`{"input_tokens":1,"output_tokens":2,"total_tokens":3}`},
		{"chat no count", chat, `{"total_tokens":5,"cost":0.1}`, ""},
		{"chat counts not numbers", chat, `{"prompt_tokens":"10","completion_tokens":-1}`, ""},
		{"chat responses names", chat, `{"input_tokens":10,"output_tokens":5}`, ""},

		{"responses full", responses, `{"input_tokens":320,"input_tokens_details":{"cached_tokens":256},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":8},"total_tokens":360}`,
			`{"input_tokens":320,"output_tokens":40,"total_tokens":360,"cached_input_tokens":256,"reasoning_tokens":8}`},
		{"responses plain", responses, `{"input_tokens":3,"output_tokens":4}`, `{"input_tokens":3,"output_tokens":4,"total_tokens":7}`},
		{"responses zero cached", responses, `{"input_tokens":3,"output_tokens":4,"total_tokens":7,"input_tokens_details":{"cached_tokens":0}}`,
			`{"input_tokens":3,"output_tokens":4,"total_tokens":7,"cached_input_tokens":0}`},
		{"responses chat names", responses, `{"prompt_tokens":3}`, ""},

		{"anthropic with caches", anthropic, `{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":7}`,
			`{"input_tokens":170,"output_tokens":7,"total_tokens":177,"cached_input_tokens":50}`},
		{"anthropic plain", anthropic, `{"input_tokens":12,"output_tokens":3}`, `{"input_tokens":12,"output_tokens":3,"total_tokens":15}`},
		{"anthropic only cache writes", anthropic, `{"input_tokens":0,"cache_creation_input_tokens":9,"output_tokens":1}`, `{"input_tokens":9,"output_tokens":1,"total_tokens":10}`},
		{"anthropic no count", anthropic, `{"service_tier":"standard"}`, ""},

		{"ai sdk 4", aisdk, `{"promptTokens":10,"completionTokens":20}`, `{"input_tokens":10,"output_tokens":20,"total_tokens":30}`},
		{"ai sdk 5", aisdk, `{"inputTokens":10,"outputTokens":20,"totalTokens":31}`, `{"input_tokens":10,"output_tokens":20,"total_tokens":31}`},
		{"ai sdk snake case", aisdk, `{"input_tokens":1,"output_tokens":2,"total_tokens":4}`, `{"input_tokens":1,"output_tokens":2,"total_tokens":4}`},
		{"ai sdk chat names", aisdk, `{"prompt_tokens":1,"completion_tokens":2}`, `{"input_tokens":1,"output_tokens":2,"total_tokens":3}`},
		{"ai sdk no count", aisdk, `{"foo":1}`, ""},

		{"hustle", hustle, `{"type":"token_usage","tokensIn":100,"tokensOut":20,"totalTokens":5000,"cachedTokens":40,"costUsd":0.01}`,
			`{"input_tokens":100,"output_tokens":20,"total_tokens":120,"cached_input_tokens":40}`},
		{"hustle zero cached", hustle, `{"tokensIn":1,"tokensOut":2,"cachedTokens":0}`, `{"input_tokens":1,"output_tokens":2,"total_tokens":3,"cached_input_tokens":0}`},
		{"hustle only total", hustle, `{"totalTokens":5}`, ""},
		{"hustle empty name is no count", hustle, `{"tokensIn":1,"tokensOut":2,"":99}`, `{"input_tokens":1,"output_tokens":2,"total_tokens":3}`},
	}
	for _, c := range cases {
		var u Usage
		ok := c.read(&u, gjson.Parse(c.usage))
		if ok != (c.want != "") || u.Known() != ok {
			t.Fatalf("%s: read %v, known %v; want %v", c.name, ok, u.Known(), c.want != "")
		}
		if !ok {
			continue
		}
		if got := string(u.AppendJSON(nil)); !sameJSON(t, got, c.want) {
			t.Fatalf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

// A later usage object replaces an earlier one whole (the last chunk with
// usage wins), and one with no count changes nothing.
func TestUsageReplacedWhole(t *testing.T) {
	var u Usage
	u.read(gjson.Parse(`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":99,"prompt_tokens_details":{"cached_tokens":3}}`), &chatUsage)
	if u.read(gjson.Parse(`{"cost":1}`), &chatUsage) {
		t.Fatal("a usage object with no count was read")
	}
	u.read(gjson.Parse(`{"prompt_tokens":11,"completion_tokens":6}`), &chatUsage)
	if got, want := string(u.AppendJSON(nil)), `{"input_tokens":11,"output_tokens":6,"total_tokens":17}`; !sameJSON(t, got, want) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// Usage reaches the meta from every protocol's stream.
func TestUsageInStreams(t *testing.T) {
	usageChunk := func(u string) string {
		return ev(`{` + upHead + `,"choices":[],"usage":` + u + `}`)
	}
	chat := contentEv("Hi") + ev(`{`+upHead+`,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`) +
		usageChunk(`{"prompt_tokens":1,"completion_tokens":1}`) +
		usageChunk(`{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":4}}`) + doneEv
	runPieces(t, chat, func() StreamOptions { return finalMetaOn }, func(p pieceRun) {
		want := strings.TrimSuffix(chat, doneEv) + upMetaEvent(metaMark) + doneEv
		checkSpliced(t, p.name, p.out, want, `{"usage":{"input_tokens":10,"output_tokens":2,"total_tokens":12,"cached_input_tokens":4}}`)
	})

	dataStreams := []struct{ name, in, usage string }{
		{"data stream d:", "0:\"Hi\"\nd:{\"finishReason\":\"stop\",\"usage\":{\"promptTokens\":10,\"completionTokens\":20}}\n",
			`{"input_tokens":10,"output_tokens":20,"total_tokens":30}`},
		{"hustle token_usage", "0:\"Hi\"\n2:[{\"type\":\"token_usage\",\"tokensIn\":100,\"tokensOut\":20,\"totalTokens\":9999,\"cachedTokens\":40}]\nd:{\"finishReason\":\"stop\"}\n",
			`{"input_tokens":100,"output_tokens":20,"total_tokens":120,"cached_input_tokens":40}`},
		{"hustle path_info", "0:\"Hi\"\n2:[{\"type\":\"path_info\",\"tokensIn\":5,\"tokensOut\":6,\"totalTokens\":1}]\n",
			`{"input_tokens":5,"output_tokens":6,"total_tokens":11}`},
		{"d: usage before hustle", "2:[{\"type\":\"token_usage\",\"tokensIn\":100,\"tokensOut\":20}]\nd:{\"finishReason\":\"stop\",\"usage\":{\"inputTokens\":1,\"outputTokens\":2}}\n",
			`{"input_tokens":1,"output_tokens":2,"total_tokens":3}`},
	}
	for _, c := range dataStreams {
		for _, n := range chunkSizes() {
			_, rep := convertThroughRewriter(t, c.in, n, func(out io.Writer, o ConvertOptions) io.WriteCloser {
				return NewDataStreamConverter(out, o)
			})
			if got := string(rep.Meta.Get(KeyUsage)); got == "" || !sameJSON(t, got, c.usage) {
				t.Fatalf("%s %s: usage %s, want %s", c.name, chunkName(n), got, c.usage)
			}
		}
	}
	ui := sse(`{"type":"start","messageId":"m"}`, `{"type":"text-delta","id":"t","delta":"Hi"}`,
		`{"type":"finish","finishReason":"stop"}`, `{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":8}}}`)
	for _, n := range chunkSizes() {
		_, rep := convertThroughRewriter(t, ui, n, func(out io.Writer, o ConvertOptions) io.WriteCloser {
			return NewUIStreamConverter(out, o)
		})
		if got := string(rep.Meta.Get(KeyUsage)); got == "" || !sameJSON(t, got, `{"input_tokens":3,"output_tokens":4,"total_tokens":8}`) {
			t.Fatalf("ui stream late message-metadata %s: usage %s", chunkName(n), got)
		}
	}
}

// convertThroughRewriter runs in through a converter in front of an SSE
// rewriter that share one record, as the module does, in pieces of n
// bytes (0: whole), and returns what reaches the client and the record.
func convertThroughRewriter(t *testing.T, in string, n int, conv func(io.Writer, ConvertOptions) io.WriteCloser) (string, *Reply) {
	t.Helper()
	rep := &Reply{}
	var w recWriter
	rw := NewRewriter(&w, StreamOptions{MaxEvent: 1 << 20, FinalMeta: true, Reply: rep}, nil)
	c := conv(rw, ConvertOptions{Model: "m", MaxLine: 1 << 20, Created: 1, Reply: rep, HustleSummary: true})
	for rest := in; len(rest) > 0; {
		k := n
		if k <= 0 || k > len(rest) {
			k = len(rest)
		}
		if _, err := c.Write([]byte(rest[:k])); err != nil {
			t.Fatalf("Write: %v", err)
		}
		rest = rest[k:]
	}
	if err := c.Close(); err != nil {
		t.Fatalf("converter Close: %v", err)
	}
	if err := rw.Close(); err != nil {
		t.Fatalf("rewriter Close: %v", err)
	}
	return w.buf.String(), rep
}

// The usage chunk the module asked for and the client did not is withheld
// (its usage joins the meta); chunks with choices pass, "usage":null
// included; a client that asked gets every event (SPEC 9.1).
func TestWithholdUsageChunk(t *testing.T) {
	nullUsage := ev(`{` + upHead + `,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`)
	withChoices := ev(`{` + upHead + `,"choices":[{"index":0,"delta":{"content":"!"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`)
	usageOnly := ev(`{` + upHead + `,"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`)
	body := roleEv() + contentEv("Hi") + withChoices + nullUsage
	in := body + usageOnly + doneEv
	meta := `{"usage":{"input_tokens":9,"output_tokens":3,"total_tokens":12}}`
	runPieces(t, in, func() StreamOptions { return StreamOptions{FinalMeta: true, Chat: ChatOptions{WithholdUsage: true}} }, func(p pieceRun) {
		checkSpliced(t, "withheld "+p.name, p.out, body+upMetaEvent(metaMark)+doneEv, meta)
	})
	runPieces(t, in, func() StreamOptions { return finalMetaOn }, func(p pieceRun) {
		checkSpliced(t, "asked for "+p.name, p.out, in[:len(in)-len(doneEv)]+upMetaEvent(metaMark)+doneEv, meta)
	})
}
