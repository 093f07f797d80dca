// Package stack runs the client suites' test stack for Go tests: the
// scripted upstream and a Caddy with llm_meta in front of it, started by
// ../lib/stack-cli.js (Node), which also hands over what a client should
// read from each scenario, so that the Go suites and the JavaScript ones
// share one source of expectations.
//
// The Caddy binary is $LLM_META_CADDY (as for the JavaScript suites); the
// Node binary is $LLM_META_NODE, else `node` on PATH. clients/run.sh sets
// both and installs the npm packages the stack needs.
package stack

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// Expectation is what a client should read from one scenario through
// llm_meta.
type Expectation struct {
	Model        string   `json:"model"`
	Text         string   `json:"text"`
	ToolsUsed    []string `json:"toolsUsed"`
	FinishReason string   `json:"finishReason"`
	MessageID    string   `json:"messageId"`
	Error        string   `json:"error"`
	Usage        Usage    `json:"usage"`   // meta.usage; nil: none
	CostUSD      *float64 `json:"costUsd"` // meta.cost_usd; nil: none
}

// Usage is a meta.usage object (SPEC 9.1), count by key.
type Usage map[string]int64

// CheckUsage reports a meta.usage or meta.cost_usd other than the
// scenario's: each must be absent when the scenario has none.
func (e Expectation) CheckUsage(t testing.TB, usage Usage, cost *float64) {
	t.Helper()
	if !maps.Equal(usage, e.Usage) {
		t.Errorf("meta.usage %v, want %v", usage, e.Usage)
	}
	switch {
	case (cost == nil) != (e.CostUSD == nil):
		t.Errorf("meta.cost_usd present: %v, want present: %v", cost != nil, e.CostUSD != nil)
	case cost != nil && *cost != *e.CostUSD:
		t.Errorf("meta.cost_usd %v, want %v", *cost, *e.CostUSD)
	}
}

// Stack is a running upstream with Caddy in front of it.
type Stack struct {
	Base     string                 `json:"base"`     // Caddy, e.g. http://127.0.0.1:PORT
	Upstream string                 `json:"upstream"` // the scripted upstream
	Expect   map[string]Expectation `json:"expect"`   // by scenario (the request's model)

	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// Start runs lib/stack-cli.js and waits for its first line.
func Start() (*Stack, error) {
	_, file, _, _ := runtime.Caller(0)
	cli := filepath.Join(filepath.Dir(file), "..", "..", "lib", "stack-cli.js")
	node := os.Getenv("LLM_META_NODE")
	if node == "" {
		node = "node"
	}
	cmd := exec.Command(node, cli)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stack: stdin pipe: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stack: stdout pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("stack: starting %s %s: %w", node, cli, err)
	}
	first := make(chan []byte, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadBytes('\n')
		first <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	s := &Stack{cmd: cmd, stdin: stdin}
	select {
	case line := <-first:
		if err := json.Unmarshal(line, s); err != nil || s.Base == "" {
			s.Stop()
			return nil, fmt.Errorf("stack: %s did not start (first line %q): %v", cli, line, err)
		}
	case <-time.After(10 * time.Minute): // it may build Caddy first
		s.Stop()
		return nil, fmt.Errorf("stack: %s did not start within 10 minutes", cli)
	}
	return s, nil
}

// Stop closes the stack's stdin, which ends it, and waits for it.
func (s *Stack) Stop() {
	_ = s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// Scenario is the expectation of one scenario; it panics on an unknown one,
// which is a mistake in the test.
func (s *Stack) Scenario(model string) Expectation {
	e, ok := s.Expect[model]
	if !ok {
		panic("stack: no scenario " + model)
	}
	return e
}

// Main starts the stack into *s, runs the package's tests, stops the stack
// and exits with the tests' code: a package's TestMain is
//
//	func TestMain(m *testing.M) { stack.Main(m, &st) }
func Main(m *testing.M, s **Stack) {
	started, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*s = started
	code := m.Run()
	started.Stop()
	os.Exit(code)
}
