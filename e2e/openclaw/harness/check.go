package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// runCheck runs the end-to-end checks against Caddy sites in front of a
// real OpenClaw gateway (see run.sh for the sites). Without -tools it checks
// what holds before the module joins OpenClaw's tools into replies: the
// recipe reaches OpenClaw (no 403), every kind of reply comes back whole,
// the failure sites answer on time, the gateway's own transcript names the
// ls tool for the reply's run, and Caddy's log never shows the token. With
// -tools (the default; OPENCLAW_E2E_TOOLS=0 turns it off) each reply's meta.tools_used must also name
// ls, and each failure must be logged as the fallback openclaw_history.
func runCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	c := new(checker)
	fs.StringVar(&c.caddy, "caddy", "", "the Caddy site with the openclaw option")
	fs.StringVar(&c.wrongToken, "caddy-wrong-token", "", "a site whose openclaw token is wrong")
	fs.StringVar(&c.slow, "caddy-slow", "", "a site whose look-up is slower than its timeout")
	fs.DurationVar(&c.slowTimeout, "slow-timeout", time.Second, "the openclaw timeout of the slow site")
	fs.StringVar(&c.down, "caddy-down", "", "a site whose look-up meets a gateway that no longer listens")
	fs.StringVar(&c.gateway, "openclaw", "", "the OpenClaw gateway itself")
	fs.StringVar(&c.token, "token", "", "the gateway token")
	fs.StringVar(&c.caddyLog, "caddy-log", "", "Caddy's log file")
	fs.BoolVar(&c.tools, "tools", os.Getenv("OPENCLAW_E2E_TOOLS") != "0", "require meta.tools_used to name the agent's tool (OPENCLAW_E2E_TOOLS=0: only that replies are whole, for a module without the option)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.caddy == "" || c.gateway == "" || c.token == "" {
		return errors.New("check needs -caddy, -openclaw and -token")
	}
	c.nonce = strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	c.run()
	fmt.Printf("openclaw e2e: %d checks passed, %d failed (tools checks %s)\n", c.passed, len(c.failed), onOff(c.tools))
	if len(c.failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(c.failed, "; "))
	}
	return nil
}

type checker struct {
	caddy, wrongToken, slow, down, gateway, token, caddyLog string
	slowTimeout                                             time.Duration
	tools                                                   bool
	nonce                                                   string
	passed                                                  int
	failed                                                  []string
	slowest                                                 time.Duration // OpenClaw's own reply time, the slowest seen on the main site
	wantLog                                                 []string      // log lines the failures must have left
}

func (c *checker) ok(name string, cond bool, format string, args ...any) bool {
	if cond {
		c.passed++
		fmt.Printf("PASS %s\n", name)
		return true
	}
	c.failed = append(c.failed, name)
	fmt.Printf("FAIL %s: %s\n", name, fmt.Sprintf(format, args...))
	return false
}

const useTool = "USE_TOOL please list the files"

// A request of the checks: where it goes and how its session is known.
type turn struct {
	name, path, body string
	headers          []string
	sessionKey       string // the session OpenClaw files it under; "" when it makes one up
	byRun            bool   // the session's runs are told apart by the reply's id (else: its last run)
}

func (c *checker) turns() []turn {
	u := func(kind string) string { return "e2e-" + kind + "-" + c.nonce }
	return []turn{
		{"json reply", "/v1/chat/completions", `{"model":"openclaw","user":"` + u("json") + `","messages":[{"role":"user","content":"` + useTool + `"}]}`, nil, "agent:main:openai-user:" + u("json"), true},
		{"stream without user", "/v1/chat/completions", `{"model":"openclaw","stream":true,"messages":[{"role":"user","content":"` + useTool + `"}]}`, nil, "", true},
		{"responses reply", "/v1/responses", `{"model":"openclaw","user":"` + u("resp") + `","input":"` + useTool + `"}`, nil, "agent:main:openresponses-user:" + u("resp"), true},
		{"responses stream without user", "/v1/responses", `{"model":"openclaw","stream":true,"input":"` + useTool + `"}`, nil, "", true},
		{"tool_call wrapper", "/v1/chat/completions", `{"model":"openclaw","user":"` + u("wrap") + `","messages":[{"role":"user","content":"USE_WRAPPER please list the files"}]}`, nil, "agent:main:openai-user:" + u("wrap"), true},
		{"edge endpoint stream", "/functions/v1/jarvis", `{"message":"` + useTool + `","session_id":"` + u("edge") + `"}`, []string{"x-stream", "true"}, "agent:main:openai-user:" + u("edge"), false},
		{"run-once endpoint", "/v1/run_once", `{"message":"` + useTool + `","session_id":"` + u("once") + `"}`, nil, "agent:main:openai-user:" + u("once"), false},
		{"run-once flag", "/v1/chat/completions", `{"model":"openclaw","run_once":true,"user":"` + u("flag") + `","messages":[{"role":"user","content":"` + useTool + `"}]}`, nil, "agent:main:openai-user:" + u("flag"), false},
	}
}

