// Command e2e measures what llm_meta adds end to end, on loopback only:
//
//	client ──> Caddy [reverse_proxy]            ──> upstream   ("plain")
//	client ──> Caddy [llm_meta, reverse_proxy]  ──> upstream   ("llm_meta")
//
// The upstream is an OpenAI-style gateway with no pacing, in this process:
// a stream of -events content chunks (186 bytes each, flushed one by
// one), or a JSON reply with tool_calls. Each Caddy runs in its own
// subprocess (this program run again with -role=caddy, or the binary given
// by -caddy), so that its CPU time and memory can be read from /proc.
//
// For streams and for JSON, at each concurrency of -conc, the two configs
// are driven in alternation (-rounds times each, the first of each pair
// swapping every round), -duration each time; each figure is the median
// over the rounds, and each ratio the median of the per-round ratios
// llm_meta/plain (a round's two windows run back to back, which keeps the
// comparison fair on a machine shared with other work).
//
// The idle mode opens -idle streams that stay open after their first event,
// through a fresh Caddy of each config, and compares the processes' RSS.
//
// Run it with `go run ./bench/e2e` (see bench/README.md). It is not part of
// `go test`.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/llm-meta/llm_meta/caddymodule"
)

var (
	flagRole     = flag.String("role", "", "internal: \"caddy\" runs Caddy with the JSON config file given by -config")
	flagConfig   = flag.String("config", "", "internal: Caddy config file for -role=caddy")
	flagMode     = flag.String("mode", "all", "what to measure: all, stream, json, idle (comma-separated)")
	flagDuration = flag.Duration("duration", 400*time.Millisecond, "length of each measurement window")
	flagRounds   = flag.Int("rounds", 11, "alternations (windows per config) for each workload and concurrency")
	flagConc     = flag.String("conc", "1,16,128", "concurrency levels")
	flagEvents   = flag.Int("events", 200, "content events per stream")
	flagIdle     = flag.Int("idle", 1000, "streams held open in the idle mode")
	flagCaddy    = flag.String("caddy", "", "`binary`: a Caddy with llm_meta (e.g. built by go build ./cmd/caddy) to run instead of this program")
	flagOut      = flag.String("out", "", "also write the results as JSON to this file")
	flagJSON     = flag.String("json-reply", "tools", "JSON reply of the upstream: \"tools\" (tool_calls: llm_meta adds meta) or \"plain\" (nothing to change: forwarded byte-identical)")
	flagNice     = flag.Int("nice", 0, "run this program and the Caddy processes at this nice value (negative needs privileges): on a machine shared with other work, -10 lets the measurement take the CPU when it needs it")
	flagWarmup   = flag.Duration("warmup", 300*time.Millisecond, "warm-up window per config before each set of rounds")
	flagProfile  = flag.String("cpuprofile", "", "write CPU and allocation profiles of the two Caddy processes (throughput modes) into this folder: plain.pprof, llm_meta.pprof, *.allocs.pprof")
)

