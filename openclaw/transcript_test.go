package openclaw

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

func TestOpenClawSessionKey(t *testing.T) {
	cases := []struct {
		name string
		req  sessionRequest
		want string
	}{
		{"header wins over user", sessionRequest{SessionHeader: "agent:ops:custom", User: "u1"}, "agent:ops:custom"},
		{"header trimmed", sessionRequest{SessionHeader: "  k1 "}, "k1"},
		{"chat user, default agent", sessionRequest{User: "u1"}, "agent:main:openai-user:u1"},
		{"responses user", sessionRequest{User: "u1", Responses: true}, "agent:main:openresponses-user:u1"},
		{"configured agent", sessionRequest{User: "u1", Agent: "ops"}, "agent:ops:openai-user:u1"},
		{"agent header over model and config", sessionRequest{User: "u1", AgentHeader: "hdr", Model: "openclaw:mdl", Agent: "cfg"}, "agent:hdr:openai-user:u1"},
		{"model openclaw:<id>", sessionRequest{User: "u1", Model: "openclaw:research", Agent: "cfg"}, "agent:research:openai-user:u1"},
		{"model agent:<id>", sessionRequest{User: "u1", Model: "agent:research"}, "agent:research:openai-user:u1"},
		{"model openclaw alone", sessionRequest{User: "u1", Model: "openclaw"}, "agent:main:openai-user:u1"},
		{"model openclaw: with no id", sessionRequest{User: "u1", Model: "openclaw: "}, "agent:main:openai-user:u1"},
		{"model of another provider", sessionRequest{User: "u1", Model: "openai/gpt-4o"}, "agent:main:openai-user:u1"},
		{"blank session header is no header", sessionRequest{SessionHeader: " ", User: "u1"}, "agent:main:openai-user:u1"},
		{"session header kept as sent", sessionRequest{SessionHeader: "Agent:Ops:Mine"}, "Agent:Ops:Mine"},
		{"user lower-cased and trimmed", sessionRequest{User: " Alice@Example.COM\t"}, "agent:main:openai-user:alice@example.com"},
		{"blank user is no user, header first", sessionRequest{User: "  ", SessionHeader: "k"}, "k"},
		{"model openclaw/<id>", sessionRequest{User: "u1", Model: "openclaw/Research"}, "agent:research:openai-user:u1"},
		{"model openclaw/default", sessionRequest{User: "u1", Model: "openclaw/default", Agent: "cfg"}, "agent:cfg:openai-user:u1"},
		{"model OpenClaw:<id> in any case", sessionRequest{User: "u1", Model: " OPENCLAW:Ops "}, "agent:ops:openai-user:u1"},
		{"model with an invalid id", sessionRequest{User: "u1", Model: "openclaw:-x", Agent: "cfg"}, "agent:cfg:openai-user:u1"},
		{"agent header lower-cased", sessionRequest{User: "u1", AgentHeader: " Ops "}, "agent:ops:openai-user:u1"},
		{"configured agent normalised", sessionRequest{User: "u1", Agent: "My Agent!"}, "agent:my-agent:openai-user:u1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, made := sessionKeyOf(c.req)
			if got != c.want || made {
				t.Errorf("sessionKeyOf(%+v) = %q, made %v; want %q, made false", c.req, got, made, c.want)
			}
		})
	}
}

func TestOpenClawSessionKeyMade(t *testing.T) {
	made := regexp.MustCompile(`^agent:([a-z-]+):llm-meta:[0-9a-f]{32}$`)
	cases := []struct {
		req   sessionRequest
		agent string
	}{
		{sessionRequest{}, "main"},
		{sessionRequest{Agent: "ops"}, "ops"},
		{sessionRequest{Model: "openclaw:research", Agent: "ops"}, "research"},
		{sessionRequest{AgentHeader: "HDR", Responses: true}, "hdr"},
		{sessionRequest{Agent: "--"}, "main"},
	}
	for _, c := range cases {
		k1, made1 := sessionKeyOf(c.req)
		k2, made2 := sessionKeyOf(c.req)
		m := made.FindStringSubmatch(k1)
		if !made1 || !made2 || m == nil || m[1] != c.agent {
			t.Errorf("sessionKeyOf(%+v) = %q (made %v); want a made key of agent %q", c.req, k1, made1, c.agent)
		}
		if k1 == k2 {
			t.Errorf("two made keys are both %q; each request needs its own session", k1)
		}
	}
}

