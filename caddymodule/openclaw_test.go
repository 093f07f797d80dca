package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llm-meta/llm_meta/translate"
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

func TestOpenClawProvision(t *testing.T) {
	t.Setenv("LLM_META_TEST_OPENCLAW_GW", "http://127.0.0.1:18789")
	for _, tc := range []struct {
		cfg, endpoint, agent string
		timeout              time.Duration
	}{
		{`{"gateway":"http://127.0.0.1:18789"}`, "http://127.0.0.1:18789/tools/invoke", "main", 2 * time.Second},
		{`{"gateway":"http://127.0.0.1:18789/","agent":"Ops","timeout":"500ms"}`, "http://127.0.0.1:18789/tools/invoke", "ops", 500 * time.Millisecond},
		{`{"gateway":"https://gw.example/openclaw//"}`, "https://gw.example/openclaw/tools/invoke", "main", 2 * time.Second},
		{`{"gateway":"{env.LLM_META_TEST_OPENCLAW_GW}"}`, "http://127.0.0.1:18789/tools/invoke", "main", 2 * time.Second},
		{`{"gateway":"http://h:1","timeout":0}`, "http://h:1/tools/invoke", "main", 2 * time.Second},
	} {
		h, err := loadHandlerJSON(t, `{"openclaw":`+tc.cfg+`}`)
		must(t, err, "loading %s", tc.cfg)
		o := h.OpenClaw
		if o.endpoint != tc.endpoint || o.agent != tc.agent || o.timeout != tc.timeout {
			t.Errorf("%s: endpoint %q agent %q timeout %v; want %q %q %v", tc.cfg, o.endpoint, o.agent, o.timeout, tc.endpoint, tc.agent, tc.timeout)
		}
	}
	h, err := loadHandlerJSON(t, `{}`)
	must(t, err, "loading {}")
	if h.OpenClaw != nil {
		t.Errorf("openclaw is on without being configured: %+v", h.OpenClaw)
	}
}

// openClawAnswerFile is the recorded sessions_history answer and the id of
// the run it records (translate's testdata).
func openClawAnswerFile(t *testing.T) (answer []byte, runID string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "translate", "testdata", "openclaw")
	answer, err := os.ReadFile(filepath.Join(dir, "tools-invoke-sessions_history.json"))
	must(t, err, "reading the recorded answer")
	reply, err := os.ReadFile(filepath.Join(dir, "chat-json-run-of-sessions_history.json"))
	must(t, err, "reading the recorded reply")
	var r struct{ ID string }
	must(t, json.Unmarshal(reply, &r), "reading the reply's id")
	return answer, r.ID
}

// fakeGateway is an OpenClaw gateway's /tools/invoke: it records what it
// was asked and answers with serve.
type fakeGateway struct {
	*httptest.Server
	hits atomic.Int32
	auth atomic.Value // the Authorization header of the last request
	body atomic.Value // the body of the last request
}

func newFakeGateway(t *testing.T, serve func(w http.ResponseWriter, r *http.Request)) *fakeGateway {
	g := new(fakeGateway)
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		g.auth.Store(r.Header.Get("Authorization"))
		g.body.Store(string(b))
		if r.Method != http.MethodPost || r.URL.Path != "/tools/invoke" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "wrong request "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		serve(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// openClawFor provisions the option against a gateway.
func openClawFor(t *testing.T, gateway, token string, timeout time.Duration) *OpenClaw {
	t.Helper()
	o := &OpenClaw{Gateway: gateway, Token: token, Timeout: caddy.Duration(timeout)}
	o.provision()
	must(t, o.validate(), "validate")
	t.Cleanup(o.cleanup)
	return o
}

const testToken = "tok-3f9a-secret"

// noSecrets fails when an error shows the token or the client's header.
func noSecrets(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "client-secret")) {
		t.Errorf("error %q shows a secret", err)
	}
}

