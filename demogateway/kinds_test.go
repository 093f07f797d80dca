package demogateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestHustleDataStream(t *testing.T) {
	// "stream": false is ignored: Hustle only streams.
	w := chat(t, `{"model":"demo-hustle","stream":false,"messages":[{"role":"user","content":"Price of SOL?"}]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	wantHeader(t, w, "Content-Type", "text/plain; charset=utf-8")
	wantHeader(t, w, "X-Vercel-AI-Data-Stream", "v1")
	codes, values := dataStreamParts(t, w.Body.String())
	if !strings.HasPrefix(codes, "f229aef0") || !strings.HasSuffix(codes, "02ed") {
		t.Errorf("part codes = %s", codes)
	}

	var text strings.Builder
	types := map[string]map[string]any{}
	for i, v := range values {
		switch codes[i] {
		case '0':
			text.WriteString(decode[string](t, v))
		case '2':
			for _, el := range decode[[]map[string]any](t, v) {
				types[el["type"].(string)] = el
			}
		case '9':
			c := decode[dsToolCall](t, v)
			if c.ToolCallID == "" || c.ToolName != "getTokenPrice" || c.Args == nil {
				t.Errorf("bad tool call: %s", v)
			}
		case 'd':
			f := decode[dsFinish](t, v)
			if f.FinishReason != "stop" || f.Usage.PromptTokens == 0 || f.Usage.CompletionTokens == 0 {
				t.Errorf("bad finish: %s", v)
			}
		}
	}
	if !strings.HasPrefix(text.String(), `You said: "Price of SOL?". `) {
		t.Errorf("text = %q", text.String())
	}
	r := types["reasoning"]
	for _, k := range []string{"thinking", "activeIntent", "categories", "networks", "confidence"} {
		if r[k] == nil {
			t.Errorf("reasoning has no %s: %v", k, r)
		}
	}
	if d := types["dev_tools_info"]; d["toolCount"] != float64(len(d["availableTools"].([]any))) {
		t.Errorf("bad dev_tools_info: %v", d)
	}
	if u := types["token_usage"]; u["tokensIn"] == nil || u["tokensOut"] == nil || u["costUsd"] == nil {
		t.Errorf("bad token_usage: %v", u)
	}
}

func TestUIMessageStream(t *testing.T) {
	w := chat(t, `{"model":"demo-ui","messages":[{"role":"user","content":"weather please"}]}`)
	wantHeader(t, w, "Content-Type", "text/event-stream")
	wantHeader(t, w, "X-Vercel-AI-UI-Message-Stream", "v1")
	data := sseData(t, w.Body.String())

	var seq []string
	var text strings.Builder
	for _, d := range data[:len(data)-1] {
		p := decode[map[string]any](t, []byte(d))
		typ, _ := p["type"].(string)
		if len(seq) == 0 || seq[len(seq)-1] != typ {
			seq = append(seq, typ) // runs of the same type collapsed
		}
		switch {
		case typ == "text-delta":
			text.WriteString(p["delta"].(string))
		case strings.HasPrefix(typ, "tool-"):
			if p["toolCallId"] == nil {
				t.Errorf("tool part without toolCallId: %s", d)
			}
		case strings.HasPrefix(typ, "data-"):
			if _, ok := p["data"].([]any); !ok {
				t.Errorf("data part without data array: %s", d)
			}
		}
	}
	want := "start start-step tool-input-start tool-input-available tool-output-available " +
		"tool-input-start tool-input-available tool-output-available finish-step start-step " +
		"text-start text-delta text-end data-tools finish-step finish"
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("part types:\n got %s\nwant %s", got, want)
	}
	if !strings.HasPrefix(text.String(), `You said: "weather please". `) {
		t.Errorf("text = %q", text.String())
	}
}

func TestStructuredJSON(t *testing.T) {
	for _, body := range []string{
		`{"model":"demo-structured","messages":[{"role":"user","content":"Can we meet tomorrow?"}]}`,
		`{"model":"gpt-4o-mini","response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{}}},
		  "messages":[{"role":"user","content":"Can we meet tomorrow?"}]}`,
	} {
		w := chat(t, body)
		c := decode[completion](t, w.Body.Bytes())
		r := decode[structuredReply](t, []byte(c.Choices[0].Message.Content))
		if !strings.HasPrefix(r.Reply, "**You said:** \"Can we meet tomorrow?\"\n") || r.Intent != "question" ||
			!r.RequiresUserAction || len(r.Entities) == 0 || len(r.Topics) < 2 || len(r.Topics) > 4 ||
			r.SchedulingIntent != (schedulingIntent{true, "tomorrow"}) {
			t.Errorf("structured reply = %+v", r)
		}
		if c.Meta != nil {
			t.Errorf("structured reply has gateway meta: %s", w.Body)
		}
	}
}

func TestStructuredStream(t *testing.T) {
	w := chat(t, `{"model":"demo-structured","stream":true,"messages":[{"role":"user","content":"Say \"hi\""}]}`)
	data := sseData(t, w.Body.String())
	cs := chunks(t, data)
	whole := content(cs)
	var r structuredReply
	if err := json.Unmarshal([]byte(whole), &r); err != nil {
		t.Fatalf("joined content is not the JSON object: %v\n%s", err, whole)
	}
	if !strings.Contains(r.Reply, `You said:** "Say "hi""`) || r.Intent != "request" || r.RequiresUserAction {
		t.Errorf("structured reply = %+v", r)
	}
	if len(cs) < 10 {
		t.Errorf("only %d chunks: the JSON should come in small fragments", len(cs))
	}
	// Same reply whether streamed or not.
	w = chat(t, `{"model":"demo-structured","messages":[{"role":"user","content":"Say \"hi\""}]}`)
	if got := decode[completion](t, w.Body.Bytes()).Choices[0].Message.Content; got != whole {
		t.Errorf("JSON content differs from the stream's:\n%s\n%s", got, whole)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		body string
		want replyKind
	}{
		{`{}`, kindOpenAI},
		{`{"model":"gpt-4o"}`, kindOpenAI},
		{`{"model":"Demo-Hustle"}`, kindHustle},
		{`{"model":"demo-ui","response_format":{"type":"json_schema"}}`, kindUI},
		{`{"model":"demo-plain","response_format":{"type":"json_object"}}`, kindStructured},
		{`{"model":"demo-plain","response_format":{"type":"text"}}`, kindPlain},
		{`{"model":"demo-structured"}`, kindStructured},
	} {
		req := decode[chatRequest](t, []byte(tc.body))
		if got := req.kind(); got != tc.want {
			t.Errorf("%s: kind %s, want %s", tc.body, got, tc.want)
		}
	}
}

func TestModels(t *testing.T) {
	w := serve(t, newHandler(t, 0), http.MethodGet, "/v1/models", "")
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	l := decode[modelList](t, w.Body.Bytes())
	var ids []string
	for _, m := range l.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy == "" {
			t.Errorf("bad model %+v", m)
		}
	}
	if l.Object != "list" || strings.Join(ids, ",") != strings.Join(demoModels, ",") {
		t.Errorf("models = %s", w.Body)
	}
	// every listed model answers
	for _, id := range demoModels {
		if w := chat(t, `{"model":"`+id+`","messages":[]}`); w.Code != http.StatusOK || w.Body.Len() == 0 {
			t.Errorf("%s: status %d", id, w.Code)
		}
	}
}

func TestRequestErrors(t *testing.T) {
	h := newHandler(t, 0)
	for _, body := range []string{`{"model":`, `null`, `[]`, `"x"`, ``, `{"stream":"yes"}`} {
		w := serve(t, h, http.MethodPost, "/v1/chat/completions", body)
		if w.Code != http.StatusBadRequest {
			t.Errorf("%q: status %d, want 400", body, w.Code)
		}
		wantHeader(t, w, "Content-Type", "application/json")
		e := decode[apiError](t, w.Body.Bytes())
		if e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
			t.Errorf("%q: error body %s", body, w.Body)
		}
	}

	w := serve(t, h, http.MethodPost, "/v1/chat/completions", `{"model":"`+strings.Repeat("x", maxBodyBytes)+`"}`)
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: status %d, want 413", w.Code)
	}
	w = serve(t, h, http.MethodGet, "/v1/chat/completions", "")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET chat/completions: status %d", w.Code)
	}
}

func TestOtherPathsGoNext(t *testing.T) {
	h := newHandler(t, 0)
	for _, tc := range [][2]string{
		{http.MethodGet, "/"},
		{http.MethodPost, "/v1/embeddings"},
		{http.MethodPost, "/v1/models"},
		{http.MethodPost, "/v1/chat/completions/x"},
		{http.MethodPost, "/v1/messages/count_tokens"},
		{http.MethodGet, "/v1/responses/resp_demo"},
	} {
		if w := serve(t, h, tc[0], tc[1], "{}"); w.Code != http.StatusTeapot {
			t.Errorf("%s %s: status %d, want next handler's 418", tc[0], tc[1], w.Code)
		}
	}
	// any prefix works, like gateways mounted under a base path
	for _, p := range []string{"/openai/deployments/x/chat/completions", "/api/v1/responses", "/anthropic/v1/messages"} {
		if w := serve(t, h, http.MethodPost, p, "{}"); w.Code != http.StatusOK {
			t.Errorf("prefixed path %s: status %d", p, w.Code)
		}
	}
}
