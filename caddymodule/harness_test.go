package caddymodule

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// The in-process Caddy shared by this package's tests. One config at a time
// is loaded (caddy.Load replaces the running one), so tests that use it must
// not run in parallel. Each load listens on a new port: a client never
// reaches the server of the config being replaced while it shuts down.

func TestMain(m *testing.M) {
	// Keep Caddy's autosave and storage out of the user's home.
	dir, err := os.MkdirTemp("", "llm_meta_test")
	if err == nil {
		os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
		os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	}
	code := m.Run()
	_ = caddy.Stop()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// loadCaddyfile adapts and loads the Caddyfile that site writes for a
// loopback address, and returns that address. A port found free can be
// taken by another process before Caddy binds it (see loadCaddy): the load
// is then tried again on another port, three times in all; any other error
// fails the test at once.
func loadCaddyfile(t testing.TB, site func(addr string) string) string {
	t.Helper()
	var err error
	for try := 0; try < 3; try++ {
		addr := freeAddr(t)
		cfg, _, aerr := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(site(addr)), nil)
		must(t, aerr, "adapting")
		if err = caddy.Load(cfg, true); err == nil {
			return addr
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	t.Fatalf("loading: %v", err)
	return ""
}

// loadCaddy runs Caddy in-process with one route: the given handlers in
// order. It returns Caddy's base URL. Caddy picks its own port (":0") and
// the URL is read from its listener: a port found free and closed before
// Caddy binds it can be taken meanwhile by any process of the machine
// (the client suites of CI start servers of their own), which failed the
// load with "address already in use".
func loadCaddy(t testing.TB, handlers ...map[string]any) string {
	t.Helper()
	cfg := map[string]any{
		"admin": map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{
			"level": logLevel(),
		}}},
		"apps": map[string]any{"http": map[string]any{
			"grace_period": int64(time.Millisecond),
			"servers": map[string]any{"test": map[string]any{
				"listen":          []string{"127.0.0.1:0"},
				"automatic_https": map[string]any{"disable": true},
				"routes":          []any{map[string]any{"handle": handlers}},
			}},
		}},
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatalf("marshalling Caddy config: %v", err)
	}
	if err := caddy.Load(raw, true); err != nil {
		t.Fatalf("loading Caddy config: %v", err)
	}
	app, err := caddy.ActiveContext().App("http")
	if err != nil {
		t.Fatalf("the loaded Caddy's http app: %v", err)
	}
	listeners := app.(*caddyhttp.App).Servers["test"].Listeners()
	if len(listeners) != 1 {
		t.Fatalf("the loaded Caddy listens on %d addresses, want 1", len(listeners))
	}
	return "http://" + listeners[0].Addr().String()
}

func logLevel() string {
	if v := os.Getenv("LLM_META_TEST_LOG"); v != "" {
		return v
	}
	return "ERROR"
}

// llmMeta is the handler config with "handler" set, from a config.json.
func llmMeta(t testing.TB, configJSON []byte) map[string]any {
	t.Helper()
	h := map[string]any{}
	if len(configJSON) > 0 {
		if err := json.Unmarshal(configJSON, &h); err != nil {
			t.Fatalf("config.json: %v", err)
		}
	}
	h["handler"] = "llm_meta"
	return h
}

// proxyTo is a reverse_proxy handler config for a test upstream.
func proxyTo(addr string) map[string]any {
	return map[string]any{
		"handler":   "reverse_proxy",
		"upstreams": []any{map[string]any{"dial": addr}},
	}
}

// testClient talks to Caddy without Go's transparent gzip, so tests see
// exactly what the module wrote.
var testClient = &http.Client{
	Transport: &http.Transport{DisableCompression: true, DisableKeepAlives: true},
	Timeout:   60 * time.Second,
}

func must(t interface {
	Helper()
	Fatalf(string, ...any)
}, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// TestLoadCaddyfileRetriesATakenPort: a port taken between freeAddr and
// Caddy's bind costs one more try, not the test.
func TestLoadCaddyfileRetriesATakenPort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err, "taking a port")
	defer taken.Close()
	tries := 0
	addr := loadCaddyfile(t, func(addr string) string {
		tries++
		if tries == 1 {
			addr = taken.Addr().String()
		}
		return fmt.Sprintf("{\n\tadmin off\n\tpersist_config off\n}\nhttp://%s {\n\trespond ok\n}\n", addr)
	})
	if tries != 2 || addr == taken.Addr().String() {
		t.Fatalf("tries %d, address %s (taken %s): want a second try on another port", tries, addr, taken.Addr())
	}
}