func (c *checker) run() {
	// The gateway's first agent turn is slow (its agent warms up); later
	// turns are what the failure sites' timing is measured against.
	if r, err := post(c.gateway+"/v1/chat/completions", `{"model":"openclaw","messages":[{"role":"user","content":"warm up"}]}`, "Authorization", "Bearer "+c.token); err == nil {
		fmt.Printf("     warm-up turn: %v\n", r.elapsed.Round(time.Millisecond))
	}
	c.checkRecipeNeeded()
	for _, t := range c.turns() {
		c.checkTurn(c.caddy, t)
	}
	c.checkClientTools()
	if c.wrongToken != "" {
		c.checkFailure("wrong token", c.wrongToken, 0, "status 401")
	}
	if c.down != "" {
		c.checkFailure("gateway stopped after the reply", c.down, 0, "connection refused")
	}
	if c.slow != "" {
		c.checkFailure("look-up slower than timeout", c.slow, c.slowTimeout, "timed out")
	}
	c.checkLog()
}

// checkRecipeNeeded shows what the recipe is for: the headers Caddy's
// reverse_proxy adds by default, sent from this host, make OpenClaw refuse
// the request.
func (c *checker) checkRecipeNeeded() {
	r, err := post(c.gateway+"/v1/chat/completions", `{"model":"openclaw","messages":[{"role":"user","content":"hi"}]}`,
		"Authorization", "Bearer "+c.token, "X-Forwarded-For", "127.0.0.1", "X-Forwarded-Proto", "http", "X-Forwarded-Host", "127.0.0.1")
	c.ok("OpenClaw refuses X-Forwarded-* from this host", err == nil && r.status == 403 && strings.Contains(r.raw, "proxy_attribution_required"),
		"status %d, error %v, body %s", r.status, err, r.raw)
}

