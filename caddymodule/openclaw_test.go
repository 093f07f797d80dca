package caddymodule

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestUnmarshalOpenClaw(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        OpenClaw
	}{
		{"block", `llm_meta {
			openclaw {
				gateway http://127.0.0.1:18789
				token {env.OPENCLAW_GATEWAY_TOKEN}
				agent ops
				timeout 1500ms
			}
		}`, OpenClaw{Gateway: "http://127.0.0.1:18789", Token: "{env.OPENCLAW_GATEWAY_TOKEN}", Agent: "ops", Timeout: caddy.Duration(1500 * time.Millisecond)}},
		{"inline gateway", "llm_meta {\n openclaw http://127.0.0.1:18789\n}", OpenClaw{Gateway: "http://127.0.0.1:18789"}},
		{"inline gateway and a block", "llm_meta {\n openclaw http://a:1 {\n  token t\n }\n}", OpenClaw{Gateway: "http://a:1", Token: "t"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Handler
			must(t, h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)), "UnmarshalCaddyfile")
			if h.OpenClaw == nil || !reflect.DeepEqual(*h.OpenClaw, tc.want) {
				t.Errorf("got %+v, want %+v", h.OpenClaw, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"no gateway", "llm_meta {\n openclaw {\n  token t\n }\n}", []string{"openclaw: gateway is required", "Testfile:4"}},
		{"negative timeout", "llm_meta {\n openclaw http://a:1 {\n  timeout -1s\n }\n}", []string{`openclaw timeout: "-1s" must not be negative`, "Testfile:3"}},
		{"bad timeout", "llm_meta {\n openclaw http://a:1 {\n  timeout soon\n }\n}", []string{`openclaw timeout: "soon" is not a duration`}},
		{"unknown subdirective", "llm_meta {\n openclaw http://a:1 {\n  session x\n }\n}", []string{"unrecognized openclaw subdirective 'session'"}},
		{"missing value", "llm_meta {\n openclaw http://a:1 {\n  token\n }\n}", []string{"wrong argument count"}},
		{"two values", "llm_meta {\n openclaw http://a:1 {\n  agent a b\n }\n}", []string{"wrong argument count"}},
		{"two inline gateways", "llm_meta {\n openclaw http://a:1 http://b:2\n}", []string{"wrong argument count"}},
		{"given twice", "llm_meta {\n openclaw http://a:1\n openclaw http://b:2\n}", []string{"openclaw: given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Handler
			errorSays(t, h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)), tc.want)
		})
	}
}

func TestOpenClawValidateJSON(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		want      []string
	}{
		{"no gateway", `{"openclaw":{"token":"t"}}`, []string{"openclaw: gateway is required"}},
		{"blank gateway", `{"openclaw":{"gateway":" "}}`, []string{"openclaw: gateway is required"}},
		{"no scheme", `{"openclaw":{"gateway":"127.0.0.1:18789"}}`, []string{`gateway "127.0.0.1:18789"`}},
		{"host only", `{"openclaw":{"gateway":"localhost"}}`, []string{`gateway "localhost"`, "scheme must be http or https"}},
		{"other scheme", `{"openclaw":{"gateway":"ws://127.0.0.1:18789"}}`, []string{"scheme must be http or https"}},
		{"no host", `{"openclaw":{"gateway":"http://"}}`, []string{"no host"}},
		{"not a URL", `{"openclaw":{"gateway":"http://[::1"}}`, []string{`gateway "http://[::1": not a URL`}},
		{"query", `{"openclaw":{"gateway":"http://h:1/?a=b"}}`, []string{"query or fragment"}},
		{"credentials, redacted", `{"openclaw":{"gateway":"http://u:secret-pw@h:1"}}`, []string{"credentials in the URL", "xxxxx"}},
		{"negative timeout", `{"openclaw":{"gateway":"http://h:1","timeout":"-2s"}}`, []string{"openclaw: timeout must not be negative", "-2s"}},
		{"negative timeout in nanoseconds", `{"openclaw":{"gateway":"http://h:1","timeout":-1}}`, []string{"timeout must not be negative"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadHandlerJSON(t, tc.cfg)
			errorSays(t, err, tc.want)
			if strings.Contains(err.Error(), "secret-pw") {
				t.Errorf("error %q shows the URL's password", err)
			}
		})
	}
}

// TestOpenClawProvision: the gateway's placeholders known at start-up are
// expanded once; the client is made only when the option is configured.
func TestOpenClawProvision(t *testing.T) {
	t.Setenv("LLM_META_TEST_OPENCLAW_GW", "http://127.0.0.1:18789")
	h, err := loadHandlerJSON(t, `{"openclaw":{"gateway":"{env.LLM_META_TEST_OPENCLAW_GW}","timeout":"500ms"}}`)
	must(t, err, "loading an openclaw config")
	if o := h.OpenClaw; o.gateway != "http://127.0.0.1:18789" || o.client == nil || h.core.OpenClaw != o.client {
		t.Errorf("gateway %q, client %v (handler's %v)", o.gateway, o.client, h.core.OpenClaw)
	}
	h, err = loadHandlerJSON(t, `{}`)
	must(t, err, "loading {}")
	if h.OpenClaw != nil || h.core.OpenClaw != nil {
		t.Errorf("openclaw is on without being configured: %+v", h.OpenClaw)
	}
}

// TestOpenClawTokenFromReplacer: the token's placeholders are expanded for
// each request with the request's replacer ({env.*} here), and expand to
// "" when unknown (which the client then refuses to send).
func TestOpenClawTokenFromReplacer(t *testing.T) {
	t.Setenv("LLM_META_TEST_OPENCLAW_TOKEN", "tok-3f9a-secret")
	o := &OpenClaw{Gateway: "http://127.0.0.1:18789", Token: "{env.LLM_META_TEST_OPENCLAW_TOKEN}"}
	r := caddyhttp.PrepareRequest(httptest.NewRequest(http.MethodPost, "/", nil), caddy.NewReplacer(), nil, &caddyhttp.Server{})
	if got := o.token(r); got != "tok-3f9a-secret" {
		t.Errorf("token %q; want the environment's", got)
	}
	o.Token = "{env.LLM_META_TEST_OPENCLAW_UNSET}"
	if got := o.token(r); got != "" {
		t.Errorf("token %q; want empty", got)
	}
}
