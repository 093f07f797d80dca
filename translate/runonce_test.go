package translate

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// replyContent finds the reply text of a JSON reply by the edge function's
// field order (SPEC 6.1): replyText on any body.
func replyContent(body []byte) string {
	if t, found := replyText(gjson.Parse(string(body))); found {
		return t
	}
	return NoResponse
}

func TestReplyContentFieldOrder(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"message is a string", `{"choices":[{"message":"plain","text":"no"}],"content":"no"}`, "plain"},
		{"message.content", `{"choices":[{"message":{"role":"assistant","content":"Hello","text":"no"},"text":"no"}],"output":"no","content":"no"}`, "Hello"},
		{"message.content parts joined with newline",
			`{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}},{"type":"text","text":"b"}]}}]}`, "a\nb"},
		{"message.text when content is null", `{"choices":[{"message":{"content":null,"text":"t"}}],"content":"no"}`, "t"},
		{"message.text parts", `{"choices":[{"message":{"text":[{"text":"x"},{"text":"y"}]}}]}`, "x\ny"},
		{"parts without text fall through", `{"choices":[{"message":{"content":[{"type":"image_url"}],"text":"t"}}]}`, "t"},
		{"delta when there is no message", `{"choices":[{"delta":{"content":"d"}}]}`, "d"},
		{"delta as a string", `{"choices":[{"delta":"ds"}]}`, "ds"},
		{"message wins over delta", `{"choices":[{"message":{"content":"m"},"delta":{"content":"d"}}]}`, "m"},
		{"choices[0].text", `{"choices":[{"text":"completion","index":0}],"output":"no"}`, "completion"},
		{"message without text, then choices[0].text", `{"choices":[{"message":{"content":null},"text":"ct"}]}`, "ct"},
		{"only choice 0", `{"choices":[{"message":{"content":null}},{"message":{"content":"second"}}],"content":"top"}`, "top"},
		{"output", `{"output":"o","response":"r","message":"m","text":"t","content":"c"}`, "o"},
		{"response", `{"response":"r","message":"m","text":"t","content":"c"}`, "r"},
		{"message", `{"message":"m","text":"t","content":"c"}`, "m"},
		{"text", `{"text":"t","content":"c"}`, "t"},
		{"content", `{"content":"c","meta":{"tools_used":["x"]}}`, "c"},
		{"non-string top-level values skipped", `{"output":{"x":1},"response":["r"],"message":{"content":"obj"},"text":null,"content":"c"}`, "c"},
		{"nothing", `{"choices":[],"usage":{}}`, NoResponse},
		{"empty object", `{}`, NoResponse},
		{"not JSON", `oops`, NoResponse},
		{"escapes decoded", `{"content":"caf\u00e9 \"q\"\n"}`, "café \"q\"\n"},
	}
	for _, c := range cases {
		if got := replyContent([]byte(c.body)); got != c.want {
			t.Errorf("%s: replyContent = %q, want %q", c.name, got, c.want)
		}
	}
}

// collector is the run-once path of a chat stream: the SSE rewriter reading
// the text into a record that collects at most max bytes of it, writing
// nowhere.
type collector struct{ r *Rewriter }

func newCollector(max, maxEvent int) collector {
	rep := &Reply{Asked: Asked{WantContent: true, MaxContent: max}}
	return collector{NewRewriter(io.Discard, StreamOptions{MaxEvent: maxEvent, FinalMeta: true, Reply: rep}, nil)}
}

func (c collector) Write(p []byte) (int, error) { return c.r.Write(p) }
func (c collector) Close() error                { return c.r.Close() }
func (c collector) Content() string             { return c.r.Reply().Content() }
func (c collector) Err() (string, bool)         { return c.r.Reply().Err() }

// collect runs a chunk stream through a collector in pieces of n bytes.
func collect(t *testing.T, in string, n, max, maxEvent int) (collector, error) {
	t.Helper()
	c := newCollector(max, maxEvent)
	buf := make([]byte, len(in))
	var werr error
	for rest := in; len(rest) > 0; {
		k := n
		if k <= 0 || k > len(rest) {
			k = len(rest)
		}
		p := buf[:k]
		copy(p, rest[:k])
		if _, err := c.Write(p); err != nil && werr == nil {
			werr = err
		}
		for i := range p {
			p[i] = 0xA5 // the writer reuses its buffer
		}
		rest = rest[k:]
	}
	if err := c.Close(); err != nil && werr == nil {
		werr = err
	}
	return c, werr
}

