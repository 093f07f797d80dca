package openclaw

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		gateway, agent, endpoint, wantAgent string
		timeout, wantTimeout                time.Duration
	}{
		{"http://127.0.0.1:18789", "", "http://127.0.0.1:18789/tools/invoke", "main", 0, 2 * time.Second},
		{"http://127.0.0.1:18789/", "Ops", "http://127.0.0.1:18789/tools/invoke", "ops", 500 * time.Millisecond, 500 * time.Millisecond},
		{"https://gw.example/openclaw//", "", "https://gw.example/openclaw/tools/invoke", "main", 0, 2 * time.Second},
	} {
		c, err := New(tc.gateway, tc.agent, tc.timeout, nil)
		must(t, err, tc.gateway)
		if c.endpoint != tc.endpoint || c.agent != tc.wantAgent || c.timeout != tc.wantTimeout {
			t.Errorf("%s: endpoint %q agent %q timeout %v; want %q %q %v", tc.gateway, c.endpoint, c.agent, c.timeout, tc.endpoint, tc.wantAgent, tc.wantTimeout)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:18789", "ftp://h", "http://", "http://u:p@h", "http://h?x=1", "http://h#f"} {
		if _, err := New(bad, "", 0, nil); err == nil {
			t.Errorf("New(%q) took a gateway it must refuse", bad)
		} else if strings.Contains(err.Error(), bad) && bad != "" {
			t.Errorf("error %q quotes the URL", err)
		}
	}
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

// clientFor makes a client of a gateway, with token as its configured
// token ("" for none).
func clientFor(t *testing.T, gateway, token string, timeout time.Duration) *Client {
	t.Helper()
	var tf func(*http.Request) string
	if token != "" {
		tf = func(*http.Request) string { return token }
	}
	c, err := New(gateway, "", timeout, tf)
	must(t, err, "New")
	t.Cleanup(c.Close)
	return c
}

// lookupRequest is the client's request a look-up is made for.
func lookupRequest(ctx context.Context, auth string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", nil)
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	return r
}

const testToken = "tok-3f9a-secret"

// noSecrets fails when an error shows the token or the client's header.
func noSecrets(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "client-secret")) {
		t.Errorf("error %q shows a secret", err)
	}
}

func TestLookup(t *testing.T) {
	answer, runID := openClawRecording(t)
	g := newFakeGateway(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(answer)
	})
	key := "agent:main:openai-user:u1"

	t.Run("token", func(t *testing.T) {
		o := clientFor(t, g.URL, testToken, time.Second)
		names, err := o.Tools(lookupRequest(t.Context(), "Bearer client-secret"), key, runID)
		if err != nil || !reflect.DeepEqual(names, []string{"ls"}) {
			t.Fatalf("got %q, %v; want [ls]", names, err)
		}
		if got := g.auth.Load(); got != "Bearer "+testToken {
			t.Errorf("Authorization %q; want the configured token", got)
		}
		if got := g.body.Load(); got != string(HistoryRequest(key)) {
			t.Errorf("body %s", got)
		}
	})
	t.Run("no token: the client's header as it came", func(t *testing.T) {
		o := clientFor(t, g.URL, "", time.Second)
		_, err := o.Tools(lookupRequest(t.Context(), "Bearer client-secret"), key, runID)
		if err != nil || g.auth.Load() != "Bearer client-secret" {
			t.Errorf("err %v, Authorization %q", err, g.auth.Load())
		}
		_, err = o.Tools(lookupRequest(t.Context(), ""), key, runID)
		if err != nil || g.auth.Load() != "" {
			t.Errorf("err %v, Authorization %q; want none sent", err, g.auth.Load())
		}
	})
	t.Run("a token that expands to nothing is not sent", func(t *testing.T) {
		o, err := New(g.URL, "", time.Second, func(*http.Request) string { return "" })
		must(t, err, "New")
		before := g.hits.Load()
		names, err := o.Tools(lookupRequest(t.Context(), "Bearer client-secret"), key, runID)
		if err == nil || names != nil || g.hits.Load() != before {
			t.Errorf("got %q, %v, %d requests; want an error and no request", names, err, g.hits.Load()-before)
		}
		noSecrets(t, err)
	})
	t.Run("another run", func(t *testing.T) {
		o := clientFor(t, g.URL, testToken, time.Second)
		names, err := o.Tools(lookupRequest(t.Context(), ""), key, "chatcmpl_other")
		if err != nil || len(names) != 0 {
			t.Errorf("got %q, %v; want nothing", names, err)
		}
	})
}

func TestLookupFailures(t *testing.T) {
	answer, runID := openClawRecording(t)
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
		{"malformed", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>Bad Gateway</html>") }, errMalformed, "reading the answer"},
		{"truncated", func(w http.ResponseWriter, r *http.Request) { w.Write(answer[:len(answer)/2]) }, errMalformed, "not a JSON object"},
		{"cut off before its length", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			w.Write(answer[:len(answer)/2])
			// The handler returns early: the server closes the connection.
		}, nil, "answer cut off"},
		{"missing session", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"ok":true,"result":{"content":[],"details":{"status":"error","error":"session not found"}}}`)
		}, errStatusError, "status error"},
		{"declared too large", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(maxAnswer+1))
			w.Write(answer)
		}, nil, "larger than 4 MiB"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			// Chunked, no length: the cap is met while reading.
			chunk := make([]byte, 64<<10)
			for i := range chunk {
				chunk[i] = ' '
			}
			for n := 0; n <= maxAnswer; n += len(chunk) {
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
			o := clientFor(t, g.URL, testToken, timeout)
			names, err := o.Tools(lookupRequest(t.Context(), "Bearer client-secret"), "k", runID)
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
		o := clientFor(t, "http://"+addr, testToken, time.Second)
		_, err = o.Tools(lookupRequest(t.Context(), ""), "k", runID)
		if err == nil || !strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), addr) {
			t.Errorf("error %v; want connection refused, without the address", err)
		}
	})
	t.Run("client gone", func(t *testing.T) {
		g := newFakeGateway(t, stall)
		o := clientFor(t, g.URL, testToken, time.Minute)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			for g.hits.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := o.Tools(lookupRequest(ctx, ""), "k", runID)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v; want the request's cancellation", err)
		}
	})
}

func TestPrepareSession(t *testing.T) {
	o, err := New("http://127.0.0.1:18789", "ops", 0, nil)
	must(t, err, "New")
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
			r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			for i := 0; i+1 < len(tc.headers); i += 2 {
				r.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			sent := r.Header.Get(sessionHeader)
			key := o.PrepareSession(r, []byte(tc.body))
			if tc.want != "" {
				if key != tc.want || r.Header.Get(sessionHeader) != sent {
					t.Errorf("key %q, header %q; want %q and the header untouched", key, r.Header.Get(sessionHeader), tc.want)
				}
				return
			}
			m := made.FindStringSubmatch(key)
			if m == nil || m[1] != tc.madeFor || r.Header.Get(sessionHeader) != key {
				t.Errorf("key %q, header %q; want a made key of agent %q sent upstream", key, r.Header.Get(sessionHeader), tc.madeFor)
			}
		})
	}
}