func TestNormalizeOpenClawAgent(t *testing.T) {
	// The cases of OpenClaw's normalizeAgentId (agent-id.ts).
	for in, want := range map[string]string{
		"main":                        "main",
		"Ops_2":                       "ops_2",
		" ops ":                       "ops",
		"":                            "main",
		"a-@b":                        "a--b",
		"my agent!!":                  "my-agent",
		"@@@":                         "main",
		"_x":                          "_x", // only dashes are dropped at the ends
		"-x-":                         "x",
		"été":                         "t",
		strings.Repeat("a", 64):       strings.Repeat("a", 64),
		strings.Repeat("a", 65):       strings.Repeat("a", 64),
		"!" + strings.Repeat("b", 70): strings.Repeat("b", 64),
	} {
		if got := normalizeAgent(in); got != want {
			t.Errorf("normalizeAgent(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOpenClawRequestFields(t *testing.T) {
	cases := []struct {
		body        string
		model, user string
		responses   bool
	}{
		{`{"model":"openclaw","user":"u1","messages":[]}`, "openclaw", "u1", false},
		{`{"model":"openclaw:ops","input":"hi","user":"u2"}`, "openclaw:ops", "u2", true},
		{`{"input":"hi","messages":[]}`, "", "", false},
		{`{"user":"a","user":"b"}`, "", "b", false},
		{`{"user":7,"model":null}`, "", "", false},
		{`{"user":"\u00e9\n"}`, "", "é\n", false},
		{`[{"user":"u1"}]`, "", "", false},
		{`{"user":"u1"`, "", "", false},
		{``, "", "", false},
	}
	for _, c := range cases {
		model, user, responses := requestFields([]byte(c.body))
		if model != c.model || user != c.user || responses != c.responses {
			t.Errorf("requestFields(%s) = %q, %q, %v; want %q, %q, %v", c.body, model, user, responses, c.model, c.user, c.responses)
		}
	}
}

func TestOpenClawHistoryRequest(t *testing.T) {
	for _, key := range []string{"agent:main:openai-user:u1", `we"ird\key` + "\n\x00é\u2028", ""} {
		body := HistoryRequest(key)
		var got struct {
			Tool string `json:"tool"`
			Args struct {
				SessionKey   string `json:"sessionKey"`
				IncludeTools bool   `json:"includeTools"`
				Limit        int    `json:"limit"`
			} `json:"args"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("HistoryRequest(%q) = %s: not JSON: %v", key, body, err)
		}
		if got.Tool != "sessions_history" || got.Args.SessionKey != key || !got.Args.IncludeTools || got.Args.Limit != 100 {
			t.Errorf("HistoryRequest(%q) = %s", key, body)
		}
	}
}

// openClawRecording reads the recorded sessions_history answer and the id
// of the completion its turn answered.
func openClawRecording(t *testing.T) (answer []byte, runID string) {
	t.Helper()
	dir := "testdata"
	answer, err := os.ReadFile(filepath.Join(dir, "tools-invoke-sessions_history.json"))
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	reply, err := os.ReadFile(filepath.Join(dir, "chat-json-run-of-sessions_history.json"))
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	runID = gjson.GetBytes(reply, "id").Str
	if runID == "" {
		t.Fatal("the recorded completion has no id")
	}
	return answer, runID
}

// collectTools runs TranscriptTools and returns the names it added.
func collectTools(answer []byte, runID string) ([]string, error) {
	var got []string
	err := TranscriptTools(string(answer), runID, func(name string) { got = append(got, name) })
	return got, err
}

func TestOpenClawToolsRecording(t *testing.T) {
	answer, runID := openClawRecording(t)
	got, err := collectTools(answer, runID)
	if err != nil || !reflect.DeepEqual(got, []string{"ls"}) {
		t.Fatalf("the recorded turn gives %q, %v; want [ls], no error", got, err)
	}
	// Another run's id (the runs of other turns in the same session): none
	// of this turn's tools.
	for _, other := range []string{"chatcmpl_other", strings.ToUpper(runID), runID[:len(runID)-1], ""} {
		got, err := collectTools(answer, other)
		if err != nil || len(got) != 0 {
			t.Errorf("run id %q gives %q, %v; want nothing, no error", other, got, err)
		}
	}
}

// openClawAnswer wraps transcript messages in a sessions_history answer of
// the recorded shape.
func openClawAnswer(messages ...string) []byte {
	return []byte(`{"ok":true,"result":{"content":[{"type":"text","text":"{}"}],"details":{"sessionKey":"agent:main:openai-user:u1","messages":[` +
		strings.Join(messages, ",") + `],"truncated":false}}}`)
}

func callMsg(run string, calls ...string) string {
	return `{"role":"assistant","content":[` + strings.Join(calls, ",") + `],"__openclaw":{"runId":"` + run + `","seq":2}}`
}

func toolCall(name, args string) string {
	return `{"type":"toolCall","id":"c1","name":"` + name + `","arguments":` + args + `}`
}

func resultMsg(run, tool string) string {
	return `{"role":"toolResult","toolCallId":"c1","toolName":"` + tool + `","content":[{"type":"text","text":"x"}],"isError":false,"__openclaw":{"runId":"` + run + `"}}`
}

func TestOpenClawToolsOtherRunsDoNotLeak(t *testing.T) {
	answer := openClawAnswer(
		`{"role":"user","content":"first","__openclaw":{"seq":1}}`,
		callMsg("run-a", toolCall("read", `{"path":"a"}`)),
		resultMsg("run-a", "read"),
		`{"role":"assistant","content":[{"type":"text","text":"ls exec"}],"__openclaw":{"runId":"run-a"}}`,
		`{"role":"user","content":"second"}`,
		callMsg("run-b", toolCall("ls", `{"path":"."}`), toolCall("exec", `{"cmd":"date"}`)),
		resultMsg("run-b", "ls"),
		resultMsg("run-b", "exec"),
		callMsg("run-a", toolCall("web_search", `{}`)), // a late message of run-a
		resultMsg("run-c", "write"),
		resultMsg("run-b", "memory_get"), // a result whose call fell out of the window
	)
	for run, want := range map[string][]string{
		"run-a": {"read", "web_search"},
		"run-b": {"ls", "exec", "memory_get"},
		"run-c": {"write"},
		"run-d": nil,
	} {
		got, err := collectTools(answer, run)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s gives %q, %v; want %q", run, got, err, want)
		}
	}
}

// toolCase is a transcript of run "r" and the names it must give.
type toolCase struct {
	name     string
	messages []string
	want     []string
}

func runToolCases(t *testing.T, cases []toolCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := collectTools(openClawAnswer(c.messages...), "r")
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestOpenClawToolsWrapper(t *testing.T) {
	cases := []toolCase{
		{"arguments object", []string{callMsg("r", toolCall("tool_call", `{"id":"web_search","args":{"query":"x"}}`)), resultMsg("r", "tool_call")}, []string{"web_search"}},
		{"arguments JSON string", []string{callMsg("r", toolCall("tool_call", `"{\"id\":\"exec\",\"args\":{}}"`))}, []string{"exec"}},
		{"repeated id, last wins", []string{callMsg("r", toolCall("tool_call", `{"id":"a","id":"b"}`))}, []string{"b"}},
		{"result named after the real tool", []string{callMsg("r", toolCall("tool_call", `{"id":"exec"}`)), resultMsg("r", "exec")}, []string{"exec"}},
		{"catalog id", []string{callMsg("r", toolCall("tool_call", `{"id":"openclaw:core:web_search","args":{"query":"x"}}`))}, []string{"web_search"}},
		{"MCP catalog id", []string{callMsg("r", toolCall("tool_call", `{"id":" mcp:github:create_issue "}`))}, []string{"create_issue"}},
		{"toolId", []string{callMsg("r", toolCall("tool_call", `{"toolId":"exec","cmd":"date"}`))}, []string{"exec"}},
		{"name", []string{callMsg("r", toolCall("tool_call", `{"name":"read","path":"a"}`))}, []string{"read"}},
		{"null id, then toolId", []string{callMsg("r", toolCall("tool_call", `{"id":null,"toolId":"exec"}`))}, []string{"exec"}},
		{"id before name", []string{callMsg("r", toolCall("tool_call", `{"name":"read","id":"exec"}`))}, []string{"exec"}},
		{"selector inside args", []string{callMsg("r", toolCall("tool_call", `{"args":{"id":"exec","cmd":"date"}}`))}, []string{"exec"}},
		{"selector inside input", []string{callMsg("r", toolCall("tool_call", `{"input":{"name":"read"}}`))}, []string{"read"}},
		{"not two levels down", []string{callMsg("r", toolCall("tool_call", `{"args":{"args":{"id":"exec"}}}`))}, []string{"tool_call"}},
		{"no id: the wrapper ran", []string{callMsg("r", toolCall("tool_call", `{"query":"weather"}`))}, []string{"tool_call"}},
		{"id not a string", []string{callMsg("r", toolCall("tool_call", `{"id":7}`))}, []string{"tool_call"}},
		{"arguments string not JSON", []string{callMsg("r", toolCall("tool_call", `"{\"id\":"`))}, []string{"tool_call"}},
		{"arguments string not an object", []string{callMsg("r", toolCall("tool_call", `"[\"exec\"]"`))}, []string{"tool_call"}},
		{"wrapper result alone names nothing", []string{resultMsg("r", "tool_call")}, nil},
	}
	runToolCases(t, cases)
}

func TestOpenClawToolsShapes(t *testing.T) {
	cases := []toolCase{
		{"each name once, in order", []string{callMsg("r", toolCall("ls", `{}`), toolCall("read", `{}`), toolCall("ls", `{}`)), resultMsg("r", "ls"), resultMsg("r", "exec")}, []string{"ls", "read", "exec"}},
		{"other content items", []string{callMsg("r", `{"type":"text","text":"toolCall"}`, `{"type":"thinking","name":"x"}`, `"toolCall"`, `null`)}, nil},
		{"name not a string", []string{callMsg("r", `{"type":"toolCall","name":["ls"]}`)}, nil},
		{"empty names", []string{callMsg("r", toolCall("", `{}`)), resultMsg("r", "")}, nil},
		{"repeated tag, last wins", []string{`{"role":"toolResult","toolName":"ls","__openclaw":{"runId":"r"},"__openclaw":{"runId":"s"}}`, `{"role":"toolResult","toolName":"cat","__openclaw":{"runId":"s"},"__openclaw":{"runId":"r"}}`}, []string{"cat"}},
		{"run id not a string", []string{`{"role":"toolResult","toolName":"ls","__openclaw":{"runId":["r"]}}`}, nil},
		{"run id outside __openclaw", []string{`{"role":"toolResult","toolName":"ls","runId":"r"}`}, nil},
		{"content not an array", []string{`{"role":"assistant","content":"toolCall ls","__openclaw":{"runId":"r"}}`}, nil},
		{"messages not objects", []string{`"r"`, `["r"]`, `7`}, nil},
		{"escaped names", []string{callMsg("r", toolCall(`web\u005fsearch`, `{}`))}, []string{"web_search"}},
		{"deep nesting in arguments", []string{callMsg("r", toolCall("ls", strings.Repeat("[", 100000)+strings.Repeat("]", 100000)))}, []string{"ls"}},
	}
	runToolCases(t, cases)
}

func TestOpenClawToolsBounded(t *testing.T) {
	// Many distinct names: at most 256 kept (SPEC 8.1), in order.
	var msgs []string
	for i := range 1000 {
		msgs = append(msgs, resultMsg("r", "tool"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26%26))))
	}
	got, err := collectTools(openClawAnswer(msgs...), "r")
	if err != nil || len(got) != maxToolNames {
		t.Fatalf("1000 distinct names give %d names, %v; want %d", len(got), err, maxToolNames)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Fatalf("%q passed twice", n)
		}
		seen[n] = true
	}
	// A 4 MiB answer (the module's cap) of one run's messages naming the same
	// tool: one name.
	one := resultMsg("r", "ls")
	msgs = msgs[:0]
	for n := 0; n < 4<<20; n += len(one) + 1 {
		msgs = append(msgs, one)
	}
	got, err = collectTools(openClawAnswer(msgs...), "r")
	if err != nil || !reflect.DeepEqual(got, []string{"ls"}) {
		t.Fatalf("%d copies of one result give %q, %v; want [ls]", len(msgs), got, err)
	}
}

func TestOpenClawToolsFailedAnswers(t *testing.T) {
	answer, runID := openClawRecording(t)
	cases := []struct {
		name   string
		answer string
		want   error
	}{
		{"empty", ``, errMalformed},
		{"not JSON", `<html>502 Bad Gateway</html>`, errMalformed},
		{"an array", `[` + string(answer) + `]`, errMalformed},
		{"trailing garbage", string(answer) + `}`, errMalformed},
		{"ok false", `{"ok":false,"error":{"type":"forbidden","message":"no"}}`, errNotOK},
		{"ok false after the result", strings.TrimSuffix(strings.TrimSpace(string(answer)), "}") + `,"ok":false}`, errNotOK},
		{"missing session", `{"ok":true,"result":{"content":[],"details":{"status":"error","error":"session not found","messages":[]}}}`, errStatusError},
		{"no details", `{"ok":true,"result":{"content":[]}}`, errNoMessages},
		{"messages not an array", `{"ok":true,"result":{"details":{"messages":{"0":{}}}}}`, errNoMessages},
		{"result not an object", `{"ok":true,"result":"` + runID + `"}`, errNoMessages},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := collectTools([]byte(c.answer), runID)
			if !errors.Is(err, c.want) || len(got) != 0 {
				t.Errorf("got %q, %v; want nothing and %v", got, err, c.want)
			}
		})
	}
}

func TestOpenClawToolsTruncated(t *testing.T) {
	// Every cut of the recorded answer (a body broken off, or the caller's
	// byte limit met) adds nothing and says so.
	answer, runID := openClawRecording(t)
	answer = []byte(strings.TrimRight(string(answer), " \n"))
	for n := range len(answer) {
		got, err := collectTools(answer[:n], runID)
		if !errors.Is(err, errMalformed) || len(got) != 0 {
			t.Fatalf("the first %d of %d bytes give %q, %v; want nothing and %v", n, len(answer), got, err, errMalformed)
		}
	}
}

func TestOpenClawToolsNamesAreCopies(t *testing.T) {
	answer, runID := openClawRecording(t)
	got, err := collectTools(answer, runID)
	if err != nil || len(got) != 1 {
		t.Fatalf("got %q, %v", got, err)
	}
	for i := range answer {
		answer[i] = 'x'
	}
	if got[0] != "ls" {
		t.Errorf("the name changed with the answer's buffer: %q", got[0])
	}
}

// BenchmarkOpenClawTools reads answers of 1k, 10k and 100k messages, half
// of them another run's: the time per byte must stay flat (linear work).
func BenchmarkOpenClawTools(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		msgs := make([]string, 0, n)
		for i := range n {
			if i%2 == 0 {
				msgs = append(msgs, callMsg("other", toolCall("tool_call", `{"id":"openclaw:core:web_search","args":{"q":"x"}}`)))
			} else {
				msgs = append(msgs, resultMsg("r", "ls"))
			}
		}
		answer := string(openClawAnswer(msgs...))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				if err := TranscriptTools(answer, "r", func(string) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readOpenClaw reads a file of testdata.
func readOpenClaw(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	return b
}

func TestOpenClawToolsRecordedRuns(t *testing.T) {
	// Five turns of one session: two without a tool, two running ls, one
	// running ls through the tool_call wrapper (the transcript then also
	// holds the wrapped call as an openclaw.nested-tool.v1 message, and the
	// wrapper's result is named tool_call).
	answer := readOpenClaw(t, "tools-invoke-sessions_history-runs-and-wrapper.json")
	const wrapperRun = "chatcmpl_fdb23e2f-7cc0-4edf-8ba6-19b27d1afda4"
	for run, want := range map[string][]string{
		"chatcmpl_42934642-cf71-4ebc-b232-fae0c7a9ae67": nil,
		"chatcmpl_cbe32242-32e2-4e60-a2e9-4bde0daf3080": nil,
		"chatcmpl_1c2aec02-bf20-461a-a810-9d219526f6be": {"ls"},
		"chatcmpl_a745a34b-3227-458a-b3e1-2b82cd659754": {"ls"},
		wrapperRun: {"ls"},
	} {
		got, err := collectTools(answer, run)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("run %s gives %q, %v; want %q", run, got, err, want)
		}
	}

	// Without the nested message, the wrapper's arguments still name ls;
	// without their id too, the wrapper is all that is known.
	nested := -1
	gjson.GetBytes(answer, "result.details.messages").ForEach(func(i, m gjson.Result) bool {
		if m.Get("customType").Str == "openclaw.nested-tool.v1" {
			nested = int(i.Int())
		}
		return true
	})
	if nested < 0 {
		t.Fatal("the recording has no nested-tool message")
	}
	withoutNested, err := sjson.DeleteBytes(answer, "result.details.messages."+strconv.Itoa(nested))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := collectTools(withoutNested, wrapperRun); err != nil || !reflect.DeepEqual(got, []string{"ls"}) {
		t.Errorf("without the nested message: %q, %v; want [ls]", got, err)
	}
	withoutID := []byte(strings.Replace(string(withoutNested), `"arguments":{"id":"ls",`, `"arguments":{`, 1))
	if len(withoutID) == len(withoutNested) {
		t.Fatal("the recording's wrapper call has no arguments id to remove")
	}
	if got, err := collectTools(withoutID, wrapperRun); err != nil || !reflect.DeepEqual(got, []string{"tool_call"}) {
		t.Errorf("without the wrapped tool's id: %q, %v; want [tool_call]", got, err)
	}
}

func TestOpenClawToolsRecordedResponses(t *testing.T) {
	answer := readOpenClaw(t, "tools-invoke-sessions_history-responses.json")
	runID := gjson.GetBytes(readOpenClaw(t, "responses-json-run-of-sessions_history.json"), "id").Str
	if !strings.HasPrefix(runID, "resp_") {
		t.Fatalf("the recorded response's id is %q", runID)
	}
	if got, err := collectTools(answer, runID); err != nil || !reflect.DeepEqual(got, []string{"ls"}) {
		t.Errorf("the Responses turn gives %q, %v; want [ls]", got, err)
	}
}

func TestOpenClawToolsRecordedMissingSession(t *testing.T) {
	got, err := collectTools(readOpenClaw(t, "tools-invoke-sessions_history-missing-session.json"), "chatcmpl_x")
	if !errors.Is(err, errStatusError) || len(got) != 0 {
		t.Errorf("got %q, %v; want nothing and %v", got, err, errStatusError)
	}
}
