package caddymodule

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// What real gateways send that the module once misread (issue 36), through
// a real in-process Caddy: one test per quirk.

// sseEvents joins events as an upstream frames them: "data: X" and a
// blank line each.
func sseEvents(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// OpenRouter ends a failed generation with a chunk that has choices
// (finish_reason "error") and a top-level error, then [DONE]: an error
// event (SPEC 4.3), so run-once answers the 502 of SPEC 6.4 and the edge
// stream shows it (SPEC 6.3).
func TestOpenRouterMidStreamError(t *testing.T) {
	up := &recordingUpstream{ctype: "text/event-stream", response: sseEvents(
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"openai/gpt-4o","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
		`[DONE]`)}
	base := startEndpoints(t, "", up)

	t.Run("run-once", func(t *testing.T) {
		resp, body := fetch(t, base, "/v1/chat/completions", `{"model":"openrouter/auto","run_once":true,"stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
		assertEdgeError(t, resp, body, 502, "Provider disconnected")
	})
	t.Run("edge stream", func(t *testing.T) {
		resp, body := fetch(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`, "x-stream", "true")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if got := streamContent(parseClientEvents(body)); got != "HiError: Provider disconnected" {
			t.Errorf("content %q, want the error shown after the text; body %q", got, body)
		}
	})
}

// recordedStream reads a recorded upstream body of testdata/fixtures/upstream
// as it went on the wire: a .chunks.jsonl file holds one chunk a line, each
// sent as "data: <line>" and a blank line, then [DONE] (SOURCES.md there).
func recordedStream(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "upstream", name))
	must(t, err, "reading the recorded body")
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSuffix(l, "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	return sseEvents(append(lines, "[DONE]")...)
}

// Azure's first chunk (its prompt filter results) says "model":"", every
// later one the model that answered: the reply's model is the first
// non-empty one, and it prices the reply when it is another model than the
// request's (SPEC 9.2, 11.2), streamed or run once.
func TestAzureStreamPricedByItsModel(t *testing.T) {
	up := &recordingUpstream{ctype: "text/event-stream", response: recordedStream(t, "azure-openai-prompt-filter-first-chunk.chunks.jsonl")}
	// 15 prompt and 78 completion tokens (64 of them reasoning).
	base := startEndpoints(t, `{"prices":[
		{"model":"gpt-4o-mini","input":0.15,"output":0.60},
		{"model":"gpt-5-nano","input":0.05,"output":0.40},
		{"model":"gpt-5-nano-*","input":1,"output":1}]}`, up)
	const nano, nanoDated = 0.00003195, 0.000093 // (15×0.05 + 78×0.40) / 1e6; (15 + 78) / 1e6
	request := func(model string, runOnce bool) string {
		return `{"model":"` + model + `","stream":true,"run_once":` + strconv.FormatBool(runOnce) + `,"messages":[{"role":"user","content":"Capital of France?"}]}`
	}
	for _, c := range []struct {
		name, model string
		cost        float64
	}{
		{"an Azure deployment name", "my-deployment", nanoDated},
		{"another model asked", "gpt-4o-mini", nanoDated},
		{"the dated snapshot of the model asked", "gpt-5-nano", nano},
	} {
		t.Run(c.name+", streamed", func(t *testing.T) {
			resp, body := fetch(t, base, "/v1/chat/completions", request(c.model, false))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			checkCost(t, streamMeta(parseClientEvents(body)), c.cost)
		})
		t.Run(c.name+", run once", func(t *testing.T) {
			resp, body := fetch(t, base, "/v1/chat/completions", request(c.model, true))
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			checkCost(t, jsonField(body, "meta"), c.cost)
		})
	}
}

// checkCost checks meta.cost_usd.
func checkCost(t *testing.T, meta []byte, want float64) {
	t.Helper()
	var m struct {
		Cost *float64 `json:"cost_usd"`
	}
	if err := json.Unmarshal(meta, &m); err != nil || m.Cost == nil {
		t.Fatalf("no meta.cost_usd in %s (%v)", meta, err)
	}
	if math.Abs(*m.Cost-want) > 1e-12 {
		t.Errorf("cost_usd %v, want %v (meta %s)", *m.Cost, want, meta)
	}
}

// A run-once reply is held anyway: an event or a data-stream line larger
// than max_event_bytes (an inline image in one delta) is read whole up to
// max_buffer_bytes (SPEC 6.1), not passed on unread.
func TestRunOnceReadsEventsLargerThanMaxEventBytes(t *testing.T) {
	big := strings.Repeat("x", 2<<20) // 2 MiB, over the 1 MiB default
	for _, c := range []struct{ name, ctype, body string }{
		{"chat stream", "text/event-stream", sseEvents(
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"`+big+`"},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"!"},"finish_reason":"stop"}]}`,
			`[DONE]`)},
		{"data stream", "text/plain; charset=utf-8", `0:"` + big + "\"\n" + `0:"!"` + "\n" + `d:{"finishReason":"stop"}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := &recordingUpstream{ctype: c.ctype, response: c.body}
			base := startEndpoints(t, "", up)
			for _, path := range []string{"/v1/chat/completions", "/v1/run_once"} {
				resp, body := fetch(t, base, path, `{"model":"m","run_once":true,"message":"Hi","messages":[{"role":"user","content":"Hi"}]}`)
				if resp.StatusCode != 200 {
					t.Fatalf("%s: status %d: %.200s", path, resp.StatusCode, body)
				}
				var v struct{ Content string }
				must(t, json.Unmarshal(body, &v), "decoding the answer")
				if v.Content != big+"!" {
					t.Errorf("%s: content of %d bytes, want %d: %.40q…", path, len(v.Content), len(big)+1, v.Content)
				}
			}
		})
	}
}

// The edge stream made from a whole JSON reply (SPEC 6.3) carries the
// content of SPEC 6.1 in every protocol, as run-once does: a Responses
// object's output texts, an Anthropic message's text blocks.
func TestEdgeStreamFromResponsesAndAnthropicJSON(t *testing.T) {
	for _, c := range []struct{ name, reply string }{
		{"Responses", `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4o-mini","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"AB","annotations":[]}]},{"type":"message","id":"msg_2","status":"completed","role":"assistant","content":[{"type":"output_text","text":"C","annotations":[]}]}]}`},
		{"Anthropic", `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"AB"},{"type":"tool_use","id":"t1","name":"search","input":{}},{"type":"text","text":"C"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":2}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := startEndpoints(t, "", &recordingUpstream{response: c.reply})
			resp, body := fetch(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`)
			if resp.StatusCode != 200 || string(jsonField(body, "content")) != `"AB\nC"` {
				t.Fatalf("without x-stream: status %d, %s", resp.StatusCode, body)
			}
			resp, body = fetch(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`, "x-stream", "true")
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("x-stream: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if got := streamContent(parseClientEvents(body)); got != "AB\nC" {
				t.Errorf("x-stream content %q, want %q; body %s", got, "AB\nC", body)
			}
		})
	}
}