func TestOpenClawLookup(t *testing.T) {
	answer, runID := openClawAnswerFile(t)
	g := newFakeGateway(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(answer)
	})
	key := "agent:main:openai-user:u1"

	t.Run("token", func(t *testing.T) {
		o := openClawFor(t, g.URL, testToken, time.Second)
		names, err := o.lookupTools(t.Context(), nil, "Bearer client-secret", key, runID)
		if err != nil || !reflect.DeepEqual(names, []string{"ls"}) {
			t.Fatalf("got %q, %v; want [ls]", names, err)
		}
		if got := g.auth.Load(); got != "Bearer "+testToken {
			t.Errorf("Authorization %q; want the configured token", got)
		}
		if got := g.body.Load(); got != string(translate.OpenClawHistoryRequest(key)) {
			t.Errorf("body %s", got)
		}
	})
	t.Run("token from the environment through the request's replacer", func(t *testing.T) {
		t.Setenv("LLM_META_TEST_OPENCLAW_TOKEN", testToken)
		o := openClawFor(t, g.URL, "{env.LLM_META_TEST_OPENCLAW_TOKEN}", time.Second)
		names, err := o.lookupTools(t.Context(), caddy.NewReplacer(), "", key, runID)
		if err != nil || len(names) != 1 || g.auth.Load() != "Bearer "+testToken {
			t.Errorf("got %q, %v, Authorization %q", names, err, g.auth.Load())
		}
	})
	t.Run("no token: the client's header as it came", func(t *testing.T) {
		o := openClawFor(t, g.URL, "", time.Second)
		_, err := o.lookupTools(t.Context(), nil, "Bearer client-secret", key, runID)
		if err != nil || g.auth.Load() != "Bearer client-secret" {
			t.Errorf("err %v, Authorization %q", err, g.auth.Load())
		}
		_, err = o.lookupTools(t.Context(), nil, "", key, runID)
		if err != nil || g.auth.Load() != "" {
			t.Errorf("err %v, Authorization %q; want none sent", err, g.auth.Load())
		}
	})
	t.Run("a token that expands to nothing is not sent", func(t *testing.T) {
		o := openClawFor(t, g.URL, "{env.LLM_META_TEST_OPENCLAW_UNSET}", time.Second)
		before := g.hits.Load()
		names, err := o.lookupTools(t.Context(), caddy.NewReplacer(), "Bearer client-secret", key, runID)
		if err == nil || names != nil || g.hits.Load() != before {
			t.Errorf("got %q, %v, %d requests; want an error and no request", names, err, g.hits.Load()-before)
		}
		noSecrets(t, err)
	})
	t.Run("another run", func(t *testing.T) {
		o := openClawFor(t, g.URL, testToken, time.Second)
		names, err := o.lookupTools(t.Context(), nil, "", key, "chatcmpl_other")
		if err != nil || len(names) != 0 {
			t.Errorf("got %q, %v; want nothing", names, err)
		}
	})
}

