package demogateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

const (
	geminiJSONPath   = "/v1beta/models/gemini-2.5-flash:generateContent"
	geminiSSEPath    = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
	geminiArrayPath  = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
	geminiWeatherReq = `{"systemInstruction":{"parts":[{"text":"Be brief."}]},
		"contents":[{"role":"user","parts":[{"text":"Hello"}]},{"role":"model","parts":[{"text":"Hi!"}]},
		            {"role":"user","parts":[{"text":"Weather in Paris?"}]}],
		"generationConfig":{"temperature":0.2}}`
)

// geminiCallsOf lists "name(args)" of the functionCall parts.
func geminiCallsOf(t *testing.T, parts []any) []string {
	var out []string
	for _, p := range parts {
		if fc, ok := p.(jsonObject)["functionCall"].(jsonObject); ok {
			out = append(out, fmt.Sprintf("%s(%s)", fc["name"], mustMarshal(t, fc["args"])))
		}
	}
	return out
}

// geminiTextOf joins the text parts.
func geminiTextOf(parts []any) string {
	var b strings.Builder
	for _, p := range parts {
		if s, ok := p.(jsonObject)["text"].(string); ok {
			b.WriteString(s)
		}
	}
	return b.String()
}

// candidate0 is the only candidate of a reply or event, checked to be the
// model's, at index 0.
func candidate0(t *testing.T, r jsonObject) jsonObject {
	t.Helper()
	cs, _ := r["candidates"].([]any)
	if len(cs) != 1 {
		t.Fatalf("want one candidate: %v", r)
	}
	c := cs[0].(jsonObject)
	if c["index"] != 0.0 || c["content"].(jsonObject)["role"] != "model" {
		t.Fatalf("bad candidate: %v", c)
	}
	return c
}

func TestGeminiJSON(t *testing.T) {
	w := post(t, geminiJSONPath, geminiWeatherReq)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "application/json")
	r := decode[jsonObject](t, w.Body.Bytes())
	if r["modelVersion"] != "gemini-2.5-flash" || r["responseId"] != demoGeminiResponseID {
		t.Errorf("bad reply: %s", w.Body)
	}
	c := candidate0(t, r)
	if c["finishReason"] != "STOP" {
		t.Errorf("finishReason = %v", c["finishReason"])
	}
	parts := c["content"].(jsonObject)["parts"].([]any)
	want := []string{`get_weather({"city":"Paris","unit":"celsius"})`, `get_forecast({"city":"Paris","days":3})`}
	if got := geminiCallsOf(t, parts); !reflect.DeepEqual(got, want) {
		t.Errorf("functionCall parts = %v, want %v", got, want)
	}
	if last := parts[len(parts)-1].(jsonObject); !strings.HasPrefix(fmt.Sprint(last["text"]), `You said: "Weather in Paris?". I asked get_weather`) {
		t.Errorf("last part is not the text: %v", last)
	}
	if _, ok := r["meta"]; ok {
		t.Errorf("a Gemini reply carries no gateway meta: %s", w.Body)
	}

	// The system instruction, "Hello" and "Hi!" (17 characters) are cached;
	// promptTokenCount counts them too, as Gemini counts it.
	u := decode[geminiUsage](t, mustMarshal(t, r["usageMetadata"]))
	var chat chatRequest
	chat.Messages = []message{{Content: json.RawMessage(`"Be brief."`)}, {Content: json.RawMessage(`"Hello"`)},
		{Content: json.RawMessage(`"Hi!"`)}, {Content: json.RawMessage(`"Weather in Paris?"`)}}
	if u.PromptTokenCount != chat.promptTokens() || u.CachedContentTokenCount != 17/4 || u.CandidatesTokenCount == 0 ||
		u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount {
		t.Errorf("usageMetadata = %+v", u)
	}
}

// geminiSSE checks Gemini's framing (every event one `data: ` line of JSON
// ended by CRLF CRLF, nothing else, no [DONE]) and returns the events.
func geminiSSE(t *testing.T, body string) []jsonObject {
	t.Helper()
	if !strings.HasSuffix(body, "\r\n\r\n") {
		t.Fatalf("stream does not end with CRLF CRLF: %q", body)
	}
	var out []jsonObject
	for ev := range strings.SplitSeq(strings.TrimSuffix(body, "\r\n\r\n"), "\r\n\r\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.ContainsAny(data, "\r\n") {
			t.Fatalf("event is not one data line: %q", ev)
		}
		out = append(out, decode[jsonObject](t, []byte(data)))
	}
	return out
}

