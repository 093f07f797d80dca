package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The peers comparison (-peers, issue 37): the same workloads, in the same
// run and against the same upstream, through four contenders:
//
//	client ──> upstream                                   ("direct")
//	client ──> Caddy [reverse_proxy]            ──> upstream   ("plain")
//	client ──> Caddy [llm_meta, reverse_proxy]  ──> upstream   ("llm_meta")
//	client ──> Portkey's gateway (Node)         ──> upstream   ("portkey")
//
// Each window is a fixed number of requests (-peers-requests) rather than
// a fixed time, so that every contender's percentiles rest on as many
// samples; -peers-cap bounds a window's time all the same. The contenders
// take turns within a round, in reverse order every other round, and
// every figure is taken per round against the direct upstream of the same
// round (peers_figures.go). bench/peers/run.sh builds Caddy, installs the
// gateway and runs this.

var (
	flagPeers         = flag.String("peers", "", "`folder` where npm installed Portkey's gateway (bench/peers/run.sh makes it): run the comparison with the peers instead of the plain/llm_meta table")
	flagPeersNode     = flag.String("peers-node", "node", "the Node binary (22 or later) that runs the gateway")
	flagPeersRequests = flag.Int("peers-requests", 400, "requests per contender in each round (a window), spread over the concurrency's workers")
	flagPeersCap      = flag.Duration("peers-cap", 4*time.Second, "longest a window may last: a contender slower than that is measured on fewer requests")
	flagPeersMD       = flag.String("peers-md", "", "also write the Markdown block to this file")
	flagPeersCommand  = flag.String("peers-command", "go run ./bench/e2e -peers …", "the command to name in the Markdown block (run.sh gives its own)")
	flagPeersLoad     = flag.String("peers-loadavg", "", "/proc/loadavg as it was before the run began (run.sh reads it before it builds anything); default: at this program's start")
)

// The contenders, in the table's order.
const (
	ctDirect = iota
	ctPlain
	ctModule
	ctPortkey
	nContenders
)

var contenderNames = [nContenders]string{"upstream direct", "Caddy reverse_proxy", "Caddy + llm_meta", "Portkey"}

// contender is one way to the upstream.
type contender struct {
	id   int
	name string
	url  string
	// side is the client's reading of a data stream (only llm_meta
	// converts one; these workloads have none).
	side int
	// header is added to each request (the gateway's routing headers).
	header func(path string) http.Header
}

// peerClient is an HTTP client to one contender for a concurrency: the
// load generator's client, with the contender's own request headers.
func peerClient(ct *contender, conc int) *http.Client {
	c := newClient(conc)
	if ct.header != nil {
		c.Transport = addHeader{c.Transport, ct.header}
	}
	return c
}

// addHeader sets the contender's headers on each request. The requests
// are this program's own (exchange makes a fresh one each time), so
// setting them in place is safe.
type addHeader struct {
	rt     http.RoundTripper
	header func(path string) http.Header
}

func (a addHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	for k, v := range a.header(r.URL.Path) {
		r.Header[k] = v
	}
	return a.rt.RoundTrip(r)
}

// portkeyHeader routes a request through the gateway to the local
// upstream: the OpenAI provider (chat, Responses) or the Anthropic one
// (Messages: the OpenAI provider answers "messages is not supported by
// openai"), each with a custom host, and the header that picks the
// upstream's reply forwarded (the gateway sends the upstream only the
// headers it is told to forward).
func portkeyHeader(upstream string) func(path string) http.Header {
	base := func(provider string) http.Header {
		return http.Header{
			"Authorization":             {"Bearer sk-bench"},
			"X-Portkey-Provider":        {provider},
			"X-Portkey-Custom-Host":     {"http://" + upstream + "/v1"},
			"X-Portkey-Forward-Headers": {"x-bench-workload"},
		}
	}
	openai, anthropic := base("openai"), base("anthropic")
	return func(path string) http.Header {
		if path == "/v1/messages" {
			return anthropic
		}
		return openai
	}
}

// nodeProc is the gateway's process.
type nodeProc struct {
	cmd     *exec.Cmd
	log     string
	version string // the gateway's, from its package.json
	node    string // Node's
}

