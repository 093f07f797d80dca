package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// msgs builds a request body around a messages array.
func trimBody(list ...string) string {
	return `{"model":"gpt-4o-mini","messages":[` + strings.Join(list, ",") + `],"stream":true}`
}

const (
	sysJarvis = `{"role":"system","content":"You are JARVIS."}`
	toolCall9 = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"weather","arguments":"{}"}}]}`
	toolAns9  = `{"role":"tool","tool_call_id":"call_9","content":"{\"temp\":21}"}`
)

func TestTrimPrompt(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		max       int
		want      string // messages array after trimming; "" = unchanged
		trimmedTo int64
	}{
		{
			name: "nothing to trim",
			body: trimBody(sysJarvis, `{"role":"user","content":"Hello"}`),
			max:  20, // size 15 + 5
		},
		{
			name: "off",
			body: trimBody(`{"role":"user","content":"Hello"}`, `{"role":"user","content":"Hello"}`),
			max:  0,
		},
		{
			name: "nothing removable: system and last message too big",
			body: trimBody(sysJarvis, `{"role":"user","content":"A question far too long for the limit"}`),
			max:  10,
		},
		{
			// shared/conformance/trim-tool-pair.txtar: 15+33+0+11+17+13 = 89.
			// The user message goes (56), then the tool call with its answer (45).
			name: "tool pair removed together",
			body: trimBody(sysJarvis, `{"role":"user","content":"First question about the weather?"}`, toolCall9, toolAns9,
				`{"role":"assistant","content":"It is 21 degrees."}`, `{"role":"user","content":"And tomorrow?"}`),
			max:       45,
			want:      `[` + sysJarvis + `,{"role":"assistant","content":"It is 21 degrees."},{"role":"user","content":"And tomorrow?"}]`,
			trimmedTo: 45,
		},
		{
			name: "oldest first, only as many as needed",
			body: trimBody(`{"role":"user","content":"aaaaaaaaaa"}`, `{"role":"assistant","content":"bbbbb"}`,
				`{"role":"user","content":"ccccc"}`, `{"role":"user","content":"d"}`),
			max:       11, // 21 → 11
			want:      `[{"role":"assistant","content":"bbbbb"},{"role":"user","content":"ccccc"},{"role":"user","content":"d"}]`,
			trimmedTo: 11,
		},
		{
			name:      "oldest first even when small",
			body:      trimBody(`{"role":"user","content":"a"}`, `{"role":"assistant","content":"bbbbbbbbbb"}`, `{"role":"user","content":"c"}`),
			max:       10, // 12 → 11 → 1
			want:      `[{"role":"user","content":"c"}]`,
			trimmedTo: 1,
		},
		{
			name: "array content: text parts count, image parts do not",
			body: trimBody(`{"role":"user","content":[{"type":"text","text":"abcdefghij"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAA"}}]}`,
				`{"role":"user","content":[{"type":"text","text":"xy"},{"type":"text","text":"z"},{"type":"input_audio","text":"not text"}]}`),
			max:       12, // 10 + 3
			want:      `[{"role":"user","content":[{"type":"text","text":"xy"},{"type":"text","text":"z"},{"type":"input_audio","text":"not text"}]}]`,
			trimmedTo: 3,
		},
		{
			name: "array content that fits",
			body: trimBody(`{"role":"user","content":[{"type":"text","text":"abcdefghij"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAAAAAAAAAAAAAAAAAAAAAA"}}]}`,
				`{"role":"user","content":"xyz"}`),
			max: 13,
		},
		{
			name: "system and developer messages are kept",
			body: trimBody(`{"role":"developer","content":"DDDD"}`, `{"role":"user","content":"aaaa"}`, `{"role":"system","content":"SS"}`,
				`{"role":"assistant","content":"bbbb"}`, `{"role":"user","content":"cc"}`),
			max:       8, // 16 → 12 → 8
			want:      `[{"role":"developer","content":"DDDD"},{"role":"system","content":"SS"},{"role":"user","content":"cc"}]`,
			trimmedTo: 8,
		},
		{
			name: "code points, not bytes",
			body: trimBody(`{"role":"user","content":"éééé"}`, `{"role":"user","content":"😀b"}`),
			max:  6, // 4 + 2, though 12 bytes
		},
		{
			name:      "code points, trimmed",
			body:      trimBody(`{"role":"user","content":"éééé"}`, `{"role":"user","content":"😀b"}`),
			max:       5,
			want:      `[{"role":"user","content":"😀b"}]`,
			trimmedTo: 2,
		},
		{
			name:      "escapes count as the characters they stand for",
			body:      trimBody(`{"role":"user","content":"\u00e9\n\"x\""}`, `{"role":"user","content":"ab"}`),
			max:       6, // 5 + 2
			want:      `[{"role":"user","content":"ab"}]`,
			trimmedTo: 2,
		},
		{
			name: "still too big when nothing removable is left",
			body: trimBody(sysJarvis, `{"role":"user","content":"old"}`, `{"role":"user","content":"A question far too long for the limit"}`),
			max:  10,
			want: `[` + sysJarvis + `,{"role":"user","content":"A question far too long for the limit"}]`,
			// 15 + 37
			trimmedTo: 52,
		},
		{
			name: "last message a tool answer keeps its assistant",
			body: trimBody(sysJarvis, `{"role":"user","content":"What is the weather?"}`, toolCall9, toolAns9),
			max:  20,
			want: `[` + sysJarvis + `,` + toolCall9 + `,` + toolAns9 + `]`,
			// 15 + 0 + 11
			trimmedTo: 26,
		},
		{
			name: "tool answers found by id, and the ones directly following",
			body: trimBody(
				`{"role":"assistant","content":"","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`,
				`{"role":"tool","tool_call_id":"a","content":"111"}`,
				`{"role":"tool","content":"no id but follows"}`,
				`{"role":"user","content":"u"}`,
				`{"role":"tool","tool_call_id":"b","content":"222"}`,
				`{"role":"tool","tool_call_id":"zzz","content":"orphan"}`,
				`{"role":"user","content":"last"}`),
			max:       15, // 3+17+1+3+6+4 = 34 → 11
			want:      `[{"role":"user","content":"u"},{"role":"tool","tool_call_id":"zzz","content":"orphan"},{"role":"user","content":"last"}]`,
			trimmedTo: 11,
		},
		{
			name:      "orphan tool message is a unit of its own",
			body:      trimBody(`{"role":"tool","tool_call_id":"gone","content":"orphan result"}`, `{"role":"user","content":"q"}`),
			max:       5,
			want:      `[{"role":"user","content":"q"}]`,
			trimmedTo: 1,
		},
		{
			name:      "assistant tool call kept whole when its unit is not reached",
			body:      trimBody(`{"role":"user","content":"0123456789"}`, toolCall9, toolAns9, `{"role":"user","content":"q"}`),
			max:       12, // 22 → 12
			want:      `[` + toolCall9 + `,` + toolAns9 + `,{"role":"user","content":"q"}]`,
			trimmedTo: 12,
		},
		{
			name: "legacy function_call with its function answer",
			body: trimBody(`{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}`,
				`{"role":"function","name":"f","content":"result!"}`, `{"role":"user","content":"q"}`),
			max:       3,
			want:      `[{"role":"user","content":"q"}]`,
			trimmedTo: 1,
		},
		{
			name: "non-string content counts 0",
			body: trimBody(`{"role":"user","content":12345}`, `{"role":"user"}`, `{"role":"user","content":"abc"}`),
			max:  3,
		},
		{name: "messages not an array", body: `{"messages":"hello there"}`, max: 1},
		{name: "no messages", body: `{"model":"x"}`, max: 1},
		{name: "empty messages", body: `{"messages":[]}`, max: 1},
		{name: "not JSON", body: `not json at all`, max: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			orig := append([]byte(nil), body...)
			out, trimmedTo, trimmed := TrimPrompt(body, tc.max)
			if !bytes.Equal(body, orig) {
				t.Fatal("input body modified")
			}
			if tc.want == "" {
				if trimmed || trimmedTo != 0 {
					t.Errorf("trimmed = %v, %d; want nothing", trimmed, trimmedTo)
				}
				if len(out) != len(body) || (len(out) > 0 && &out[0] != &body[0]) {
					t.Errorf("out is not body itself: %s", out)
				}
				return
			}
			if !trimmed || trimmedTo != tc.trimmedTo {
				t.Errorf("trimmed = %v, %d; want true, %d", trimmed, trimmedTo, tc.trimmedTo)
			}
			if got := gjson.GetBytes(out, "messages").Raw; got != tc.want {
				t.Errorf("messages =\n%s\nwant\n%s", got, tc.want)
			}
			// Everything but the messages array is kept byte for byte.
			raw := gjson.Get(tc.body, "messages").Raw
			if want := strings.Replace(tc.body, raw, tc.want, 1); string(out) != want {
				t.Errorf("body =\n%s\nwant\n%s", out, want)
			}
		})
	}
}

