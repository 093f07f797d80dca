package translate

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func convertUIStream(t *testing.T, opts ConvertOptions, in string, sizes ...int) (string, *UIStreamConverter) {
	t.Helper()
	var out recorder
	opts = withRecord(opts)
	c := NewUIStreamConverter(&out, opts)
	feedPieces(t, c, in, sizes)
	return withMetaEvent(out.String(), opts.Reply), c
}

// sse frames each data as one event.
func sse(datas ...string) string {
	var b strings.Builder
	for _, d := range datas {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

const uiStart = `{"type":"start","messageId":"msg-1"}`

func TestUIStreamParts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    string
		skipped int64
	}{
		{"text-delta", sse(uiStart, `{"type":"text-start","id":"t"}`, `{"type":"text-delta","id":"t","delta":"Hel"}`, `{"type":"text-delta","id":"t","delta":"lo \"you\""}`, `{"type":"text-end","id":"t"}`),
			deltaEv(`"role":"assistant","content":"Hel"`) + deltaEv(`"content":"lo \"you\""`) + done, 0},
		{"reasoning-delta", sse(uiStart, `{"type":"reasoning-start","id":"r"}`, `{"type":"reasoning-delta","id":"r","delta":"hmm"}`, `{"type":"reasoning-end","id":"r"}`, `{"type":"text-delta","id":"t","delta":"ok"}`),
			deltaEv(`"role":"assistant","reasoning_content":"hmm"`) + deltaEv(`"content":"ok"`) + done, 0},
		{"tool parts, each name once", sse(uiStart,
			`{"type":"tool-input-start","toolCallId":"c1","toolName":"weather"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{}"}`,
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"weather","input":{}}`,
			`{"type":"tool-call","toolCallId":"c1","toolName":"weather","args":{}}`,
			`{"type":"tool-output-available","toolCallId":"c1","output":{"t":1}}`,
			`{"type":"tool-call","toolCallId":"c2","toolName":"search","args":{}}`,
			`{"type":"tool-input-available","toolCallId":"c3","toolName":"ask_user","input":{}}`),
			metaEv(`{"tools_used":["weather","search","ask_user"]}`) + done, 0},
		{"data parts: array elements and single values", sse(uiStart,
			`{"type":"data-custom","data":[{"type":"reasoning","thinking":"t"},{"k":1},2]}`,
			`{"type":"data-weather","data":{"location":"SF","temperature":100}}`,
			`{"type":"data-note","id":"n1","data":"plain","transient":true}`,
			`{"type":"data-none"}`),
			metaEv(`{"hustle":{"reasoning":{"type":"reasoning","thinking":"t"},"data":[{"k":1},2,{"location":"SF","temperature":100},"plain"]},"structured_result":{"type":"key_value","entries":[{"key":"Reasoning","value":"t"}]}}`) + done, 0},
		{"error with errorText", sse(`{"type":"error","errorText":"An error occurred."}`),
			`data: {"error":{"message":"An error occurred.","type":"upstream_error"}}` + "\n\n" + done, 0},
		{"error fallbacks", sse(`{"type":"error","message":"m1"}`, `{"type":"error","error":{"message":"m2"}}`, `{"type":"error","error":"m3"}`, `{"type":"error"}`),
			`data: {"error":{"message":"m1","type":"upstream_error"}}` + "\n\n" +
				`data: {"error":{"message":"m2","type":"upstream_error"}}` + "\n\n" +
				`data: {"error":{"message":"m3","type":"upstream_error"}}` + "\n\n" +
				`data: {"error":{"message":"An error occurred.","type":"upstream_error"}}` + "\n\n" + done, 0},
		{"finish without reason is stop", sse(uiStart, `{"type":"finish"}`),
			finishEv(`"role":"assistant"`, "stop", "") + done, 0},
		{"finish reasons mapped", sse(uiStart, `{"type":"finish","finishReason":"tool-calls"}`, `{"type":"finish","finishReason":"content-filter"}`, `{"type":"finish","finishReason":"length"}`),
			finishEv(`"role":"assistant"`, "tool_calls", "") + finishEv("", "content_filter", "") + finishEv("", "length", "") + done, 0},
		{"finish usage, AI SDK 5 names in messageMetadata", sse(uiStart, `{"type":"finish","finishReason":"stop","messageMetadata":{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15,"reasoningTokens":2}}}`),
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`) + done, 0},
		{"finish usage, Hustle's snake_case", sse(uiStart, `{"type":"finish","finishReason":"stop","usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`),
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}`) + done, 0},
		{"finish usage, camelCase, total summed", sse(uiStart, `{"type":"finish","usage":{"promptTokens":3,"completionTokens":4}}`),
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}`) + done, 0},
		{"messageMetadata.usage wins over usage", sse(uiStart, `{"type":"finish","usage":{"promptTokens":1},"messageMetadata":{"usage":{"inputTokens":2}}}`),
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":2,"completion_tokens":0,"total_tokens":2}`) + done, 0},
		{"other parts give nothing", sse(uiStart, `{"type":"start-step"}`, `{"type":"finish-step"}`, `{"type":"source-url","sourceId":"s","url":"u"}`,
			`{"type":"file","url":"data:,x","mediaType":"text/plain"}`, `{"type":"message-metadata","messageMetadata":{}}`,
			`{"type":"text-delta","id":"t","delta":7}`, `{"type":"tool-input-start","toolCallId":"c"}`,
			`{"type":"custom","kind":"k"}`, `{"type":"steering-message","text":"t"}`, `{"type":"reset-step"}`),
			done, 0},
		{"abort ends with stop, parts after it ignored", sse(uiStart, `{"type":"text-delta","id":"t","delta":"a"}`, `{"type":"abort"}`,
			`{"type":"text-delta","id":"t","delta":"late"}`, `{"type":"finish","finishReason":"length"}`),
			deltaEv(`"role":"assistant","content":"a"`) + finishEv("", "stop", "") + done, 0},
		{"abort after finish adds nothing", sse(uiStart, `{"type":"finish","finishReason":"length"}`, `{"type":"abort"}`),
			finishEv(`"role":"assistant"`, "length", "") + done, 0},
		{"message-metadata usage is the last chunk's", sse(uiStart, `{"type":"message-metadata","messageMetadata":{"usage":{"inputTokens":7,"outputTokens":2}}}`, `{"type":"finish"}`),
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}`) + done, 0},
		{"tool names of v7 parts", sse(uiStart, `{"type":"tool-input-error","toolName":"a"}`, `{"type":"tool-output-error","toolCallId":"x"}`, `{"type":"tool-approval-request","toolName":"b"}`),
			`data: {"meta":{"tools_used":["a","b"]}}` + "\n\n" + done, 0},
		{"not JSON, unknown or untyped events are skipped", sse(`not json`, `{"type":"mystery"}`, `{"no":"type"}`, `["type"]`, `{"type":"text-delta","delta":"x"`) +
			"event: ping\n\n: comment only\n\n" + sse(`{"type":"text-delta","id":"t","delta":"ok"}`),
			// no start part: the id is generated
			deltaEv(`"role":"assistant","content":"ok"`) + done, 5},
		{"comments and other fields around data", ": hello\nevent: message\nid: 1\ndata: " + uiStart + "\nretry: 10\n\n" +
			": keep-alive\n\n" + "data:{\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"a\"}\n\n",
			deltaEv(`"role":"assistant","content":"a"`) + done, 0},
		{"data split over two data lines", "data: {\"type\":\"text-delta\",\ndata: \"id\":\"t\",\"delta\":\"joined\"}\n\n",
			deltaEv(`"role":"assistant","content":"joined"`) + done, 0},
		{"CRLF and CR framing", strings.ReplaceAll(sse(uiStart, `{"type":"text-delta","id":"t","delta":"a"}`), "\n", "\r\n") +
			strings.ReplaceAll(sse(`{"type":"text-delta","id":"t","delta":"b"}`), "\n", "\r"),
			deltaEv(`"role":"assistant","content":"a"`) + deltaEv(`"content":"b"`) + done, 0},
		{"last event without blank line", sse(uiStart) + `data: {"type":"text-delta","id":"t","delta":"end"}`,
			deltaEv(`"role":"assistant","content":"end"`) + done, 0},
		{"empty stream", "", done, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st Stats
			got, _ := convertUIStream(t, testOpts(&st), tc.in)
			got = regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]{24}"`).ReplaceAllString(got, `"id":"msg-1"`)
			if got != tc.want {
				t.Errorf("output:\n got %q\nwant %q", got, tc.want)
			}
			if st.Skipped != tc.skipped {
				t.Errorf("Skipped = %d, want %d", st.Skipped, tc.skipped)
			}
		})
	}
}