// startPortkey starts Portkey's gateway from the npm install in dir on a
// free loopback port. Its server listens on every interface unless told
// otherwise and has no option for it, so loopback.mjs (from
// bench/peers, copied into dir by run.sh) is preloaded to bind it to
// 127.0.0.1.
func startPortkey(dir string) (*nodeProc, string, error) {
	pkg := filepath.Join(dir, "node_modules", "@portkey-ai", "gateway")
	var meta struct {
		Version string `json:"version"`
		Bin     string `json:"bin"`
	}
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	if err != nil {
		return nil, "", fmt.Errorf("the gateway's package.json in %s: %w", dir, err)
	}
	preload := filepath.Join(dir, "loopback.mjs")
	if _, err := os.Stat(preload); err != nil {
		return nil, "", fmt.Errorf("the loopback preload: %w", err)
	}
	nodeVersion, err := exec.Command(*flagPeersNode, "--version").Output()
	if err != nil {
		return nil, "", fmt.Errorf("%s --version: %w", *flagPeersNode, err)
	}
	addr, err := freePort()
	if err != nil {
		return nil, "", err
	}
	_, port, _ := net.SplitHostPort(addr)
	logf, err := os.CreateTemp("", "llm_meta_portkey_*.log")
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	// --headless: no UI and no log stream; NODE_ENV=production as a
	// deployment runs it.
	cmd := exec.Command(*flagPeersNode, "--import", preload, filepath.Join(pkg, meta.Bin), "--port="+port, "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("starting the gateway: %w", err)
	}
	p := &nodeProc{cmd: cmd, log: logf.Name(), version: meta.Version, node: strings.TrimSpace(string(nodeVersion))}
	if *flagNice != 0 {
		defer renice(cmd.Process.Pid, *flagNice)
	}
	if err := waitListening(addr, 30*time.Second); err != nil {
		p.stop()
		log, _ := os.ReadFile(p.log)
		return nil, "", fmt.Errorf("the gateway did not start listening on %s: %w\n%s", addr, err, log)
	}
	return p, "http://" + addr, nil
}

func (p *nodeProc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM) // our own child, by its pid
	waitOrKill(p.cmd)
	os.Remove(p.log)
}

// waitListening waits until addr accepts a connection.
func waitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopList is the stops of the child processes started so far: run once,
// by the end of the run or by a signal, whichever comes first.
type stopList struct {
	mu  sync.Mutex
	fns []func()
}

func (l *stopList) add(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fns = append(l.fns, f)
}

func (l *stopList) run() {
	l.mu.Lock()
	fns := l.fns
	l.fns = nil
	l.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

// stopOnSignal runs the stops (the child processes) and exits when the
// run is interrupted, so that none outlives it; the returned func undoes
// it at a normal end.
func stopOnSignal(stops *stopList) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "e2e: %v: stopping the contenders\n", s)
			stops.run()
			os.Exit(1)
		case <-done:
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}

// runPeers is the -peers run: start the contenders, check that each
// answers every workload right, measure, print the Markdown block.
func runPeers(up string, loads []*workload, concs []int, out io.Writer) error {
	var sel []*workload
	for _, wl := range loads {
		if wl.kind == kindStream || wl.kind == kindJSON {
			sel = append(sel, wl)
		}
	}
	if len(sel) == 0 {
		return errors.New("-peers: no workload selected (it measures -mode stream and json)")
	}
	if *flagPeersRequests < 1 || *flagRounds < 1 {
		return fmt.Errorf("-peers-requests %d, -rounds %d: at least 1 each", *flagPeersRequests, *flagRounds)
	}
	var stops stopList
	defer stops.run()
	defer stopOnSignal(&stops)()

	cts := make([]*contender, nContenders)
	cts[ctDirect] = &contender{url: "http://" + up}
	for _, c := range []struct {
		id     int
		module bool
	}{{ctPlain, false}, {ctModule, true}} {
		p, err := startCaddy(contenderNames[c.id], up, c.module, "")
		if err != nil {
			return err
		}
		stops.add(p.stop)
		cts[c.id] = &contender{url: p.url}
	}
	cts[ctModule].side = moduleSide
	pk, pkURL, err := startPortkey(*flagPeers)
	if err != nil {
		return err
	}
	stops.add(pk.stop)
	cts[ctPortkey] = &contender{url: pkURL, header: portkeyHeader(up)}
	for i, ct := range cts {
		ct.id, ct.name = i, contenderNames[i]
	}
	fmt.Fprintf(os.Stderr, "upstream %s; Caddy reverse_proxy %s; Caddy + llm_meta %s; Portkey %s %s on Node %s\n",
		up, cts[ctPlain].url, cts[ctModule].url, pk.version, pkURL, pk.node)

	ck, err := peersCheck(cts, sel)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "self-check passed: every contender answers each of %d workloads with the upstream's text and tool calls\n", len(sel))

	run := peersRun{
		Machine:  machine(),
		Command:  *flagPeersCommand,
		Started:  time.Now().UTC(),
		Portkey:  pk.version,
		Node:     pk.node,
		Rounds:   *flagRounds,
		Requests: *flagPeersRequests,
		Events:   *flagEvents,
		JSON:     *flagJSONBytes,
		Checked:  len(sel),
		Changed:  ck.changed[ctPortkey],
	}
	for _, wl := range sel {
		for _, conc := range concs {
			r := measurePeers(cts, wl, conc, ck.want[wl])
			fmt.Fprintln(os.Stderr, progressLine(r))
			run.Rows = append(run.Rows, r)
		}
	}
	run.Took = time.Since(run.Started).Round(time.Second).String()
	if *flagPeersLoad != "" {
		run.Machine["loadavg_before"] = strings.TrimSpace(*flagPeersLoad)
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		run.Machine["loadavg_at_end"] = strings.TrimSpace(string(b))
	}
	md := peersMarkdown(&run)
	fmt.Fprint(out, md)
	if *flagPeersMD != "" {
		if err := os.WriteFile(*flagPeersMD, []byte(md), 0o644); err != nil {
			return err
		}
	}
	if err := writeOut(run); err != nil {
		return err
	}
	for _, r := range run.Rows {
		if r.Errors > 0 {
			return fmt.Errorf("%s c=%d: %d failed requests: the figures of this run are not to be trusted", r.Workload, r.Conc, r.Errors)
		}
	}
	return nil
}

