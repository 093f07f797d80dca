package demogateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

type jsonObject = map[string]any

// respStreamEvent is a Responses stream event as a client decodes it.
type respStreamEvent struct {
	Type           string     `json:"type"`
	SequenceNumber *int       `json:"sequence_number"`
	Response       jsonObject `json:"response"`
	OutputIndex    *int       `json:"output_index"`
	ContentIndex   *int       `json:"content_index"`
	ItemID         string     `json:"item_id"`
	Item           jsonObject `json:"item"`
	Part           jsonObject `json:"part"`
	Delta          *string    `json:"delta"`
	Arguments      *string    `json:"arguments"`
	Text           *string    `json:"text"`
}

// accumulateResponse rebuilds the response from a Responses stream the way
// the OpenAI SDKs' response stream helpers do (openai-node ResponseStream):
// the snapshot starts from response.created, output items are appended on
// output_item.added and replaced on output_item.done, content parts
// appended, text and argument deltas concatenated. It checks what those
// helpers rely on: response.created first, sequence numbers 0, 1, 2…, every
// index pointing at an existing item, the .done events agreeing with the
// deltas, and response.completed last. It returns the rebuilt output and the
// completed response.
func accumulateResponse(t *testing.T, evs []namedEvent) (output []any, completed jsonObject) {
	t.Helper()
	var snapshot jsonObject
	for i, ne := range evs {
		e := decode[respStreamEvent](t, ne.data)
		if e.SequenceNumber == nil || *e.SequenceNumber != i {
			t.Fatalf("event %d (%s): sequence_number %v", i, e.Type, e.SequenceNumber)
		}
		if (i == 0) != (e.Type == "response.created") {
			t.Fatalf("event %d is %s: response.created must come first, and only first", i, e.Type)
		}
		if (i == len(evs)-1) != (e.Type == "response.completed") {
			t.Fatalf("event %d of %d is %s: response.completed must come last, and only last", i, len(evs), e.Type)
		}
		item := func() jsonObject {
			if e.OutputIndex == nil || *e.OutputIndex >= len(output) {
				t.Fatalf("event %d (%s): output_index %v of %d items", i, e.Type, e.OutputIndex, len(output))
			}
			it := output[*e.OutputIndex].(jsonObject)
			if e.ItemID != "" && it["id"] != e.ItemID {
				t.Fatalf("event %d (%s): item_id %s, item at output_index is %v", i, e.Type, e.ItemID, it["id"])
			}
			return it
		}
		part := func() jsonObject {
			content := item()["content"].([]any)
			if e.ContentIndex == nil || *e.ContentIndex >= len(content) {
				t.Fatalf("event %d (%s): content_index %v of %d parts", i, e.Type, e.ContentIndex, len(content))
			}
			return content[*e.ContentIndex].(jsonObject)
		}
		switch e.Type {
		case "response.created", "response.in_progress":
			if e.Response["status"] != "in_progress" || e.Response["object"] != "response" {
				t.Fatalf("event %d: bad starting response %v", i, e.Response)
			}
			snapshot = e.Response
		case "response.output_item.added":
			if e.OutputIndex == nil || *e.OutputIndex != len(output) {
				t.Fatalf("event %d: item added at output_index %v, want %d", i, e.OutputIndex, len(output))
			}
			output = append(output, e.Item)
		case "response.output_item.done":
			it := item()
			it["status"] = "completed"
			if !reflect.DeepEqual(it, e.Item) {
				t.Fatalf("event %d: done item %v differs from the one built from deltas %v", i, e.Item, it)
			}
			output[*e.OutputIndex] = e.Item
		case "response.content_part.added":
			it := item()
			it["content"] = append(it["content"].([]any), e.Part)
		case "response.content_part.done":
			if p := part(); !reflect.DeepEqual(p, e.Part) {
				t.Fatalf("event %d: done part %v differs from %v", i, e.Part, p)
			}
		case "response.output_text.delta":
			p := part()
			p["text"] = p["text"].(string) + *e.Delta
		case "response.output_text.done":
			if p := part(); p["text"] != *e.Text {
				t.Fatalf("event %d: done text %q, deltas gave %q", i, *e.Text, p["text"])
			}
		case "response.function_call_arguments.delta":
			it := item()
			it["arguments"] = it["arguments"].(string) + *e.Delta
		case "response.function_call_arguments.done":
			if it := item(); it["arguments"] != *e.Arguments {
				t.Fatalf("event %d: done arguments %q, deltas gave %q", i, *e.Arguments, it["arguments"])
			}
		case "response.completed":
			completed = e.Response
		default:
			t.Fatalf("event %d: unexpected type %s", i, e.Type)
		}
	}
	if snapshot == nil || completed == nil {
		t.Fatalf("no response.created or response.completed")
	}
	return output, completed
}

