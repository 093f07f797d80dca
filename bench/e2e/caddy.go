package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// The two Caddy processes: this program run again with -role=caddy (or the
// binary given by -caddy), and what /proc says about them.

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
	if path := os.Getenv("LLM_META_E2E_TRACE"); path != "" {
		f, err := os.Create(path)
		if err == nil && trace.Start(f) == nil {
			defer func() { trace.Stop(); f.Close() }()
		}
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
		if *flagTrace {
			cmd.Env = append(cmd.Env, "LLM_META_E2E_TRACE="+strings.TrimSuffix(profile, ".pprof")+".trace")
		}
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
	if *flagPin {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(caddyCPUs.Count()))
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if *flagPin {
		// Now and once it listens: a thread the runtime made while the
		// first pass ran may have inherited the old set.
		if err := pinProcess(cmd.Process.Pid, &caddyCPUs); err != nil {
			cmd.Process.Kill()
			return nil, err
		}
		defer pinProcess(cmd.Process.Pid, &caddyCPUs)
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
	if !p.stats {
		// Another Caddy binary (-caddy) does not watch its stdin; it
		// stops on SIGTERM, where it would otherwise be killed 5 s later.
		p.cmd.Process.Signal(syscall.SIGTERM) // our own child, by its pid
	}
	waitOrKill(p.cmd)
	os.RemoveAll(p.dir)
}

// waitOrKill waits for our own child cmd to exit, and kills it (by its
// pid) when it has not within 5 s.
func waitOrKill(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// renice sets the nice value of every thread of process pid (on Linux the
// value is per thread; threads made later inherit it from their maker).
func renice(pid, nice int) error {
	return eachThread(pid, func(tid int) error {
		return syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
	})
}

// eachThread calls f with each thread of process pid, until f fails.
func eachThread(pid int, f func(tid int) error) error {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := f(tid); err != nil {
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