// peerWindow is one contender's window: its requests' latencies (request
// start to the reply's last byte) and times to first event (streams).
type peerWindow struct {
	ok, errs  int64
	elapsed   time.Duration
	lat, ttfe []time.Duration
}

// drivePeer makes n requests of wl to ct (fewer if the window reaches
// -peers-cap) from conc workers; a request counts only when the client
// read exactly want events.
func drivePeer(c *http.Client, ct *contender, wl *workload, conc, n, want int) peerWindow {
	var mu sync.Mutex
	var win peerWindow
	var wg sync.WaitGroup
	left := make(chan struct{}, n)
	for i := 0; i < n; i++ {
		left <- struct{}{}
	}
	close(left)
	start := time.Now()
	deadline := start.Add(*flagPeersCap)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 32<<10)
			var s samples
			var lat []time.Duration
			var errs int64
			for range left {
				if time.Now().After(deadline) {
					break
				}
				t0 := time.Now()
				got, err := exchange(c, ct.url, wl, ct.side, buf, nil, &s)
				d := time.Since(t0)
				switch {
				case err != nil:
					s.err("%s via %s: %v", wl.name(), ct.name, err)
					errs++
				case got != want:
					s.err("%s via %s: %d events, want %d", wl.name(), ct.name, got, want)
					errs++
				default:
					lat = append(lat, d)
				}
			}
			mu.Lock()
			win.ok += int64(len(lat))
			win.errs += errs
			win.lat = append(win.lat, lat...)
			win.ttfe = append(win.ttfe, s.ttfe...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	win.elapsed = time.Since(start)
	return win
}

// measurePeers drives one workload at one concurrency through every
// contender: a warm-up window each (a quarter of a window's requests),
// then -rounds rounds in which they take turns in the table's order, the
// order reversed every other round. So the windows compared most closely
// are always next to each other, each first half the time: plain
// reverse_proxy and llm_meta (its own share), the upstream direct and
// plain, llm_meta and the gateway.
func measurePeers(cts []*contender, wl *workload, conc int, want []int) *peerRow {
	clients := make([]*http.Client, len(cts))
	for i, ct := range cts {
		clients[i] = peerClient(ct, conc)
		defer clients[i].CloseIdleConnections()
	}
	n := *flagPeersRequests
	for i, ct := range cts {
		drivePeer(clients[i], ct, wl, conc, max(n/4, conc), want[i])
	}
	r := newPeerRow(wl, conc)
	for round := 0; round < *flagRounds; round++ {
		var wins [nContenders]peerWindow
		for k := range cts {
			i := k
			if round%2 == 1 {
				i = len(cts) - 1 - k
			}
			wins[i] = drivePeer(clients[i], cts[i], wl, conc, n, want[i])
		}
		r.add(wins)
	}
	r.summarize()
	return r
}

// progressLine is one row's headline, for the log while the run goes on.
func progressLine(r *peerRow) string {
	f := r.Contenders
	return fmt.Sprintf("%-26s c=%-3d direct p50 %s µs; added p50: reverse_proxy %s, + llm_meta %s (own %s), Portkey %s µs; errors %d",
		r.Workload, r.Conc, fmtNum(f[ctDirect].P50Median()), fmtSigned(f[ctPlain].Added50.med()), fmtSigned(f[ctModule].Added50.med()),
		fmtSigned(r.Share50.med()), fmtSigned(f[ctPortkey].Added50.med()), r.Errors)
}
