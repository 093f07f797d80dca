package caddymodule

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/llm-meta/llm_meta/demogateway"
)

// exampleURLs are the base URLs of a running Caddyfile.example.
type exampleURLs struct {
	chat  string // the :8080 site chat UIs talk to
	edge  string // the :8082 edge-function site
	admin string // the admin endpoint (localhost:2019 in the example)
}

// exampleSites runs the repository's Caddyfile.example as it is, but on free
// loopback ports (the admin endpoint's included) and with the given upstream
// behind the :8082 edge site.
func exampleSites(t *testing.T, edgeUpstream string) exampleURLs {
	t.Helper()
	root := repoRoot(t)
	src, err := os.ReadFile(filepath.Join(root, "Caddyfile.example"))
	must(t, err, "reading Caddyfile.example")
	if !strings.Contains(string(src), "admin localhost:2019") {
		t.Fatal("Caddyfile.example no longer has `admin localhost:2019`: update this test")
	}
	// The playground's file_server root is relative to where Caddy runs.
	wd, _ := os.Getwd()
	must(t, os.Chdir(root), "chdir to the repo root")
	t.Cleanup(func() { _ = os.Chdir(wd) })
	// Ports found free are closed before Caddy binds them, so another
	// process can take one meanwhile: then the load is tried again on
	// other ports, as loadCaddyfile does.
	var ports map[string]string
	var adminAddr string
	for try := 0; ; try++ {
		ports = map[string]string{}
		for _, p := range []string{"8080", "8081", "8082"} {
			_, port, _ := net.SplitHostPort(freeAddr(t))
			ports[p] = port
		}
		adminAddr = freeAddr(t)
		text := strings.Replace(string(src), "admin localhost:2019", "admin "+adminAddr+"\n\tpersist_config off\n\tdefault_bind 127.0.0.1", 1)
		text = strings.Replace(text, "{$JARVIS_GATEWAY_URL:http://127.0.0.1:8081}", edgeUpstream, 1)
		for from, to := range ports {
			text = strings.ReplaceAll(text, ":"+from, ":"+to)
		}
		adapter := caddyconfig.GetAdapter("caddyfile")
		cfg, warnings, err := adapter.Adapt([]byte(text), map[string]any{"filename": "Caddyfile.example"})
		must(t, err, "adapting Caddyfile.example")
		for _, w := range warnings {
			t.Logf("adapt warning: %s", w.Message)
		}
		err = caddy.Load(cfg, true)
		if err == nil {
			break
		}
		if try == 2 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("loading Caddyfile.example: %v", err)
		}
	}
	return exampleURLs{
		chat:  "http://127.0.0.1:" + ports["8080"],
		edge:  "http://127.0.0.1:" + ports["8082"],
		admin: "http://" + adminAddr,
	}
}