func TestUIStreamDoneEndsStream(t *testing.T) {
	in := sse(uiStart, `{"type":"tool-call","toolCallId":"c","toolName":"t"}`, `{"type":"text-delta","id":"t","delta":"a"}`, `[DONE]`,
		`{"type":"text-delta","id":"t","delta":"after"}`, `[DONE]`)
	want := deltaEv(`"role":"assistant","content":"a"`) + metaEv(`{"tools_used":["t"]}`) + done
	for _, sizes := range [][]int{nil, {1}, {5}} {
		var out recorder
		opts := testOpts(nil)
		c := NewUIStreamConverter(&out, opts)
		feedPieces(t, c, in, sizes)
		if got := withMetaEvent(out.String(), opts.Reply); got != want {
			t.Errorf("pieces %v: got %q\nwant %q", sizes, got, want)
		}
		n := len(out.writes)
		c.Write([]byte(sse(`{"type":"text-delta","id":"t","delta":"late"}`)))
		c.Close()
		if len(out.writes) != n {
			t.Errorf("wrote after the end: %q", out.writes[n:])
		}
	}
}

func TestUIStreamFixtureError(t *testing.T) {
	in := loadUpstreamFixture(t, upstreamFixturesDir(t), "vercel-ui-message-stream-v1-error.sse")
	var st Stats
	opts := testOpts(&st)
	got, c := convertUIStream(t, opts, string(in), 2)
	// No messageId in start: the id is generated; the finish chunk carries
	// the role since no chunk came before it.
	got = regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]{24}"`).ReplaceAllString(got, `"id":"msg-1"`)
	want := `data: {"error":{"message":"An error occurred.","type":"upstream_error"}}` + "\n\n" +
		finishEv(`"role":"assistant"`, "error", "") + done
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if !c.rep.Meta.Empty() {
		t.Errorf("meta %s, want none", c.rep.Meta.JSON())
	}
	if st != (Stats{Events: 6}) {
		t.Errorf("stats %+v, want 6 events", st)
	}
}