// pausedStream runs Caddy with llm_meta (config) before an upstream that
// answers an event stream in two writes, first then rest, each flushed,
// with the second held until the test lets it go (resume); once resume is
// closed, in one write.
func pausedStream(t *testing.T, config, first, rest string) (base string, resume chan struct{}) {
	t.Helper()
	resume = make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		rc := http.NewResponseController(w)
		select {
		case <-resume:
			writeFlush(w, rc, first+rest)
			return
		default:
		}
		if !writeFlush(w, rc, first) {
			return
		}
		select {
		case <-resume:
			writeFlush(w, rc, rest)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(up.Close)
	return loadCaddy(t, llmMeta(t, []byte(config)), proxyTo(up.Listener.Addr().String())), resume
}

// readUntil reads the client's body until what it read ends with suffix,
// and returns it; a stream that stops short is a failure (after
// streamGuard), never a result.
func readUntil(t *testing.T, br *bufio.Reader, suffix string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		for !strings.HasSuffix(b.String(), suffix) {
			c, err := br.ReadByte()
			if err != nil {
				break
			}
			b.WriteByte(c)
		}
		got <- b.String()
	}()
	s := waitOn(t, got, "the client's bytes up to "+strconv.Quote(suffix))
	if !strings.HasSuffix(s, suffix) {
		t.Fatalf("the stream ended with %q, before %q came", s, suffix)
	}
	return s
}

// A CRLF stream's event whose blank line's CR ends one upstream write and
// whose LF starts the next reaches the client with its whole line break at
// once (SPEC 8.1), and the upstream's LF is not sent again.
func TestCRAndItsLFReachTheClientTogether(t *testing.T) {
	event := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\r\n\r"
	base, resume := pausedStream(t, "", event, "\ndata: [DONE]\r\n\r\n")
	resp, _ := postStream(t, base, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`)
	br := bufio.NewReader(resp.Body)
	readUntil(t, br, event+"\n") // before the upstream's LF comes
	close(resume)
	rest, err := io.ReadAll(br)
	must(t, err, "reading the rest")
	if string(rest) != "data: [DONE]\r\n\r\n" {
		t.Errorf("after the event: %q, want [DONE] alone", rest)
	}
}

// What the client gets does not depend on how the upstream's writes cut its
// bytes: here an error event whose blank line is a CR ending a write, shown
// as content on the edge stream (SPEC 6.3), in a stream of LF line ends.
// The event the module writes follows the CR's LF, whatever comes next.
func TestOutputSameWhereverTheUpstreamCutsIt(t *testing.T) {
	first := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}` + "\n\n" +
		`data: {"error":{"message":"boom"}}` + "\n\r"
	for _, rest := range []string{"\ndata: [DONE]\n\n", "data: [DONE]\n\n", ": bye\n\n"} {
		base, resume := pausedStream(t, "", first, rest)
		post := func() *bufio.Reader {
			resp, _ := postStream(t, base, "/functions/v1/jarvis", `{"message":"Hi"}`, "x-stream", "true")
			return bufio.NewReader(resp.Body)
		}
		// Cut where the upstream cut it: the module writes the error's
		// content chunk before it knows what follows the CR.
		br := post()
		cut := readUntil(t, br, `"content":"Error: boom"},"finish_reason":null}]}`+"\n\n")
		resume <- struct{}{}
		after, err := io.ReadAll(br)
		must(t, err, "reading the rest")
		// Whole: the same bytes in one write.
		close(resume)
		whole, err := io.ReadAll(post())
		must(t, err, "reading the whole run")
		if got, want := fixedIDs(cut+string(after)), fixedIDs(string(whole)); got != want {
			t.Errorf("rest %q:\ncut at the CR: %q\n        whole: %q", rest, got, want)
		}
		if c := streamContent(parseClientEvents(whole)); c != "HiError: boom" {
			t.Errorf("rest %q: content %q", rest, c)
		}
	}
}

// generatedHead matches what the module makes up for a chunk head (a fresh
// id, the time): two runs are compared without them.
var generatedHead = regexp.MustCompile(`"chatcmpl-[0-9a-f]{24}"|"created":[0-9]+`)

func fixedIDs(s string) string { return generatedHead.ReplaceAllString(s, `"generated"`) }
