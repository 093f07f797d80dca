package httpmeta

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llm-meta/llm_meta/openclaw"
)

// TestOpenClawToolsAtTheEnd: the look-up made when a reply ends adds the
// run's tools; one that fails adds nothing and is logged as the fallback
// openclaw_history, with no secret in the log; with nothing to look up, or
// the option off, no look-up is made.
func TestOpenClawToolsAtTheEnd(t *testing.T) {
	const dir = "../openclaw/testdata/"
	answer, err := os.ReadFile(dir + "tools-invoke-sessions_history.json")
	must(t, err, "reading the recorded answer")
	reply, err := os.ReadFile(dir + "chat-json-run-of-sessions_history.json")
	must(t, err, "reading the recorded reply")
	var rec struct{ ID string }
	must(t, json.Unmarshal(reply, &rec), "reading the reply's id")
	runID := rec.ID

	const token = "tok-3f9a-secret"
	var status, hits atomic.Int32
	status.Store(http.StatusOK)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(int(status.Load()))
		w.Write(answer)
	}))
	t.Cleanup(gw.Close)
	client, err := openclaw.New(gw.URL, "", time.Minute, func(*http.Request) string { return token })
	must(t, err, "openclaw.New")
	t.Cleanup(client.Close)
	core, logs := observer.New(zapcore.DebugLevel)
	c := DefaultConfig()
	c.OpenClaw, c.Logger = client, zap.New(core)
	h := New(c)

	body := `{"model":"openclaw","user":"u1","messages":[]}`
	r := httptest.NewRequest(http.MethodPost, DefaultChatPath, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer client-secret")
	key := client.PrepareSession(r, []byte(body))
	var got []string
	h.openClawTools(r, key, runID, func(n string) { got = append(got, n) })
	if !reflect.DeepEqual(got, []string{"ls"}) {
		t.Fatalf("got %q; want [ls]", got)
	}

	status.Store(http.StatusUnauthorized)
	got = nil
	h.openClawTools(r, key, runID, func(n string) { got = append(got, n) })
	warned := logs.FilterMessage("llm_meta fallback").FilterField(zap.String("reason", reasonOpenClawHistory)).All()
	if got != nil || len(warned) != 1 || !strings.Contains(warned[0].ContextMap()["error"].(string), "status 401") {
		t.Errorf("a refused look-up added %q; logs %v", got, logs.All())
	}
	for _, e := range logs.All() {
		line, _ := json.Marshal(e.ContextMap())
		if strings.Contains(string(line)+e.Message, token) || strings.Contains(string(line), "client-secret") {
			t.Errorf("a log line shows a secret: %s %s", e.Message, line)
		}
	}

	before := hits.Load()
	h.openClawTools(r, "", runID, func(string) { t.Error("added a name without a session") })
	h.openClawTools(r, key, "", func(string) { t.Error("added a name without a run id") })
	New(DefaultConfig()).openClawTools(r, key, runID, func(string) { t.Error("added a name with the option off") })
	if hits.Load() != before {
		t.Errorf("%d look-ups made with nothing to look up", hits.Load()-before)
	}
}