func TestOpenClawLookupFailures(t *testing.T) {
	answer, runID := openClawAnswerFile(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stall := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	cases := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
		want  error  // errors.Is, when set
		text  string // in the error
	}{
		{"unauthorised", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"Unauthorized `+r.Header.Get("Authorization")+`"}}`, http.StatusUnauthorized)
		}, nil, "status 401"},
		{"server error", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }, nil, "status 502"},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusTemporaryRedirect)
		}, nil, "status 307"},
		{"slow to answer", stall, context.DeadlineExceeded, "timed out"},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.Write(answer[:100])
			w.(http.Flusher).Flush()
			stall(w, r)
		}, context.DeadlineExceeded, "timed out"},
		{"malformed", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>Bad Gateway</html>") }, translate.ErrOpenClawMalformed, "reading the answer"},
		{"truncated", func(w http.ResponseWriter, r *http.Request) { w.Write(answer[:len(answer)/2]) }, translate.ErrOpenClawMalformed, "not a JSON object"},
		{"cut off before its length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			w.Write(answer[:len(answer)/2])
			// The handler returns early: the server closes the connection.
		}, nil, "answer cut off"},
		{"missing session", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"ok":true,"result":{"content":[],"details":{"status":"error","error":"session not found"}}}`)
		}, translate.ErrOpenClawStatusError, "status error"},
		{"declared too large", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(maxOpenClawAnswer+1))
			w.Write(answer)
		}, nil, "larger than 4 MiB"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			// Chunked, no length: the cap is met while reading.
			chunk := make([]byte, 64<<10)
			for i := range chunk {
				chunk[i] = ' '
			}
			for n := 0; n <= maxOpenClawAnswer; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, nil, "larger than 4 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newFakeGateway(t, c.serve)
			// A short timeout only where the case is about it: the others
			// must fail for their own reason however slow the machine.
			timeout := 30 * time.Second
			if errors.Is(c.want, context.DeadlineExceeded) {
				timeout = 200 * time.Millisecond
			}
			o := openClawFor(t, g.URL, testToken, timeout)
			names, err := o.lookupTools(t.Context(), nil, "Bearer client-secret", "k", runID)
			if err == nil || names != nil {
				t.Fatalf("got %q, %v; want an error", names, err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %q is not %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.text) || !strings.HasPrefix(err.Error(), "openclaw sessions_history: ") {
				t.Errorf("error %q does not say %q", err, c.text)
			}
			noSecrets(t, err)
			if strings.Contains(err.Error(), g.URL) {
				t.Errorf("error %q shows the URL", err)
			}
		})
	}
	t.Run("gateway stopped", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err, "listen")
		addr := l.Addr().String()
		l.Close()
		o := openClawFor(t, "http://"+addr, testToken, time.Second)
		_, err = o.lookupTools(t.Context(), nil, "", "k", runID)
		if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), addr) {
			t.Errorf("error %v; want connection refused, without the address", err)
		}
	})
	t.Run("client gone", func(t *testing.T) {
		g := newFakeGateway(t, stall)
		o := openClawFor(t, g.URL, testToken, time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for g.hits.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := o.lookupTools(ctx, nil, "", "k", runID)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v; want the request's cancellation", err)
		}
	})
}

// openClawRequest is a request as ServeHTTP sees it, with the replacer in
// its context.
func openClawRequest(path, body string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return caddyhttp.PrepareRequest(r, caddy.NewReplacer(), nil, &caddyhttp.Server{})
}

func TestOpenClawToolsHandler(t *testing.T) {
	answer, runID := openClawAnswerFile(t)
	t.Setenv("LLM_META_TEST_OPENCLAW_TOKEN", testToken)
	var status atomic.Int32
	status.Store(http.StatusOK)
	g := newFakeGateway(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
		w.Write(answer)
	})
	h, logs := newObservedHandler(t, `{"openclaw":{"gateway":"`+g.URL+`","token":"{env.LLM_META_TEST_OPENCLAW_TOKEN}"}}`)
	r := openClawRequest("/v1/chat/completions", `{"model":"openclaw","user":"u1","messages":[]}`, "Authorization", "Bearer client-secret")
	key := h.OpenClaw.prepareSession(r, []byte(`{"model":"openclaw","user":"u1","messages":[]}`))
	var got []string
	h.openClawTools(r, key, runID, func(n string) { got = append(got, n) })
	if !reflect.DeepEqual(got, []string{"ls"}) || g.auth.Load() != "Bearer "+testToken {
		t.Fatalf("got %q with Authorization %q", got, g.auth.Load())
	}

	status.Store(http.StatusUnauthorized)
	got = nil
	h.openClawTools(r, key, runID, func(n string) { got = append(got, n) })
	if got != nil || !warned(logs, reasonOpenClawHistory) || !warned(logs, "status 401") {
		t.Errorf("a refused look-up added %q; logs %v", got, logs.All())
	}
	for _, e := range logs.All() {
		line, _ := json.Marshal(e.ContextMap())
		if strings.Contains(string(line), testToken) || strings.Contains(string(line), "client-secret") || strings.Contains(e.Message, testToken) {
			t.Errorf("a log line shows a secret: %s %s", e.Message, line)
		}
	}

	// Off, or without an id: no look-up at all.
	before := g.hits.Load()
	h.openClawTools(r, "", runID, func(string) { t.Error("added a name without a session") })
	h.openClawTools(r, key, "", func(string) { t.Error("added a name without a run id") })
	off, _ := newObservedHandler(t, `{}`)
	off.openClawTools(r, key, runID, func(string) { t.Error("added a name with the option off") })
	if g.hits.Load() != before {
		t.Errorf("%d look-ups made with nothing to look up", g.hits.Load()-before)
	}
}