const mixedUIStream = "data: " + uiStart + "\n\n" +
	"data: {\"type\":\"start-step\"}\r\n\r\n" +
	": comment\n\n" +
	"data: {\"type\":\"reasoning-delta\",\"id\":\"r\",\"delta\":\"Zürich — 21°C 🌤️\"}\n\n" +
	"data: {\"type\":\"tool-input-available\",\"toolCallId\":\"c\",\"toolName\":\"weather\",\"input\":{}}\n\n" +
	"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"It is 21°C — \"}\r\r" +
	"data: {\"type\":\"text-delta\",\"id\":\"t\",\"delta\":\"sunny 😀.\"}\n\n" +
	"data: {\"type\":\"data-custom\",\"data\":[{\"type\":\"token_usage\",\"tokensIn\":5,\"tokensOut\":6,\"costUsd\":0.01}]}\n\n" +
	"data: {\"type\":\"error\",\"errorText\":\"naïve\"}\n\n" +
	"data: {\"type\":\"finish\",\"finishReason\":\"stop\",\"usage\":{\"inputTokens\":3,\"outputTokens\":4}}\n\n" +
	"data: [DONE]\n\n"

func TestUIStreamSplitAnywhere(t *testing.T) {
	want, _ := convertUIStream(t, testOpts(nil), mixedUIStream)
	if !strings.Contains(want, `"content":"sunny 😀."`) || !strings.Contains(want, `"total_tokens":7`) || !strings.HasSuffix(want, done) {
		t.Fatalf("whole conversion looks wrong: %q", want)
	}
	for i := 0; i <= len(mixedUIStream); i++ {
		var out recorder
		opts := testOpts(nil)
		c := NewUIStreamConverter(&out, opts)
		c.Write([]byte(mixedUIStream[:i]))
		c.Write([]byte(mixedUIStream[i:]))
		c.Close()
		if got := withMetaEvent(out.String(), opts.Reply); got != want {
			t.Fatalf("split at %d: got\n%q\nwant\n%q", i, got, want)
		}
	}
	for _, sizes := range [][]int{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {1, 7, 2, 5, 3}} {
		if got, _ := convertUIStream(t, testOpts(nil), mixedUIStream, sizes...); got != want {
			t.Fatalf("pieces %v: got\n%q\nwant\n%q", sizes, got, want)
		}
	}
}

func TestUIStreamOversizeEvent(t *testing.T) {
	var st Stats
	opts := testOpts(&st)
	opts.MaxLine = 64
	big := sse(`{"type":"text-delta","id":"t","delta":"` + strings.Repeat("x", 200) + `"}`)
	in := sse(uiStart) + big + sse(`{"type":"text-delta","id":"t","delta":"ok"}`) + big
	for _, sizes := range [][]int{nil, {1}, {7}, {63}} {
		st = Stats{}
		got, c := convertUIStream(t, opts, in, sizes...)
		if want := deltaEv(`"role":"assistant","content":"ok"`) + done; got != want {
			t.Errorf("pieces %v: got %q\nwant %q", sizes, got, want)
		}
		if st.Oversize != 2 || st.Skipped != 2 || st.Events != 4 {
			t.Errorf("pieces %v: stats %+v", sizes, st)
		}
		if cap(c.split.buf) > 2*opts.MaxLine+64 {
			t.Errorf("pieces %v: splitter holds %d bytes", sizes, cap(c.split.buf))
		}
	}
}

func TestUIStreamOutputErrorIsSticky(t *testing.T) {
	boom := errors.New("client gone")
	c := NewUIStreamConverter(&failWriter{err: boom}, testOpts(nil))
	if _, err := c.Write([]byte(sse(`{"type":"text-delta","id":"t","delta":"a"}`))); !errors.Is(err, boom) {
		t.Fatalf("Write err = %v", err)
	}
	if _, err := c.Write([]byte(sse(`{"type":"text-delta","id":"t","delta":"b"}`))); !errors.Is(err, boom) {
		t.Fatalf("later Write err = %v", err)
	}
	if err := c.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close err = %v", err)
	}
}