// checkClientTools: a tool the client supplies comes back as tool_calls,
// which the module already names in meta.tools_used. It shows that what
// OpenClaw sends through the recipe reaches the module's meta, and that the
// checks read meta.tools_used where each kind of reply carries it. The
// Responses kinds need the module's Responses support, checked with -tools.
func (c *checker) checkClientTools() {
	chatTools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]`
	respTools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	msgs := `"messages":[{"role":"user","content":"USE_CLIENT_TOOL weather in Paris"}]`
	turns := []turn{
		{name: "client tool, json", path: "/v1/chat/completions", body: `{"model":"openclaw",` + msgs + `,` + chatTools + `}`},
		{name: "client tool, stream", path: "/v1/chat/completions", body: `{"model":"openclaw","stream":true,` + msgs + `,` + chatTools + `}`},
		{name: "client tool, run-once", path: "/v1/chat/completions", body: `{"model":"openclaw","run_once":true,` + msgs + `,` + chatTools + `}`},
	}
	if c.tools {
		turns = append(turns,
			turn{name: "client tool, responses", path: "/v1/responses", body: `{"model":"openclaw","input":"USE_CLIENT_TOOL weather in Paris",` + respTools + `}`},
			turn{name: "client tool, responses stream", path: "/v1/responses", body: `{"model":"openclaw","stream":true,"input":"USE_CLIENT_TOOL weather in Paris",` + respTools + `}`})
	}
	for _, t := range turns {
		r, err := post(c.caddy+t.path, t.body)
		c.ok(t.name+": meta.tools_used names get_weather", err == nil && r.status == 200 && r.hasTool("get_weather"),
			"status %d, error %v, tools_used %q, body %s", r.status, err, r.tools, r.raw)
	}
}

// whole checks a reply of the agent's turn came back complete.
func (c *checker) whole(name string, r reply, err error) bool {
	if !c.ok(name+": answered", err == nil && r.status == 200, "status %d, error %v, body %s", r.status, err, r.raw) {
		return false
	}
	return c.ok(name+": whole", strings.HasPrefix(r.text, mockAnswerPrefix+" after tool") && r.done,
		"text %q, ended %v, body %s", r.text, r.done, r.raw)
}

func (c *checker) checkTurn(site string, t turn) {
	r, err := post(site+t.path, t.body, t.headers...)
	if !c.whole(t.name, r, err) {
		return
	}
	c.slowest = max(c.slowest, r.elapsed)
	fmt.Printf("     %s: %v, id %s, meta.tools_used %q\n", t.name, r.elapsed.Round(time.Millisecond), r.id, r.tools)
	if t.sessionKey != "" {
		// What the module's look-up reads, asked of the gateway directly.
		runID := ""
		if t.byRun {
			runID = r.id
		}
		tools, _, _, err := history(c.gateway, c.token, t.sessionKey, runID)
		c.ok(t.name+": the transcript names ls", err == nil && contains(tools, "ls"), "tools %q, error %v", tools, err)
	}
	if c.tools {
		c.ok(t.name+": meta.tools_used names ls", r.hasTool("ls"), "tools_used %q, body %s", r.tools, r.raw)
	}
}

// checkFailure sends a JSON turn and a stream to a site whose look-up fails:
// both must come back whole, within OpenClaw's own time plus the look-up's
// timeout (and some slack for a loaded machine), without the tool.
func (c *checker) checkFailure(name, site string, timeout time.Duration, logged string) {
	for _, t := range []turn{
		{name + ", json", "/v1/chat/completions", `{"model":"openclaw","user":"e2e-fail-` + c.nonce + `","messages":[{"role":"user","content":"` + useTool + `"}]}`, nil, "", false},
		{name + ", stream", "/v1/chat/completions", `{"model":"openclaw","stream":true,"messages":[{"role":"user","content":"` + useTool + `"}]}`, nil, "", false},
	} {
		r, err := post(site+t.path, t.body)
		if !c.whole(t.name, r, err) {
			continue
		}
		limit := c.slowest + timeout + 3*time.Second
		fmt.Printf("     %s: %v (limit %v)\n", t.name, r.elapsed.Round(time.Millisecond), limit.Round(time.Millisecond))
		c.ok(t.name+": on time", r.elapsed <= limit, "took %v, more than OpenClaw's %v plus the timeout %v and 3s", r.elapsed, c.slowest, timeout)
		if c.tools {
			c.ok(t.name+": no tool from a failed look-up", !r.hasTool("ls"), "tools_used %q", r.tools)
		}
	}
	if c.tools {
		c.wantLog = append(c.wantLog, logged)
	}
}

// checkLog reads Caddy's log: never the token; with -tools, the fallbacks.
func (c *checker) checkLog() {
	if c.caddyLog == "" {
		return
	}
	b, err := os.ReadFile(c.caddyLog)
	if !c.ok("caddy log readable", err == nil, "%v", err) {
		return
	}
	log := string(b)
	c.ok("caddy log never shows the token", !strings.Contains(log, c.token), "the token is in %s", c.caddyLog)
	c.ok("no proxy_attribution_required", !strings.Contains(log, "proxy_attribution_required"), "OpenClaw refused the proxy")
	for _, w := range c.wantLog {
		c.ok("caddy log: openclaw_history fallback, "+w, hasLine(log, "openclaw_history", w), "no log line with openclaw_history and %q", w)
	}
}

func hasLine(log string, all ...string) bool {
	for _, line := range strings.Split(log, "\n") {
		ok := true
		for _, s := range all {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