// TestExampleEdgeRecipe checks the edge-function recipe of Caddyfile.example
// with Caddy's own directives: bearer check, CORS, the health answer and the
// headers an OpenClaw gateway wants.
func TestExampleEdgeRecipe(t *testing.T) {
	t.Setenv("JARVIS_AUTH_TOKEN", "s3cret")
	t.Setenv("CLAWDBOT_GATEWAY_TOKEN", "gw-token")
	var mu sync.Mutex
	var gotHeader http.Header
	var gotBody []byte
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotHeader, gotBody = r.Header.Clone(), body
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Opened.","tool_calls":[{"id":"c","type":"function","function":{"name":"launcher","arguments":"{}"}}]}}]}`)
	}))
	defer up.Close()
	edge := exampleSites(t, up.URL).edge

	post := func(auth string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", edge+"/functions/v1/jarvis", strings.NewReader(`{"message":"Open my terminal","session_id":"s-1"}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := testClient.Do(req)
		must(t, err, "POST to the edge site")
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}

	t.Run("no token is 401 and the gateway is not called", func(t *testing.T) {
		mu.Lock()
		gotHeader = nil
		mu.Unlock()
		resp, body := post("")
		if resp.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"error":"Unauthorized"}` {
			t.Fatalf("got %d %s, want 401 {\"error\":\"Unauthorized\"}", resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		mu.Lock()
		defer mu.Unlock()
		if gotHeader != nil {
			t.Error("the gateway was called without a valid token")
		}
	})
	t.Run("wrong token is 401", func(t *testing.T) {
		if resp, _ := post("Bearer nope"); resp.StatusCode != 401 {
			t.Fatalf("status %d, want 401", resp.StatusCode)
		}
	})
	t.Run("right token reaches the gateway with OpenClaw headers", func(t *testing.T) {
		resp, body := post("Bearer s3cret")
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		if eq, err := jsonEqualBytes(body, []byte(`{"content":"Opened.","meta":{"tools_used":["launcher"]}}`)); err != nil || !eq {
			t.Errorf("body %s", body)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := gotHeader.Get("X-Openclaw-Agent-Id"); got != "main" {
			t.Errorf("x-openclaw-agent-id = %q, want main", got)
		}
		if got := gotHeader.Get("Authorization"); got != "Bearer gw-token" {
			t.Errorf("upstream Authorization = %q, want the gateway's token, never the UI's", got)
		}
		if err := jsonMatches(gotBody, []byte(`{"model":"openclaw:main","user":"s-1","stream":false,"messages":[{"role":"user","content":"Open my terminal"}]}`)); err != nil {
			t.Errorf("upstream body: %v\n%s", err, gotBody)
		}
	})
	t.Run("CORS preflight", func(t *testing.T) {
		req, _ := http.NewRequest("OPTIONS", edge+"/functions/v1/jarvis", nil)
		req.Header.Set("Origin", "http://ui.test")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := testClient.Do(req)
		must(t, err, "OPTIONS")
		resp.Body.Close()
		if resp.StatusCode != 204 {
			t.Fatalf("status %d, want 204", resp.StatusCode)
		}
		if got := resp.Header.Get("Access-Control-Allow-Headers"); got != "authorization, x-client-info, apikey, content-type, x-stream" {
			t.Errorf("Access-Control-Allow-Headers = %q", got)
		}
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
	})
	t.Run("GET is the function's health answer", func(t *testing.T) {
		resp, err := testClient.Get(edge + "/functions/v1/jarvis")
		must(t, err, "GET")
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != `{"ok":true,"mode":"edge"}` {
			t.Fatalf("got %d %s", resp.StatusCode, body)
		}
	})
}

// TestExampleDemoAndMetrics runs the example against its built-in demo
// gateway and reads llm_meta's series on the admin endpoint's /metrics; the
// site chat UIs reach serves no metrics.
func TestExampleDemoAndMetrics(t *testing.T) {
	sites := exampleSites(t, "http://127.0.0.1:1")
	req, _ := http.NewRequest("POST", sites.chat+"/v1/chat/completions", strings.NewReader(`{"model":"demo-hustle","messages":[{"role":"user","content":"SOL?"}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := testClient.Do(req)
	must(t, err, "POST demo-hustle")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	events := parseClientEvents(body)
	if len(events) < 3 || string(events[len(events)-1].data) != "[DONE]" {
		t.Fatalf("not a converted stream ending in [DONE]:\n%s", body)
	}
	meta := streamMeta(events)
	var m struct {
		Tools []string        `json:"tools_used"`
		SR    json.RawMessage `json:"structured_result"`
	}
	if err := json.Unmarshal(meta, &m); err != nil || len(m.Tools) == 0 || len(m.SR) == 0 {
		t.Fatalf("meta %s (%v)", meta, err)
	}

	metricsText := getText(t, sites.admin+"/metrics")
	for _, want := range []string{
		`caddy_llm_meta_requests_total{format="data_stream",mode="stream"}`,
		`caddy_llm_meta_events_total{format="data_stream"}`,
		`caddy_llm_meta_final_meta_events_total`,
	} {
		if !strings.Contains(metricsText, want) {
			t.Errorf("the admin endpoint's /metrics lacks %s", want)
		}
	}
	if public := getText(t, sites.chat+"/metrics"); strings.Contains(public, "caddy_llm_meta_") || strings.Contains(public, "# TYPE") {
		t.Errorf("the chat site serves metrics on /metrics:\n%.300s", public)
	}
}

func getText(t *testing.T, url string) string {
	t.Helper()
	resp, err := testClient.Get(url)
	must(t, err, "GET %s", url)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err, "reading %s", url)
	return string(b)
}

// TestExamplesAreSafe reads the adapted JSON of both example Caddyfiles: the
// admin endpoint (and so the metrics) listens on loopback only, no site
// serves metrics, and a demo model is the default only in front of the
// demo gateway (127.0.0.1:8081): a real gateway never gets `demo-openai`.
func TestExamplesAreSafe(t *testing.T) {
	// Upstreams chosen by the environment point at a real gateway here, so
	// a demo default that follows them shows.
	t.Setenv("LLM_GATEWAY", "https://gateway.invalid")
	t.Setenv("JARVIS_GATEWAY_URL", "https://openclaw.invalid")
	for _, name := range []string{"Caddyfile.example", filepath.Join("examples", "gateway.Caddyfile")} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(repoRoot(t), name))
			must(t, err, "reading %s", name)
			cfgJSON, _, err := caddyconfig.GetAdapter("caddyfile").Adapt(src, map[string]any{"filename": name})
			must(t, err, "adapting %s", name)
			var cfg struct {
				Admin struct {
					Listen string `json:"listen"`
				} `json:"admin"`
				Apps struct {
					HTTP struct {
						Servers map[string]any `json:"servers"`
					} `json:"http"`
				} `json:"apps"`
			}
			must(t, json.Unmarshal(cfgJSON, &cfg), "decoding the adapted config")
			if host, _, _ := net.SplitHostPort(cfg.Admin.Listen); host != "localhost" && host != "127.0.0.1" && host != "::1" {
				t.Errorf("admin listens on %q, not loopback only", cfg.Admin.Listen)
			}
			if len(cfg.Apps.HTTP.Servers) == 0 {
				t.Fatal("no servers")
			}
			for srv, v := range cfg.Apps.HTTP.Servers {
				handlers := collectHandlers(v, nil)
				var dials []string
				var demoDefaults []string
				for _, h := range handlers {
					switch h["handler"] {
					case "metrics":
						t.Errorf("server %s serves metrics", srv)
					case "reverse_proxy":
						ups, _ := h["upstreams"].([]any)
						for _, u := range ups {
							d, _ := u.(map[string]any)["dial"].(string)
							dials = append(dials, d)
						}
					case "llm_meta":
						if m, _ := h["default_model"].(string); strings.HasPrefix(m, "demo-") {
							demoDefaults = append(demoDefaults, m)
						}
					}
				}
				if len(demoDefaults) == 0 {
					continue
				}
				if len(dials) == 0 {
					t.Errorf("server %s: default_model %v with no reverse_proxy upstream", srv, demoDefaults)
				}
				for _, d := range dials {
					if d != "127.0.0.1:8081" {
						t.Errorf("server %s: default_model %v sent to %s, not the demo gateway", srv, demoDefaults, d)
					}
				}
			}
		})
	}
}

// collectHandlers gathers every handler object (a JSON object with a
// "handler" key) found anywhere under v: routes, subroutes, handle blocks.
func collectHandlers(v any, out []map[string]any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["handler"].(string); ok {
			out = append(out, x)
		}
		for _, c := range x {
			out = collectHandlers(c, out)
		}
	case []any:
		for _, c := range x {
			out = collectHandlers(c, out)
		}
	}
	return out
}