func main() {
	flag.Parse()
	if *flagRole == "caddy" {
		runCaddy(*flagConfig)
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}

// ---------------------------------------------------------------------------
// Caddy subprocess

// runCaddy is the child: Caddy with the given config until stdin closes
// (the parent went away) or a signal comes.
func runCaddy(path string) {
	cfg, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e caddy:", err)
		os.Exit(1)
	}
	if prof := os.Getenv("LLM_META_E2E_CPUPROFILE"); prof != "" {
		f, err := os.Create(prof)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		// And the allocations, written at the end.
		defer func() {
			if f, err := os.Create(strings.TrimSuffix(prof, ".pprof") + ".allocs.pprof"); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if err := caddy.Load(cfg, true); err != nil {
		fmt.Fprintln(os.Stderr, "e2e caddy: loading config:", err)
		os.Exit(1)
	}
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	// SIGUSR1: write the Go runtime's memory statistics for the parent.
	usr := make(chan os.Signal, 1)
	if statsPath := os.Getenv("LLM_META_E2E_STATS"); statsPath != "" {
		signal.Notify(usr, syscall.SIGUSR1)
		go func() {
			for range usr {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				b, _ := json.Marshal(memStats{NumGC: m.NumGC, TotalAlloc: m.TotalAlloc, Mallocs: m.Mallocs, HeapInuse: m.HeapInuse, Sys: m.Sys})
				tmp := statsPath + ".tmp"
				if os.WriteFile(tmp, b, 0o600) == nil {
					os.Rename(tmp, statsPath)
				}
			}
		}()
	}
	select {
	case <-done:
	case <-sig:
	}
	_ = caddy.Stop()
}

// memStats is what a Caddy child reports of its Go runtime on SIGUSR1.
type memStats struct {
	NumGC      uint32 `json:"num_gc"`
	TotalAlloc uint64 `json:"total_alloc"`
	Mallocs    uint64 `json:"mallocs"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
}

// memStats asks the child for its runtime statistics.
func (p *caddyProc) memStats() (memStats, bool) {
	if !p.stats {
		return memStats{}, false // another Caddy binary: SIGUSR1 would end it
	}
	path := filepath.Join(p.dir, "memstats.json")
	old, _ := os.Stat(path)
	if p.cmd.Process.Signal(syscall.SIGUSR1) != nil {
		return memStats{}, false
	}
	for i := 0; i < 1000; i++ {
		if fi, err := os.Stat(path); err == nil && (old == nil || !fi.ModTime().Equal(old.ModTime()) || fi.Size() != old.Size()) {
			b, err := os.ReadFile(path)
			var m memStats
			if err == nil && json.Unmarshal(b, &m) == nil {
				return m, true
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return memStats{}, false
}

type caddyProc struct {
	name  string
	stats bool // it answers SIGUSR1 with its memory statistics (this program as Caddy)
	url   string
	cmd   *exec.Cmd
	in    io.WriteCloser
	dir   string
}

// caddyConfig is a Caddy JSON config listening on addr, proxying to
// upstream, with llm_meta in front when withModule.
func caddyConfig(addr, upstream string, withModule bool) []byte {
	handlers := []any{}
	if withModule {
		handlers = append(handlers, map[string]any{"handler": "llm_meta"})
	}
	handlers = append(handlers, map[string]any{
		"handler":   "reverse_proxy",
		"upstreams": []any{map[string]any{"dial": upstream}},
		// Identical in both configs: enough idle upstream connections for
		// -conc 128 not to open and close one per request.
		"transport": map[string]any{"protocol": "http", "keep_alive": map[string]any{"max_idle_conns_per_host": 1024}},
	})
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{"http": map[string]any{
			"servers": map[string]any{"bench": map[string]any{
				"listen":          []string{addr},
				"automatic_https": map[string]any{"disable": true},
				"routes":          []any{map[string]any{"handle": handlers}},
			}},
		}},
	}
	b, _ := json.Marshal(cfg)
	return b
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func startCaddy(name, upstream string, withModule bool, profile string) (*caddyProc, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "llm_meta_e2e_")
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(cfgPath, caddyConfig(addr, upstream, withModule), 0o600); err != nil {
		return nil, err
	}
	var cmd *exec.Cmd
	if *flagCaddy != "" {
		cmd = exec.Command(*flagCaddy, "run", "--config", cfgPath)
	} else {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(self, "-role=caddy", "-config="+cfgPath)
	}
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"LLM_META_E2E_STATS="+filepath.Join(dir, "memstats.json"))
	if profile != "" {
		cmd.Env = append(cmd.Env, "LLM_META_E2E_CPUPROFILE="+profile)
	}
	cmd.Stdout = io.Discard
	logf, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &caddyProc{name: name, url: "http://" + addr, cmd: cmd, in: in, dir: dir, stats: *flagCaddy == ""}
	if *flagNice != 0 {
		defer renice(cmd.Process.Pid, *flagNice) // its threads made so far (later ones inherit)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p, nil
		}
		if time.Now().After(deadline) {
			p.stop()
			log, _ := os.ReadFile(filepath.Join(dir, "caddy.log"))
			return nil, fmt.Errorf("%s Caddy did not start listening on %s: %v\n%s", name, addr, err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *caddyProc) stop() {
	p.in.Close()
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill() // our own child, by its pid
		<-done
	}
	os.RemoveAll(p.dir)
}

// renice sets the nice value of every thread of process pid (on Linux the
// value is per thread; threads made later inherit it from their maker).
func renice(pid, nice int) error {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			return err
		}
	}
	return nil
}

// cpu is the CPU time the process has used: the sum over its threads of
// the time on a CPU from /proc/PID/task/*/schedstat (nanoseconds), or
// utime + stime from /proc/PID/stat (1/100 s) when schedstat is missing.
func (p *caddyProc) cpu() time.Duration {
	pid := strconv.Itoa(p.cmd.Process.Pid)
	if tasks, err := os.ReadDir("/proc/" + pid + "/task"); err == nil {
		var sum int64
		ok := true
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + pid + "/task/" + t.Name() + "/schedstat")
			if err != nil {
				ok = false
				break
			}
			f := strings.Fields(string(b))
			if len(f) == 0 {
				ok = false
				break
			}
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += ns
		}
		if ok && sum > 0 {
			return time.Duration(sum)
		}
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which is in parentheses).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ is 100 on Linux
}

// rss is the process's resident set size (VmRSS), in bytes.
func (p *caddyProc) rss() int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

// ---------------------------------------------------------------------------
// Upstream

const chunkHead = `data: {"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion.chunk","created":1718000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":`

var (
	roleEvent   = []byte(chunkHead + `{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	finishEvent = []byte(chunkHead + `{},"finish_reason":"stop"}]}` + "\n\n")
	doneEvent   = []byte("data: [DONE]\n\n")
	words       = []string{" markets", " volume", " election", " the", " favourite", " week", " 62%", " up"}
	jsonReply   = []byte(`{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_Qx1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris, France\",\"unit\":\"c\"}"}},` +
		`{"id":"call_Qx2","type":"function","function":{"name":"get_markets","arguments":"{\"limit\":5,\"sort\":\"volume\"}"}}]},` +
		`"logprobs":null,"finish_reason":"tool_calls"}],` +
		`"usage":{"prompt_tokens":80,"completion_tokens":40,"total_tokens":120},"system_fingerprint":"fp_0ba0d124f1"}`)
	jsonReplyPlain = []byte(`{"id":"chatcmpl-9x8Yb2Kq","object":"chat.completion","created":1718000000,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"The hottest markets right now are the 2028 election (62% for the favourite, volume up 14% this week), ` +
		`the Fed cut in September (0.41 USD) and the next Apple product launch. Volume across the top ten markets rose by about a fifth this week."},` +
		`"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":48,"completion_tokens":80,"total_tokens":128},"system_fingerprint":"fp_0ba0d124f1"}`)
)

