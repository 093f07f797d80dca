package caddymodule

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func strPtr(s string) *string { return &s }
func boolPtr(b bool) *bool    { return &b }

// TestUnmarshalCaddyfile checks what each subdirective sets, value by value.
func TestUnmarshalCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  Handler
	}{
		{"no block", `llm_meta`, Handler{}},
		{"empty block", "llm_meta {\n}", Handler{}},
		{
			name: "every subdirective",
			input: `llm_meta {
				chat_path /api/chat
				run_once_path /run
				edge_path /edge
				default_model "openclaw:main"
				max_prompt_chars 12000
				max_request_bytes 16MiB
				max_buffer_bytes 2MiB
				max_event_bytes 64KiB
				max_meta_bytes 256KiB
				final_meta off
				meta_event bare
				hustle_summary false
				convert_streams off
			}`,
			want: Handler{
				ChatPath:        "/api/chat",
				RunOncePath:     strPtr("/run"),
				EdgePath:        strPtr("/edge"),
				DefaultModel:    "openclaw:main",
				MaxPromptChars:  12000,
				MaxRequestBytes: 16 << 20,
				MaxBufferBytes:  2 << 20,
				MaxEventBytes:   64 << 10,
				MaxMetaBytes:    256 << 10,
				FinalMeta:       boolPtr(false),
				MetaEvent:       "bare",
				HustleSummary:   boolPtr(false),
				ConvertStreams:  boolPtr(false),
			},
		},
		{
			name: "paths off, switches on",
			input: `llm_meta {
				run_once_path off
				edge_path off
				final_meta on
				hustle_summary true
				convert_streams on
				meta_event chunk
				max_request_bytes 1048576
			}`,
			want: Handler{
				RunOncePath:     strPtr(""),
				EdgePath:        strPtr(""),
				FinalMeta:       boolPtr(true),
				HustleSummary:   boolPtr(true),
				ConvertStreams:  boolPtr(true),
				MetaEvent:       "chunk",
				MaxRequestBytes: 1 << 20,
			},
		},
		{
			name: "the switches of SPEC 9 and 11",
			input: `llm_meta {
				stream_usage off
				timing on
				mark_interrupted on
				tool_arguments on
			}`,
			want: Handler{StreamUsage: boolPtr(false), Timing: true, MarkInterrupted: true, ToolArguments: true},
		},
		{
			name: "structured output",
			input: `llm_meta {
				structured_output {
					models gpt-4o* claude-*
					models o3
					instruction "Name the entities, then reply."
				}
			}`,
			want: Handler{StructuredOutput: &StructuredOutput{
				Models:      []string{"gpt-4o*", "claude-*", "o3"},
				Instruction: "Name the entities, then reply.",
			}},
		},
		{
			name:  "structured output without a block",
			input: "llm_meta {\n structured_output\n max_prompt_chars 0\n}",
			want:  Handler{StructuredOutput: &StructuredOutput{}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got Handler
			if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)); err != nil {
				t.Fatalf("UnmarshalCaddyfile: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(tc.want)
				t.Errorf("got  %s\nwant %s", gj, wj)
			}
		})
	}
}

// TestUnmarshalCaddyfileErrors: bad input is refused with a message naming
// what is wrong and where.
func TestUnmarshalCaddyfileErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		want  []string // substrings of the error
	}{
		{"unknown subdirective", "llm_meta {\n inject_meta on\n}", []string{"unrecognized llm_meta subdirective 'inject_meta'", "Testfile:2"}},
		{"argument on the directive", "llm_meta extra {\n}", []string{"wrong argument count", "extra"}},
		{"missing path", "llm_meta {\n chat_path\n}", []string{"wrong argument count", "chat_path"}},
		{"extra path", "llm_meta {\n chat_path /a /b\n}", []string{"wrong argument count", "Testfile:2"}},
		{"missing run_once_path", "llm_meta {\n run_once_path\n}", []string{"wrong argument count", "run_once_path"}},
		{"extra edge_path", "llm_meta {\n edge_path off now\n}", []string{"wrong argument count", "Testfile:2"}},
		{"missing default_model", "llm_meta {\n default_model\n}", []string{"wrong argument count", "default_model"}},
		{"bad size", "llm_meta {\n max_buffer_bytes lots\n}", []string{`max_buffer_bytes: "lots" is not a size such as 16MiB`, "Testfile:2"}},
		{"zero size", "llm_meta {\n max_event_bytes 0\n}", []string{`max_event_bytes: "0" is not a size`}},
		{"negative size", "llm_meta {\n max_request_bytes -1MiB\n}", []string{`max_request_bytes: "-1MiB" is not a size`}},
		{"absurd size", "llm_meta {\n max_request_bytes 2TiB\n}", []string{`max_request_bytes: "2TiB" is not a size`}},
		{"missing size", "llm_meta {\n max_request_bytes\n}", []string{"wrong argument count", "max_request_bytes"}},
		{"bad switch", "llm_meta {\n final_meta maybe\n}", []string{`final_meta: "maybe" must be on or off`}},
		{"bad hustle switch", "llm_meta {\n hustle_summary yes\n}", []string{`hustle_summary: "yes" must be on or off`}},
		{"bad convert switch", "llm_meta {\n convert_streams 1\n}", []string{`convert_streams: "1" must be on or off`}},
		{"missing switch", "llm_meta {\n final_meta\n}", []string{"wrong argument count", "final_meta"}},
		{"bad meta_event", "llm_meta {\n meta_event x\n}", []string{`meta_event: "x" must be chunk or bare`}},
		{"negative max_prompt_chars", "llm_meta {\n max_prompt_chars -1\n}", []string{`max_prompt_chars: "-1" is not a whole number`, "0 is off"}},
		{"non-numeric max_prompt_chars", "llm_meta {\n max_prompt_chars 12k\n}", []string{`max_prompt_chars: "12k" is not a whole number`}},
		{"unknown structured_output subdirective", "llm_meta {\n structured_output {\n  schema foo\n }\n}", []string{"unrecognized structured_output subdirective 'schema'", "Testfile:3"}},
		{"structured_output argument", "llm_meta {\n structured_output gpt-4o {\n }\n}", []string{"wrong argument count"}},
		{"models without globs", "llm_meta {\n structured_output {\n  models\n }\n}", []string{"wrong argument count", "models"}},
		{"instruction with two args", "llm_meta {\n structured_output {\n  instruction a b\n }\n}", []string{"wrong argument count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Handler
			errorSays(t, h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)), tc.want)
		})
	}
}