// outputText joins the output_text of the message items, as the SDKs'
// output_text does.
func outputTextOf(output []any) string {
	var b strings.Builder
	for _, o := range output {
		it := o.(jsonObject)
		if it["type"] != "message" {
			continue
		}
		for _, p := range it["content"].([]any) {
			if p := p.(jsonObject); p["type"] == "output_text" {
				b.WriteString(p["text"].(string))
			}
		}
	}
	return b.String()
}

// functionCalls lists "name(arguments)" of the function_call items.
func functionCalls(output []any) []string {
	var calls []string
	for _, o := range output {
		if it := o.(jsonObject); it["type"] == "function_call" {
			calls = append(calls, fmt.Sprintf("%s(%s)", it["name"], it["arguments"]))
		}
	}
	return calls
}

func TestResponsesJSON(t *testing.T) {
	w := post(t, "/v1/responses", `{"model":"gpt-4.1-mini","instructions":"Be brief.",
		"input":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi!"},
		         {"type":"message","role":"user","content":[{"type":"input_text","text":"Weather"},{"type":"input_text","text":"in Paris?"}]}]}`)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "application/json")
	wantHeader(t, w, "Content-Length", fmt.Sprint(w.Body.Len()))
	r := decode[jsonObject](t, w.Body.Bytes())
	if r["object"] != "response" || r["status"] != "completed" || r["model"] != "gpt-4.1-mini" || r["id"] == "" {
		t.Errorf("bad response: %s", w.Body)
	}
	output := r["output"].([]any)
	want := []string{`get_weather({"city":"Paris","unit":"celsius"})`, `get_forecast({"city":"Paris","days":3})`}
	if got := functionCalls(output); !reflect.DeepEqual(got, want) {
		t.Errorf("function calls = %v, want %v", got, want)
	}
	for _, o := range output[:2] {
		if it := o.(jsonObject); it["status"] != "completed" || !strings.HasPrefix(it["call_id"].(string), "call_") ||
			!strings.HasPrefix(it["id"].(string), "fc_") {
			t.Errorf("bad function_call item: %v", it)
		}
	}
	msg := output[2].(jsonObject)
	if msg["type"] != "message" || msg["role"] != "assistant" || msg["status"] != "completed" {
		t.Errorf("last item is not the assistant message: %v", msg)
	}
	if got := outputTextOf(output); !strings.HasPrefix(got, `You said: "Weather in Paris?". I asked get_weather`) {
		t.Errorf("output_text = %q", got)
	}
	if _, ok := r["meta"]; ok {
		t.Errorf("a Responses reply carries no gateway meta: %s", w.Body)
	}

	u := decode[responsesUsage](t, mustMarshal(t, r["usage"]))
	// instructions, "Hello" and "Hi!" are the cached prefix: 18 characters.
	if u.InputTokens == 0 || u.OutputTokens == 0 || u.TotalTokens != u.InputTokens+u.OutputTokens ||
		u.InputTokensDetails.CachedTokens != 18/4 || u.Cost != nil {
		t.Errorf("usage = %+v", u)
	}
	for _, k := range []string{`"input_tokens_details":{"cached_tokens":`, `"output_tokens_details":{"reasoning_tokens":0}`} {
		if !strings.Contains(w.Body.String(), k) {
			t.Errorf("usage lacks %s: %s", k, w.Body)
		}
	}
}