func TestOpenClawPrepareSession(t *testing.T) {
	o := &OpenClaw{Gateway: "http://127.0.0.1:18789", Agent: "ops"}
	o.provision()
	made := regexp.MustCompile(`^agent:([a-z]+):llm-meta:[0-9a-f]{32}$`)
	for _, tc := range []struct {
		name, path, body string
		headers          []string
		want             string // "" when a key must be made; then madeFor is its agent
		madeFor          string
	}{
		{"user", "/v1/chat/completions", `{"model":"openclaw","user":"U1","messages":[]}`, nil, "agent:ops:openai-user:u1", ""},
		{"responses path", "/v1/responses", `{"model":"openclaw","user":"u1","input":"hi"}`, nil, "agent:ops:openresponses-user:u1", ""},
		{"responses body on another path", "/api", `{"user":"u1","input":"hi"}`, nil, "agent:ops:openresponses-user:u1", ""},
		{"session header", "/v1/chat/completions", `{"user":"u1"}`, []string{"X-OpenClaw-Session-Key", "mine"}, "mine", ""},
		{"agent header", "/v1/chat/completions", `{"user":"u1"}`, []string{"X-OpenClaw-Agent-Id", "Research"}, "agent:research:openai-user:u1", ""},
		{"older agent header", "/v1/chat/completions", `{"user":"u1"}`, []string{"X-OpenClaw-Agent", "research"}, "agent:research:openai-user:u1", ""},
		{"blank agent header, then the older one", "/v1/chat/completions", `{"user":"u1"}`, []string{"X-OpenClaw-Agent-Id", " ", "X-OpenClaw-Agent", "research"}, "agent:research:openai-user:u1", ""},
		{"model names the agent", "/v1/chat/completions", `{"model":"openclaw/research","user":"u1"}`, nil, "agent:research:openai-user:u1", ""},
		{"no user: made", "/v1/chat/completions", `{"model":"openclaw","messages":[]}`, nil, "", "ops"},
		{"no user, model agent: made", "/v1/chat/completions", `{"model":"openclaw:research","stream":true}`, nil, "", "research"},
		{"body not JSON: made", "/v1/chat/completions", `not json`, nil, "", "ops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := openClawRequest(tc.path, tc.body, tc.headers...)
			sent := r.Header.Get(translate.OpenClawSessionHeader)
			key := o.prepareSession(r, []byte(tc.body))
			if tc.want != "" {
				if key != tc.want || r.Header.Get(translate.OpenClawSessionHeader) != sent {
					t.Errorf("key %q, header %q; want %q and the header untouched", key, r.Header.Get(translate.OpenClawSessionHeader), tc.want)
				}
				return
			}
			m := made.FindStringSubmatch(key)
			if m == nil || m[1] != tc.madeFor || r.Header.Get(translate.OpenClawSessionHeader) != key {
				t.Errorf("key %q, header %q; want a made key of agent %q sent upstream", key, r.Header.Get(translate.OpenClawSessionHeader), tc.madeFor)
			}
		})
	}
}