// Odd spacing, escapes and fields around messages survive trimming exactly.
func TestTrimPromptKeepsBytes(t *testing.T) {
	before := "{ \"model\" : \"m\",\n  \"temperature\": 0.70, \"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"w\"}}],\n  \"messages\" : "
	kept := `{ "role":"user" , "content":"caf\u00e9 <b>" }`
	after := " ,\n  \"stop\" : [\"\\n\"], \"meta\":{\"x\":null} }"
	body := []byte(before + `[ {"role":"user","content":"drop me please"} ,` + "\n " + kept + ` ]` + after)
	out, trimmedTo, trimmed := TrimPrompt(body, 10)
	if !trimmed || trimmedTo != 8 {
		t.Fatalf("trimmed = %v, %d", trimmed, trimmedTo)
	}
	if want := before + `[` + kept + `]` + after; string(out) != want {
		t.Fatalf("body =\n%s\nwant\n%s", out, want)
	}
}

func BenchmarkTrimPrompt(b *testing.B) {
	var list []string
	list = append(list, sysJarvis)
	for i := 0; i < 50; i++ {
		list = append(list, `{"role":"user","content":"`+strings.Repeat("question ", 20)+`"}`, toolCall9, toolAns9,
			`{"role":"assistant","content":"`+strings.Repeat("answer ", 40)+`"}`)
	}
	body := []byte(trimBody(list...))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := TrimPrompt(body, 2000); !ok {
			b.Fatal("not trimmed")
		}
	}
}
