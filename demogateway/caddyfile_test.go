package demogateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	for _, tc := range []struct {
		in      string
		pause   *time.Duration // nil: unset
		wantErr string
	}{
		{in: `llm_meta_demo`},
		{in: `llm_meta_demo {
		}`},
		{in: `llm_meta_demo {
			pause 10ms
		}`, pause: new(10 * time.Millisecond)},
		{in: `llm_meta_demo {
			pause 0
		}`, pause: new(time.Duration(0))},
		{in: `llm_meta_demo {
			colour blue
		}`, wantErr: "unrecognized subdirective 'colour'"},
		{in: `llm_meta_demo {
			pause
		}`, wantErr: "wrong argument count"},
		{in: `llm_meta_demo {
			pause 1s 2s
		}`, wantErr: "wrong argument count"},
		{in: `llm_meta_demo {
			pause soon
		}`, wantErr: "bad pause"},
		{in: `llm_meta_demo {
			pause -1s
		}`, wantErr: "must not be negative"},
		{in: `llm_meta_demo extra`, wantErr: "wrong argument count"},
	} {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.in))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		switch {
		case tc.pause == nil && h.Pause != nil:
			t.Errorf("%s: pause %v, want unset", tc.in, *h.Pause)
		case tc.pause != nil && (h.Pause == nil || time.Duration(*h.Pause) != *tc.pause):
			t.Errorf("%s: pause %v, want %v", tc.in, h.Pause, *tc.pause)
		}
	}
}

// The directive works in a site block with no global order line, and sorts
// before respond.
func TestCaddyfileAdapt(t *testing.T) {
	input := ":8081 {\n" +
		"\trespond /health \"ok\"\n" +
		"\tllm_meta_demo {\n" +
		"\t\tpause 0\n" +
		"\t}\n" +
		"}\n"
	adapter := caddyfile.Adapter{ServerType: httpcaddyfile.ServerType{}}
	out, warnings, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	s := string(out)
	demo := strings.Index(s, `"handler":"llm_meta_demo"`)
	respond := strings.Index(s, `"handler":"static_response"`)
	if demo < 0 || respond < 0 || demo > respond {
		t.Fatalf("want llm_meta_demo before respond:\n%s", s)
	}
	if !strings.Contains(s, `"pause":0`) {
		t.Errorf("pause 0 lost in JSON:\n%s", s)
	}

}

// In JSON, an explicit 0 turns the pause off and an absent pause is the default.
func TestJSONPause(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`{}`:               defaultPause,
		`{"pause":0}`:      0,
		`{"pause":"5ms"}`:  5 * time.Millisecond,
		`{"pause":"1.5s"}`: 1500 * time.Millisecond,
	} {
		var h Handler
		if err := json.Unmarshal([]byte(in), &h); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		ctx, cancel := newTestContext(t)
		if err := h.Provision(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if h.pause != want {
			t.Errorf("%s: pause %v, want %v", in, h.pause, want)
		}
	}
}