// accumulateGemini rebuilds the reply from a stream's events the way the
// Gemini SDKs do: parts appended in order, adjacent text parts joined, the
// last event's finishReason and usageMetadata. It checks that only the last
// event has a finishReason and that every event names the model.
func accumulateGemini(t *testing.T, evs []jsonObject) jsonObject {
	t.Helper()
	var parts []any
	for i, e := range evs {
		if e["modelVersion"] != "gemini-2.5-flash" || e["usageMetadata"] == nil {
			t.Fatalf("event %d: %v", i, e)
		}
		c := candidate0(t, e)
		if _, has := c["finishReason"]; has != (i == len(evs)-1) {
			t.Fatalf("event %d of %d: finishReason %v: only the last event has one", i, len(evs), c["finishReason"])
		}
		for _, p := range c["content"].(jsonObject)["parts"].([]any) {
			text, isText := p.(jsonObject)["text"].(string)
			if n := len(parts); isText && n > 0 {
				if prev, ok := parts[n-1].(jsonObject)["text"].(string); ok {
					parts[n-1] = jsonObject{"text": prev + text}
					continue
				}
			}
			parts = append(parts, p)
		}
	}
	last := evs[len(evs)-1]
	c := candidate0(t, last)
	c["content"].(jsonObject)["parts"] = parts
	return last
}

func TestGeminiStream(t *testing.T) {
	w := post(t, geminiSSEPath, geminiWeatherReq)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "text/event-stream")
	evs := geminiSSE(t, w.Body.String())
	if len(evs) < 3 {
		t.Fatalf("%d events", len(evs))
	}
	got := accumulateGemini(t, evs)

	// The stream rebuilds the JSON reply exactly, usage included.
	whole := decode[jsonObject](t, post(t, geminiJSONPath, geminiWeatherReq).Body.Bytes())
	if !reflect.DeepEqual(got, whole) {
		t.Errorf("reply built from the stream:\n%v\ndiffers from the JSON reply:\n%v", got, whole)
	}
	// The calls come first, together, in one event; the events before the
	// last carry the prompt's count only.
	if calls := geminiCallsOf(t, candidate0(t, evs[0])["content"].(jsonObject)["parts"].([]any)); len(calls) != 2 {
		t.Errorf("first event's calls = %v", calls)
	}
	if u := evs[1]["usageMetadata"].(jsonObject); u["candidatesTokenCount"] != nil || u["promptTokenCount"] == nil {
		t.Errorf("running usage = %v", u)
	}
}

func TestGeminiStreamArray(t *testing.T) {
	// Without alt=sse, Gemini streams one JSON array, element by element.
	w := post(t, geminiArrayPath, geminiWeatherReq)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "application/json")
	if w.Header().Get("Content-Length") != "" {
		t.Errorf("a streamed array has no Content-Length")
	}
	arr := decode[[]jsonObject](t, w.Body.Bytes())
	sse := geminiSSE(t, post(t, geminiSSEPath, geminiWeatherReq).Body.String())
	if !reflect.DeepEqual(arr, sse) {
		t.Errorf("array elements differ from the SSE events:\n%v\n%v", arr, sse)
	}
}

func TestGeminiKinds(t *testing.T) {
	// The model of the path picks the reply as on the other endpoints.
	r := decode[jsonObject](t, post(t, "/v1beta/models/demo-plain:generateContent",
		`{"contents":[{"parts":[{"text":"Weather?"}]}]}`).Body.Bytes())
	parts := candidate0(t, r)["content"].(jsonObject)["parts"].([]any)
	if len(parts) != 1 || !strings.Contains(geminiTextOf(parts), "plain reply") || r["modelVersion"] != "demo-plain" {
		t.Errorf("plain reply: %v", r)
	}
	r = decode[jsonObject](t, post(t, "/gw/v1/models/demo-structured:generateContent",
		`{"contents":[{"parts":[{"text":"Meet Acme"}]}]}`).Body.Bytes())
	var structured jsonObject
	if err := json.Unmarshal([]byte(geminiTextOf(candidate0(t, r)["content"].(jsonObject)["parts"].([]any))), &structured); err != nil {
		t.Errorf("structured text is not a JSON object: %v", r)
	}
}

func TestGeminiRequestErrors(t *testing.T) {
	h := newHandler(t, 0)
	for _, body := range []string{`{"contents":`, `null`, `{"contents":"x"}`} {
		w := serve(t, h, http.MethodPost, geminiJSONPath, body)
		e := decode[geminiError](t, w.Body.Bytes())
		if w.Code != http.StatusBadRequest || e.Error.Code != 400 || e.Error.Status != "INVALID_ARGUMENT" || e.Error.Message == "" {
			t.Errorf("%s: status %d, body %s", body, w.Code, w.Body)
		}
	}
	w := serve(t, h, http.MethodGet, geminiJSONPath, "")
	if e := decode[geminiError](t, w.Body.Bytes()); w.Code != http.StatusMethodNotAllowed || e.Error.Code != 405 {
		t.Errorf("GET: status %d, body %s", w.Code, w.Body)
	}
	if w := serve(t, h, http.MethodPost, "/v1beta/models/x:countTokens", "{}"); w.Code != http.StatusTeapot {
		t.Errorf("another method is not the demo's: status %d", w.Code)
	}
}