func TestResponsesStream(t *testing.T) {
	body := `{"model":"demo-openai","stream":true,"input":"Weather in Paris?"}`
	w := post(t, "/v1/responses", body)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	wantHeader(t, w, "Content-Type", "text/event-stream")
	wantHeader(t, w, "Content-Length", "")
	evs := namedEvents(t, w.Body.String())
	output, completed := accumulateResponse(t, evs)

	// The stream rebuilds exactly the completed response's output, which is
	// the JSON reply's.
	if !reflect.DeepEqual(output, completed["output"]) {
		t.Errorf("output built from the events:\n%v\ndiffers from response.completed's:\n%v", output, completed["output"])
	}
	w = post(t, "/v1/responses", strings.Replace(body, `"stream":true`, `"stream":false`, 1))
	if whole := decode[jsonObject](t, w.Body.Bytes()); !reflect.DeepEqual(whole, completed) {
		t.Errorf("response.completed's response:\n%v\ndiffers from the JSON reply:\n%v", completed, whole)
	}
	if got := functionCalls(output); len(got) != 2 {
		t.Errorf("function calls = %v", got)
	}
	if got := outputTextOf(output); !strings.HasPrefix(got, `You said: "Weather in Paris?". `) {
		t.Errorf("text = %q", got)
	}
	// Arguments and text arrive in several pieces, like a model's.
	var textDeltas, argDeltas int
	for _, e := range evs {
		switch e.name {
		case "response.output_text.delta":
			textDeltas++
		case "response.function_call_arguments.delta":
			argDeltas++
		}
	}
	if textDeltas < 10 || argDeltas < 4 {
		t.Errorf("%d text deltas and %d argument deltas: the reply should stream in pieces", textDeltas, argDeltas)
	}
	if u := completed["usage"].(jsonObject); u["input_tokens"] == nil || u["output_tokens"] == nil || u["total_tokens"] == nil {
		t.Errorf("response.completed without usage: %v", u)
	}
	if evs[0].name != "response.created" || evs[1].name != "response.in_progress" ||
		!strings.Contains(string(evs[0].data), `"output":[],"parallel_tool_calls":true,"usage":null`) {
		t.Errorf("stream does not start like the API's: %s", evs[0].data)
	}
}

// Responses answers by model like chat: plain has no tools; structured
// writes the JSON object as its text.
func TestResponsesKinds(t *testing.T) {
	r := decode[jsonObject](t, post(t, "/v1/responses", `{"model":"demo-plain","input":"hi"}`).Body.Bytes())
	output := r["output"].([]any)
	if len(output) != 1 || !strings.HasPrefix(outputTextOf(output), `You said: "hi". This is a plain reply`) {
		t.Errorf("plain output = %v", output)
	}
	r = decode[jsonObject](t, post(t, "/v1/responses", `{"model":"demo-structured","input":"Meet tomorrow?"}`).Body.Bytes())
	output = r["output"].([]any)
	s := decode[structuredReply](t, []byte(outputTextOf(output)))
	if len(output) != 1 || s.Intent != "question" || !s.SchedulingIntent.Detected {
		t.Errorf("structured output = %v", output)
	}
	// Hustle is a chat-gateway protocol: here it answers as the default.
	r = decode[jsonObject](t, post(t, "/v1/responses", `{"model":"demo-hustle","input":"Open a terminal"}`).Body.Bytes())
	if got := functionCalls(r["output"].([]any)); !reflect.DeepEqual(got, []string{`launcher({"app":"terminal"})`}) {
		t.Errorf("demo-hustle on /responses: function calls %v", got)
	}
}

func TestResponsesRequestErrors(t *testing.T) {
	h := newHandler(t, 0)
	for _, body := range []string{`{"input":`, `null`, `{"input":3}`, `{"input":{"role":"user"}}`, `{"stream":"yes"}`} {
		w := serve(t, h, http.MethodPost, "/v1/responses", body)
		e := decode[apiError](t, w.Body.Bytes())
		if w.Code != http.StatusBadRequest || e.Error.Type != "invalid_request_error" || e.Error.Message == "" {
			t.Errorf("%s: status %d, body %s", body, w.Code, w.Body)
		}
	}
	w := serve(t, h, http.MethodGet, "/v1/responses", "")
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET /v1/responses: status %d", w.Code)
	}
	// No input is an empty prompt, answered like an empty chat.
	if w := serve(t, h, http.MethodPost, "/v1/responses", `{}`); w.Code != http.StatusOK ||
		!strings.Contains(w.Body.String(), `You said: \"(nothing)\"`) {
		t.Errorf("no input: %d %s", w.Code, w.Body)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