// errorSays fails the test unless err is an error whose text contains each
// of want.
func errorSays(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one containing %q", want)
	}
	t.Logf("error: %v", err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

// loadHandlerJSON provisions and validates the module from its JSON config
// through Caddy's own module loader, as a config load does.
func loadHandlerJSON(t *testing.T, cfg string) (*Handler, error) {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	t.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.llm_meta", json.RawMessage(cfg))
	if err != nil {
		return nil, err
	}
	return mod.(*Handler), nil
}

// TestValidateJSON: a JSON config the module cannot use fails to load, with
// a message naming the key and the value.
func TestValidateJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  string
		want []string
	}{
		{"bad glob", `{"structured_output":{"models":["gpt-*","["]}}`, []string{"structured_output", `"["`, "not a valid glob"}},
		{"chat_path without /", `{"chat_path":"v1/chat/completions"}`, []string{"chat_path", `"v1/chat/completions"`, "must start with /"}},
		{"run_once_path without /", `{"run_once_path":"run"}`, []string{"run_once_path", `"run"`, "must start with /"}},
		{"edge_path without /", `{"edge_path":"functions/v1/jarvis"}`, []string{"edge_path", "must start with /"}},
		{"same path twice", `{"run_once_path":"/x","edge_path":"/x"}`, []string{"run_once_path and edge_path", `"/x"`}},
		{"meta_event x", `{"meta_event":"x"}`, []string{"meta_event", `"x"`, `"chunk"`, `"bare"`}},
		{"negative max_prompt_chars", `{"max_prompt_chars":-5}`, []string{"max_prompt_chars", "-5"}},
		{"negative max_event_bytes", `{"max_event_bytes":-1}`, []string{"max_event_bytes", "-1"}},
		{"negative max_meta_bytes", `{"max_meta_bytes":-1}`, []string{"max_meta_bytes", "-1"}},
		{"negative max_buffer_bytes", `{"max_buffer_bytes":-1}`, []string{"max_buffer_bytes"}},
		{"negative max_request_bytes", `{"max_request_bytes":-1}`, []string{"max_request_bytes"}},
		{"price glob", `{"prices":[{"model":"gpt-[","input":1,"output":1}]}`, []string{"prices[0]", `"gpt-["`, "not a valid glob"}},
		{"price without model", `{"prices":[{"input":1,"output":1}]}`, []string{"prices[0]", "not a valid glob"}},
		{"negative price", `{"prices":[{"model":"a","input":1,"output":1},{"model":"b","input":1,"output":1,"cached_input":-1}]}`, []string{"prices[1]", "(b)", "negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadHandlerJSON(t, tc.cfg)
			errorSays(t, err, tc.want)
		})
	}
}

// TestProvisionDefaults: an empty config gets SPEC 1's defaults, and "" turns
// an endpoint off (the Caddyfile's "off").
func TestProvisionDefaults(t *testing.T) {
	h, err := loadHandlerJSON(t, `{}`)
	must(t, err, "loading {}")
	if h.ChatPath != "/v1/chat/completions" || h.core.RunOncePath != "/v1/run_once" || h.core.EdgePath != "/functions/v1/jarvis" {
		t.Errorf("paths = %q %q %q", h.ChatPath, h.core.RunOncePath, h.core.EdgePath)
	}
	if h.MaxRequestBytes != 16<<20 || h.MaxBufferBytes != 16<<20 || h.MaxEventBytes != 1<<20 {
		t.Errorf("sizes = %d %d %d", h.MaxRequestBytes, h.MaxBufferBytes, h.MaxEventBytes)
	}
	if !h.core.FinalMeta || !h.core.HustleSummary || !h.core.ConvertStreams || h.core.BareMeta || h.MetaEvent != "chunk" {
		t.Errorf("switches: final_meta %v hustle %v convert %v bare %v meta_event %q", h.core.FinalMeta, h.core.HustleSummary, h.core.ConvertStreams, h.core.BareMeta, h.MetaEvent)
	}
	if !reflect.DeepEqual(h.core.Request.StructuredModels, []string{"*"}) || h.core.Request.MaxPromptChars != 0 {
		t.Errorf("request options = %+v", h.core.Request)
	}

	h, err = loadHandlerJSON(t, `{"run_once_path":"","edge_path":"","final_meta":false,"meta_event":"bare","structured_output":{"models":["gpt-4o*"]}}`)
	must(t, err, "loading a config with the endpoints off")
	if h.core.RunOncePath != "" || h.core.EdgePath != "" {
		t.Errorf("endpoints not off: %q %q", h.core.RunOncePath, h.core.EdgePath)
	}
	if h.core.FinalMeta || !h.core.BareMeta || !reflect.DeepEqual(h.core.Request.StructuredModels, []string{"gpt-4o*"}) {
		t.Errorf("final_meta %v bare %v models %v", h.core.FinalMeta, h.core.BareMeta, h.core.Request.StructuredModels)
	}
}