func contentEvents(n int) [][]byte {
	evs := make([][]byte, n)
	for i := range evs {
		evs[i] = []byte(chunkHead + `{"content":"` + words[i%len(words)] + `"},"finish_reason":null}]}` + "\n\n")
	}
	return evs
}

// upstream is the gateway stand-in: no pacing, every event flushed.
type upstream struct {
	events [][]byte
	json   []byte
	idle   sync.WaitGroup // idle streams being held
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	hdr := w.Header()
	if !bytes.Contains(body, []byte(`"stream":true`)) {
		hdr["Content-Type"] = []string{"application/json"}
		hdr["Content-Length"] = []string{strconv.Itoa(len(u.json))}
		w.Write(u.json)
		return
	}
	hdr["Content-Type"] = []string{"text/event-stream"}
	hdr["Cache-Control"] = []string{"no-cache"}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if r.Header.Get("X-Bench-Idle") != "" {
		// The first event, then nothing until the client goes away.
		w.Write(roleEvent)
		rc.Flush()
		<-r.Context().Done()
		return
	}
	for _, ev := range append(append([][]byte{roleEvent}, u.events...), finishEvent, doneEvent) {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// ---------------------------------------------------------------------------
// Load generation

const (
	streamBody = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`
	jsonBody   = `{"model":"gpt-4o-mini","stream":false,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"Weather in Paris, and the top markets?"}]}`
)

func newClient(conc int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DisableCompression:  true,
		MaxIdleConns:        conc + 64,
		MaxIdleConnsPerHost: conc + 64,
		IdleConnTimeout:     time.Minute,
		ForceAttemptHTTP2:   false,
	}}
}

// window is what one config did in one measurement window.
type window struct {
	ok, errs   int64
	events     int64
	elapsed    time.Duration
	cpu        time.Duration // the Caddy process's CPU time
	alloc      uint64        // bytes the Caddy process allocated (0: unknown)
	gcs        uint32        // its garbage collections
	ttfe, gaps []time.Duration
	lat        []time.Duration
}

// worker-local samples, merged at the end of a window.
type samples struct {
	ok, errs, events int64
	ttfe, gaps, lat  []time.Duration
}

func (s *samples) err(format string, args ...any) {
	s.errs++
	if atomic.AddInt64(&errorsShown, 1) <= 5 {
		fmt.Fprintf(os.Stderr, "  error: "+format+"\n", args...)
	}
}

var errorsShown int64

// streamOnce makes one streamed request and reads it to the end.
func streamOnce(c *http.Client, url string, wantEvents int, buf []byte, s *samples) {
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(streamBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		s.err("stream: %v", err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, resp.Body)
		s.err("stream: status %d", resp.StatusCode)
		return
	}
	events := 0
	var last time.Time
	prevLF := false
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			now := time.Now()
			p := buf[:n]
			for i := 0; i < len(p); {
				j := bytes.IndexByte(p[i:], '\n')
				if j < 0 {
					prevLF = false
					break
				}
				i += j
				// "\n\n" ends an event (this stream uses LF only).
				if (i > 0 && p[i-1] == '\n') || (i == 0 && prevLF) {
					events++
					if events == 1 {
						s.ttfe = append(s.ttfe, now.Sub(start))
					} else {
						s.gaps = append(s.gaps, now.Sub(last))
					}
					last = now
				}
				prevLF = i == len(p)-1
				i++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			s.err("stream read: %v", err)
			return
		}
	}
	if events != wantEvents {
		s.err("stream: %d events, want %d", events, wantEvents)
		return
	}
	s.ok++
	s.events += int64(events)
}

// jsonOnce makes one JSON request.
func jsonOnce(c *http.Client, url string, buf *bytes.Buffer, s *samples) {
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(jsonBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		s.err("json: %v", err)
		return
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || buf.Len() == 0 {
		s.err("json: status %d, %d bytes, %v", resp.StatusCode, buf.Len(), err)
		return
	}
	s.lat = append(s.lat, time.Since(start))
	s.ok++
}

// drive runs conc workers against one Caddy for d.
func drive(p *caddyProc, c *http.Client, kind string, conc int, d time.Duration, wantEvents int) window {
	var wg sync.WaitGroup
	all := make([]samples, conc)
	m0, okm := p.memStats()
	cpu0 := p.cpu()
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(s *samples) {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			var jb bytes.Buffer
			for time.Now().Before(deadline) {
				if kind == "stream" {
					streamOnce(c, p.url, wantEvents, buf, s)
				} else {
					jsonOnce(c, p.url, &jb, s)
				}
			}
		}(&all[w])
	}
	wg.Wait()
	win := window{elapsed: time.Since(start), cpu: p.cpu() - cpu0}
	if m1, ok := p.memStats(); ok && okm {
		win.alloc, win.gcs = m1.TotalAlloc-m0.TotalAlloc, m1.NumGC-m0.NumGC
	}
	for i := range all {
		s := &all[i]
		win.ok += s.ok
		win.errs += s.errs
		win.events += s.events
		win.ttfe = append(win.ttfe, s.ttfe...)
		win.gaps = append(win.gaps, s.gaps...)
		win.lat = append(win.lat, s.lat...)
	}
	return win
}

// ---------------------------------------------------------------------------
// Figures

func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(math.Ceil(p/100*float64(len(d)))) - 1
	i = max(0, min(i, len(d)-1))
	return float64(d[i]) / float64(time.Microsecond)
}

func median(v []float64) float64 {
	w := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			w = append(w, x)
		}
	}
	if len(w) == 0 {
		return math.NaN()
	}
	sort.Float64s(w)
	if len(w)%2 == 1 {
		return w[len(w)/2]
	}
	return (w[len(w)/2-1] + w[len(w)/2]) / 2
}

// metric is one figure of one workload and concurrency, per round.
type metric struct {
	Name   string `json:"name"`
	Unit   string `json:"unit"`
	Higher bool   `json:"higher_is_better"`
	Plain  floats `json:"plain"`
	Module floats `json:"llm_meta"`
}

// floats marshals NaN (a figure that could not be taken) as null.
type floats []float64

func (f floats) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range f {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
	}
	return append(b, ']'), nil
}

func (m *metric) medians() (plain, mod, ratio, diff float64) {
	var ratios, diffs []float64
	for i := 0; i < len(m.Plain) && i < len(m.Module); i++ {
		ratios = append(ratios, m.Module[i]/m.Plain[i])
		diffs = append(diffs, m.Module[i]-m.Plain[i])
	}
	return median(m.Plain), median(m.Module), median(ratios), median(diffs)
}

type result struct {
	Kind    string    `json:"kind"`
	Conc    int       `json:"concurrency"`
	Metrics []*metric `json:"metrics"`
	Errors  int64     `json:"errors"`
}

func (r *result) metric(name, unit string, higher bool) *metric {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m
		}
	}
	m := &metric{Name: name, Unit: unit, Higher: higher}
	r.Metrics = append(r.Metrics, m)
	return m
}

func (r *result) add(name, unit string, higher bool, module bool, v float64) {
	m := r.metric(name, unit, higher)
	if module {
		m.Module = append(m.Module, v)
	} else {
		m.Plain = append(m.Plain, v)
	}
}

func record(r *result, w window, module bool) {
	r.Errors += w.errs
	secs := w.elapsed.Seconds()
	if r.Kind == "stream" {
		r.add("events/s", "1/s", true, module, float64(w.events)/secs)
		r.add("time to first event p50", "µs", false, module, pct(w.ttfe, 50))
		r.add("time to first event p99", "µs", false, module, pct(w.ttfe, 99))
		r.add("gap between events p50", "µs", false, module, pct(w.gaps, 50))
		r.add("gap between events p99", "µs", false, module, pct(w.gaps, 99))
		r.add("Caddy CPU per event", "µs", false, module, float64(w.cpu)/float64(time.Microsecond)/float64(max(w.events, 1)))
		alloc, gcs := math.NaN(), math.NaN()
		if w.alloc > 0 {
			alloc, gcs = float64(w.alloc)/1024/float64(max(w.ok, 1)), float64(w.gcs)/secs
		}
		r.add("Caddy heap alloc per stream", "KiB", false, module, alloc)
		r.add("Caddy GCs per second", "1/s", false, module, gcs)
	} else {
		r.add("requests/s", "1/s", true, module, float64(w.ok)/secs)
		r.add("latency p50", "µs", false, module, pct(w.lat, 50))
		r.add("latency p99", "µs", false, module, pct(w.lat, 99))
		r.add("Caddy CPU per request", "µs", false, module, float64(w.cpu)/float64(time.Microsecond)/float64(max(w.ok, 1)))
		alloc, gcs := math.NaN(), math.NaN()
		if w.alloc > 0 {
			alloc, gcs = float64(w.alloc)/1024/float64(max(w.ok, 1)), float64(w.gcs)/secs
		}
		r.add("Caddy heap alloc per request", "KiB", false, module, alloc)
		r.add("Caddy GCs per second", "1/s", false, module, gcs)
	}
}

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func printResult(r *result) {
	fmt.Printf("\n%s, concurrency %d (medians of %d rounds; errors: %d)\n", r.Kind, r.Conc, *flagRounds, r.Errors)
	fmt.Printf("  %-36s %12s %12s %8s %10s\n", "", "plain", "llm_meta", "ratio", "added")
	for _, m := range r.Metrics {
		p, mod, ratio, diff := m.medians()
		added := ""
		if !m.Higher {
			added = fmtNum(diff) + " " + m.Unit
		}
		fmt.Printf("  %-36s %12s %12s %8s %10s\n", m.Name+" ("+m.Unit+")", fmtNum(p), fmtNum(mod), fmtRatio(ratio), added)
	}
}

// ---------------------------------------------------------------------------

type idleResult struct {
	Streams   int     `json:"streams"`
	PlainMiB  float64 `json:"plain_rss_delta_mib"`
	ModuleMiB float64 `json:"llm_meta_rss_delta_mib"`
	PlainRSS  float64 `json:"plain_rss_mib"`
	ModuleRSS float64 `json:"llm_meta_rss_mib"`
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// idleRSS opens n streams through a fresh Caddy that stay open after their
// first event and reports the RSS before and with them.
func idleRSS(name, up string, module bool, n int) (before, with int64, err error) {
	p, err := startCaddy(name, up, module, "")
	if err != nil {
		return 0, 0, err
	}
	defer p.stop()
	c := newClient(n)
	// Warm up the code paths (and the pools) a little first.
	var s samples
	buf := make([]byte, 32<<10)
	for i := 0; i < 20; i++ {
		streamOnce(c, p.url, *flagEvents+3, buf, &s)
	}
	time.Sleep(500 * time.Millisecond)
	before = p.rss()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opened sync.WaitGroup
	var failed atomic.Int64
	var held sync.WaitGroup
	for i := 0; i < n; i++ {
		opened.Add(1)
		held.Add(1)
		go func() {
			defer held.Done()
			first := false
			defer func() {
				if !first {
					failed.Add(1)
					opened.Done()
				}
			}()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/v1/chat/completions", strings.NewReader(streamBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Bench-Idle", "1")
			resp, err := c.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(line) == 1 { // the blank line after the first event
					break
				}
			}
			first = true
			opened.Done()
			io.Copy(io.Discard, br) // held until cancelled
		}()
	}
	opened.Wait()
	if f := failed.Load(); f > 0 {
		return 0, 0, fmt.Errorf("%s: %d of %d idle streams failed", name, f, n)
	}
	time.Sleep(time.Second)
	with = p.rss()
	cancel()
	held.Wait()
	return before, with, nil
}

// ---------------------------------------------------------------------------

func run() error {
	if runtime.GOOS != "linux" {
		return errors.New("needs Linux (/proc for CPU time and RSS)")
	}
	if *flagNice != 0 {
		if err := renice(os.Getpid(), *flagNice); err != nil {
			return fmt.Errorf("-nice %d: %v", *flagNice, err)
		}
	}
	// The load generator and the upstream share the machine with Caddy: keep
	// their GC quiet.
	debug.SetGCPercent(400)

	modes := map[string]bool{}
	for _, m := range strings.Split(*flagMode, ",") {
		modes[strings.TrimSpace(m)] = true
	}
	if modes["all"] {
		modes["stream"], modes["json"], modes["idle"] = true, true, true
	}
	var concs []int
	for _, c := range strings.Split(*flagConc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -conc %q", *flagConc)
		}
		concs = append(concs, n)
	}

	u := &upstream{events: contentEvents(*flagEvents), json: jsonReply}
	switch *flagJSON {
	case "tools":
	case "plain":
		u.json = jsonReplyPlain
	default:
		return fmt.Errorf("bad -json-reply %q", *flagJSON)
	}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	usrv := &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go usrv.Serve(ul)
	defer usrv.Close()
	up := ul.Addr().String()

	printMachine()
	t0 := time.Now()
	out := struct {
		Machine map[string]string `json:"machine"`
		Flags   map[string]string `json:"flags"`
		Results []*result         `json:"results"`
		Idle    *idleResult       `json:"idle,omitempty"`
	}{Machine: machine(), Flags: map[string]string{}}
	flag.VisitAll(func(f *flag.Flag) { out.Flags[f.Name] = f.Value.String() })

	if modes["stream"] || modes["json"] {
		profile := func(name string) string {
			if *flagProfile == "" {
				return ""
			}
			os.MkdirAll(*flagProfile, 0o755)
			abs, _ := filepath.Abs(filepath.Join(*flagProfile, name+".pprof"))
			return abs
		}
		plain, err := startCaddy("plain", up, false, profile("plain"))
		if err != nil {
			return err
		}
		defer plain.stop()
		mod, err := startCaddy("llm_meta", up, true, profile("llm_meta"))
		if err != nil {
			return err
		}
		defer mod.stop()
		fmt.Printf("upstream %s, plain Caddy %s (pid %d), llm_meta Caddy %s (pid %d)\n",
			up, plain.url, plain.cmd.Process.Pid, mod.url, mod.cmd.Process.Pid)
		fmt.Printf("streams of %d content events (~%d bytes each) + role, finish, [DONE]; %d rounds of %v per config\n",
			*flagEvents, len(u.events[0]), *flagRounds, *flagDuration)

		for _, kind := range []string{"stream", "json"} {
			if !modes[kind] {
				continue
			}
			for _, conc := range concs {
				cp, cm := newClient(conc), newClient(conc)
				r := &result{Kind: kind, Conc: conc}
				want := *flagEvents + 3
				drive(plain, cp, kind, conc, *flagWarmup, want)
				drive(mod, cm, kind, conc, *flagWarmup, want)
				for round := 0; round < *flagRounds; round++ {
					order := []bool{false, true}
					if round%2 == 1 {
						order = []bool{true, false}
					}
					for _, module := range order {
						if module {
							record(r, drive(mod, cm, kind, conc, *flagDuration, want), true)
						} else {
							record(r, drive(plain, cp, kind, conc, *flagDuration, want), false)
						}
					}
				}
				printResult(r)
				out.Results = append(out.Results, r)
				cp.CloseIdleConnections()
				cm.CloseIdleConnections()
			}
		}
	}

	if modes["idle"] {
		n := *flagIdle
		fmt.Printf("\nidle: %d streams held open after their first event, fresh Caddy per config\n", n)
		pb, pw, err := idleRSS("plain", up, false, n)
		if err != nil {
			return err
		}
		mb, mw, err := idleRSS("llm_meta", up, true, n)
		if err != nil {
			return err
		}
		ir := &idleResult{Streams: n, PlainMiB: mib(pw - pb), ModuleMiB: mib(mw - mb), PlainRSS: mib(pw), ModuleRSS: mib(mw)}
		out.Idle = ir
		fmt.Printf("  %-36s %12s %12s %10s\n", "", "plain", "llm_meta", "added")
		fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "RSS before (MiB)", mib(pb), mib(mb), mib(mb-pb))
		fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", fmt.Sprintf("RSS with %d streams (MiB)", n), mib(pw), mib(mw), mib(mw-pw))
		fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "growth (MiB)", mib(pw-pb), mib(mw-mb), mib((mw-mb)-(pw-pb)))
		fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "growth per stream (KiB)", float64(pw-pb)/1024/float64(n), float64(mw-mb)/1024/float64(n), float64((mw-mb)-(pw-pb))/1024/float64(n))
	}

	summary(out.Results, out.Idle)
	fmt.Printf("\ntotal time %v\n", time.Since(t0).Round(time.Second))
	if *flagOut != "" {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*flagOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// summary checks the figures against the targets of the benchmark issue.
func summary(rs []*result, idle *idleResult) {
	fmt.Printf("\ntargets\n")
	line := func(ok bool, what string, args ...any) {
		mark := "ok  "
		if !ok {
			mark = "MISS"
		}
		fmt.Printf("  %s %s\n", mark, fmt.Sprintf(what, args...))
	}
	for _, r := range rs {
		for _, m := range r.Metrics {
			_, _, ratio, diff := m.medians()
			switch {
			case r.Kind == "stream" && m.Name == "events/s":
				line(ratio >= 0.95, "stream c=%-3d events/s ratio %.3f (target >= 0.95)", r.Conc, ratio)
			case r.Kind == "stream" && m.Name == "time to first event p99":
				line(diff <= 100, "stream c=%-3d time to first event p99 added %s µs (target <= 100)", r.Conc, fmtNum(diff))
			case r.Kind == "json" && m.Name == "requests/s":
				line(ratio >= 0.93, "json   c=%-3d requests/s ratio %.3f (target >= 0.93)", r.Conc, ratio)
			}
		}
	}
	if idle != nil {
		d := idle.ModuleMiB - idle.PlainMiB
		line(d <= 64, "idle %d streams: RSS growth %.1f MiB above plain (target <= 64)", idle.Streams, d)
	}
}

func machine() map[string]string {
	m := map[string]string{"go": runtime.Version(), "nproc": strconv.Itoa(runtime.NumCPU()), "gomaxprocs": strconv.Itoa(runtime.GOMAXPROCS(0))}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				if _, v, ok := strings.Cut(line, ":"); ok {
					m["cpu"] = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m["loadavg_at_start"] = strings.TrimSpace(string(b))
	}
	return m
}

func printMachine() {
	m := machine()
	fmt.Printf("machine: %s, %s CPUs, %s; load average at start %s\n", m["cpu"], m["nproc"], m["go"], m["loadavg_at_start"])
}