func TestRunOnceContent(t *testing.T) {
	in := ": comment\n\n" + roleEv() + contentEv("Hel") + contentEv("lo ") +
		ev(`{"choices":[{"index":0,"delta":{"reasoning_content":"hidden"}}]}`) +
		"data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"wor\"}}]}\r\n\r\n" +
		ev(`not json`) + ev(`{"choices":[{"index":0,"delta":{"content":null}}]}`) +
		contentEv("ld") + finishChunkEv("stop") + upMetaEvent(`{"tools_used":["t"]}`) +
		ev(`{"choices":[],"usage":{"total_tokens":1}}`) +
		`data: {"choices":[{"delta":{"content":"!"}}]}` // unterminated: ends at Close
	for _, n := range chunkSizes() {
		c, err := collect(t, in, n, 1<<20, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Content(); got != "Hello world!" {
			t.Fatalf("%s: content %q", chunkName(n), got)
		}
		if msg, bad := c.Err(); bad || msg != "" {
			t.Fatalf("%s: Err = %q", chunkName(n), msg)
		}
	}
}

// With n > 1, each chunk carries one choice with its own index: only
// choice 0 makes the run-once content.
func TestRunOnceChoiceZeroOnly(t *testing.T) {
	in := ev(`{"choices":[{"index":0,"delta":{"content":"A1 "}}]}`) +
		ev(`{"choices":[{"index":1,"delta":{"content":"B1 "}}]}`) +
		ev(`{"choices":[{"index":1,"delta":{"content":"B2 "}},{"index":0,"delta":{"content":"A2 "}}]}`) +
		ev(`{"choices":[{"delta":{"content":"A3"}}]}`) + // no index (Gemini compat): choice 0
		ev(`{"choices":[{"index":null,"delta":{"content":"."}}]}`)
	c, err := collect(t, in, 0, 1<<20, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Content(); got != "A1 A2 A3." {
		t.Fatalf("content %q", got)
	}
}

func TestRunOnceErrors(t *testing.T) {
	cases := []struct{ name, in, msg string }{
		{"message", contentEv("so far") + ev(`{"error":{"message":"Rate limited","type":"rate_limit"}}`), "Rate limited"},
		{"string", ev(`{"error":"upstream died"}`), "upstream died"},
		{"no message", ev(`{"error":{"code":499}}`), `{"code":499}`},
		{"first kept", ev(`{"error":{"message":"first"}}`) + ev(`{"error":{"message":"second"}}`), "first"},
		{"converter error event", string(AppendErrorEvent(nil, "from a 3: part")), "from a 3: part"},
	}
	for _, c := range cases {
		for _, n := range chunkSizes() {
			col, err := collect(t, c.in, n, 1<<20, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if msg, bad := col.Err(); !bad || msg != c.msg {
				t.Fatalf("%s %s: Err = %q, %v", c.name, chunkName(n), msg, bad)
			}
		}
	}
	col, _ := collect(t, contentEv("so far")+ev(`{"error":{"message":"x"}}`)+contentEv(" more"), 0, 1<<20, 1<<20)
	if col.Content() != "so far more" {
		t.Fatalf("content around an error: %q", col.Content())
	}
	// A chunk with an error beside its choices (OpenRouter) is an error
	// event (SPEC 4.3): its content is not the reply's.
	col, _ = collect(t, ev(`{"error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"error"}]}`), 0, 1<<20, 1<<20)
	if msg, bad := col.Err(); !bad || msg != "Provider disconnected" || col.Content() != "" {
		t.Fatalf("error with choices: %q, %v, content %q", msg, bad, col.Content())
	}
	// vLLM's mid-stream error.
	col, _ = collect(t, contentEv("so far")+ev(`{"object":"error","message":"out of memory","type":"InternalServerError","code":500}`), 0, 1<<20, 1<<20)
	if msg, bad := col.Err(); !bad || msg != "out of memory" {
		t.Fatalf("vLLM error: %q, %v", msg, bad)
	}
}

// The message outlives the Write buffer it came in.
func TestRunOnceErrorOwnsItsMessage(t *testing.T) {
	c := newCollector(100, 100)
	buf := []byte(ev(`{"error":{"message":"secret"}}`))
	c.Write(buf)
	for i := range buf {
		buf[i] = 'X'
	}
	if msg, _ := c.Err(); msg != "secret" {
		t.Fatalf("message changed with the caller's buffer: %q", msg)
	}
}

func TestRunOnceLimit(t *testing.T) {
	in := contentEv("12345") + contentEv("67890")
	c, err := collect(t, in, 0, 10, 1<<20)
	if err != nil || c.Content() != "1234567890" {
		t.Fatalf("exactly the limit: %q, %v", c.Content(), err)
	}
	for _, n := range chunkSizes() {
		c, err := collect(t, in+contentEv("1")+contentEv("more"), n, 10, 1<<20)
		if !errors.Is(err, ErrContentTooLarge) {
			t.Fatalf("%s: err %v", chunkName(n), err)
		}
		if len(c.Content()) > 10 {
			t.Fatalf("%s: kept %d bytes", chunkName(n), len(c.Content()))
		}
		if _, err := c.Write([]byte(contentEv("x"))); !errors.Is(err, ErrContentTooLarge) {
			t.Fatalf("%s: Write after the limit: %v", chunkName(n), err)
		}
		if err := c.Close(); !errors.Is(err, ErrContentTooLarge) {
			t.Fatalf("%s: Close after the limit: %v", chunkName(n), err)
		}
	}
	// The limit counts content, not event bytes.
	c, err = collect(t, contentEv("")+finishChunkEv("stop")+contentEv("abc"), 1, 3, 1<<20)
	if err != nil || c.Content() != "abc" {
		t.Fatalf("%q %v", c.Content(), err)
	}
}

func TestRunOnceOversizeSkipped(t *testing.T) {
	in := contentEv("a") + contentEv(strings.Repeat("x", 500)) + contentEv("b")
	for _, n := range chunkSizes() {
		c, err := collect(t, in, n, 1<<20, 300)
		if err != nil || c.Content() != "ab" {
			t.Fatalf("%s: %q %v", chunkName(n), c.Content(), err)
		}
	}
}

// The run-once path: the record collects the text and the meta together.
func TestRunOnceThroughRewriter(t *testing.T) {
	in := roleEv() + toolEv(0, "calculator") + contentEv("It is ") + contentEv("4.") +
		ev(`{"meta":{"prompt_trimmed_to":10}}`) + finishChunkEv("stop") + doneEv
	for _, n := range chunkSizes() {
		col := newCollector(1<<20, 1<<20)
		r := col.r
		for rest := in; len(rest) > 0; {
			k := n
			if k <= 0 || k > len(rest) {
				k = len(rest)
			}
			if _, err := r.Write([]byte(rest[:k])); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		got := RunOnceJSON(col.Content(), &r.Reply().Meta, "")
		if want := `{"content":"It is 4.","meta":{"tools_used":["calculator"],"prompt_trimmed_to":10}}`; string(got) != want {
			t.Fatalf("%s: %s", chunkName(n), got)
		}
	}
}

func TestUpstreamErrorMessage(t *testing.T) {
	cases := []struct{ body, status, want string }{
		{`{"error":{"message":"Invalid API key","type":"auth","code":401}}`, "Unauthorized", "Invalid API key"},
		{`{"error":"model not found"}`, "Not Found", "model not found"},
		{`{"error":{"message":""}}`, "Bad Gateway", `{"error":{"message":""}}`},
		{`{"error":{"code":500}}`, "Internal Server Error", `{"error":{"code":500}}`},
		{`{"detail":"x"}`, "Bad Request", `{"detail":"x"}`},
		{"  <html>Bad Gateway</html>\n", "Bad Gateway", "<html>Bad Gateway</html>"},
		{"", "Service Unavailable", "Service Unavailable"},
		{" \r\n\t", "Gateway Timeout", "Gateway Timeout"},
		{`{"error":{"message":"caf\u00e9"}}`, "x", "café"},
	}
	for _, c := range cases {
		if got := UpstreamErrorMessage([]byte(c.body), c.status); got != c.want {
			t.Errorf("UpstreamErrorMessage(%q, %q) = %q, want %q", c.body, c.status, got, c.want)
		}
	}
}

func TestRunOnceJSON(t *testing.T) {
	meta := metaFrom(t, `{"tools_used":["a"],"structured_result":{"type":"list","items":[1]}}`)
	cases := []struct {
		content string
		meta    *Meta
		err     string
		want    string
	}{
		{"hi", nil, "", `{"content":"hi"}`},
		{"hi", new(Meta), "", `{"content":"hi"}`},
		{"", nil, "", `{"content":""}`},
		{"x \"q\"\n<b>", meta, "", `{"content":"x \"q\"\n<b>","meta":{"tools_used":["a"],"structured_result":{"type":"list","items":["1"]}}}`},
		{"so far", meta, "Rate limited", `{"error":"Rate limited","content":"so far","meta":{"tools_used":["a"],"structured_result":{"type":"list","items":["1"]}}}`},
	}
	for _, c := range cases {
		got := RunOnceJSON(c.content, c.meta, c.err)
		if string(got) != c.want || !json.Valid(got) {
			t.Errorf("RunOnceJSON(%q, …, %q) = %s, want %s", c.content, c.err, got, c.want)
		}
	}
	if got := string(ErrorJSON(`Body must include 'message' "x"`)); got != `{"error":"Body must include 'message' \"x\""}` {
		t.Fatalf("ErrorJSON: %s", got)
	}
}

func TestStreamFromReply(t *testing.T) {
	reply := []byte(`{"id":"chatcmpl-x","object":"chat.completion","created":1733000000,"model":"gpt-4o-mini","choices":[{"message":{"content":"Hi"}}]}`)
	meta := metaFrom(t, `{"tools_used":["a"]}`)
	head := `"id":"chatcmpl-x","object":"chat.completion.chunk","created":1733000000,"model":"gpt-4o-mini"`
	content := `data: {` + head + `,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}` + "\n\n"
	metaChunk := `data: {` + head + `,"choices":[],"meta":{"tools_used":["a"]}}` + "\n\n"

	if got := string(StreamFromReply(reply, "Hi", meta, "other", true, false)); got != content+metaChunk+doneEv {
		t.Fatalf("chunk meta:\n%q", got)
	}
	if got := string(StreamFromReply(reply, "Hi", meta, "other", true, true)); got != content+"data: {\"meta\":{\"tools_used\":[\"a\"]}}\n\n"+doneEv {
		t.Fatalf("bare meta:\n%q", got)
	}
	for _, m := range []*Meta{nil, new(Meta)} {
		if got := string(StreamFromReply(reply, "Hi", m, "other", true, false)); got != content+doneEv {
			t.Fatalf("no meta:\n%q", got)
		}
	}
	if got := string(StreamFromReply(reply, "Hi", meta, "other", false, false)); got != content+doneEv {
		t.Fatalf("final meta off:\n%q", got)
	}
	// A reply that is not a chat completion: fresh id, the request's model.
	out := string(StreamFromReply([]byte(`{"content":"c"}`), "c", nil, "my-model", true, false))
	evs := wholeEvents([]byte(out))
	if len(evs) != 2 || string(evs[1]) != doneEv {
		t.Fatalf("events %q", evs)
	}
	assertEventsParse(t, out)
	if !strings.Contains(out, `"model":"my-model"`) || !strings.Contains(out, `"id":"chatcmpl-`) || !strings.Contains(out, `"content":"c"`) {
		t.Fatalf("fallback head: %s", out)
	}
	if out := string(StreamFromReply(nil, "c", nil, "", true, false)); !strings.Contains(out, `"model":"unknown"`) {
		t.Fatalf("no model: %s", out)
	}
}
