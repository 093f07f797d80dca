// Command e2e measures what llm_meta adds end to end, on loopback only:
//
//	client ──> Caddy [reverse_proxy]            ──> upstream   ("plain")
//	client ──> Caddy [llm_meta, reverse_proxy]  ──> upstream   ("llm_meta")
//
// The upstream, in this process, sends with no pacing the exact wire format
// of each protocol: chat completions, OpenAI Responses and Anthropic
// Messages, as streams (-events content events, each flushed on its own)
// and as JSON replies (about -json-bytes), each without and with tool
// calls; and the Vercel AI SDK data stream and UI message stream, which
// llm_meta converts into chat chunks and plain reverse_proxy passes as they
// are. The first mode's short streams are the one exception to "no pacing":
// their upstream waits after the first event, so that its time is measured
// with the Caddy under test far from saturated. Each Caddy runs in its own
// subprocess (this program run again with -role=caddy, or the binary given
// by -caddy), so that its CPU time and memory can be read from /proc.
//
// Before measuring, a self-check sends one request of every workload
// through each Caddy and stops the run unless plain passed the bytes
// unchanged and llm_meta's reply carries the meta it should (see
// selfcheck.go).
//
// For each workload (workloads.go) and each concurrency of -conc, the two
// configs are driven in alternation (-rounds times each, the first of each
// pair swapping every round), -duration each time; each figure is the
// median over the rounds, and each ratio the median of the per-round ratios
// llm_meta/plain (a round's two windows run back to back, which keeps the
// comparison fair on a machine shared with other work). One table row per
// workload and concurrency holds the figures against the targets (table.go).
//
// The idle mode opens -idle streams that stay open after their first event,
// through a fresh Caddy of each config, and compares the processes' RSS.
//
// Run it with `go run ./bench/e2e` (see bench/README.md). It is not part of
// `go test`.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/llm-meta/llm_meta/caddymodule"
)

var (
	flagRole      = flag.String("role", "", "internal: \"caddy\" runs Caddy with the JSON config file given by -config")
	flagConfig    = flag.String("config", "", "internal: Caddy config file for -role=caddy")
	flagMode      = flag.String("mode", "all", "what to measure, comma-separated: stream, json, convert, first, idle, or all")
	flagProto     = flag.String("proto", "all", "protocols, comma-separated: chat, responses, anthropic (streams and JSON), datastream, uistream (converted streams), or all")
	flagTools     = flag.String("tools", "all", "replies without tool calls (no), with them (yes), or all")
	flagDuration  = flag.Duration("duration", 400*time.Millisecond, "length of each measurement window")
	flagRounds    = flag.Int("rounds", 11, "alternations (windows per config) for each workload and concurrency")
	flagConc      = flag.String("conc", "1,16,128", "concurrency levels")
	flagEvents    = flag.Int("events", 200, "content events per stream (with tool calls: half text, half arguments of two calls)")
	flagFirstRate = flag.Float64("first-rate", 400, "streams per second the first mode aims at: each of its streams holds after the first event for concurrency ÷ this rate")
	flagJSONBytes = flag.Int("json-bytes", 2048, "size of a JSON reply (the text is padded to it)")
	flagIdle      = flag.Int("idle", 1000, "streams held open in the idle mode")
	flagCaddy     = flag.String("caddy", "", "`binary`: a Caddy with llm_meta (e.g. built by go build ./cmd/caddy) to run instead of this program")
	flagOut       = flag.String("out", "", "also write the results as JSON to this file: the table's rows and every figure of every round")
	flagNice      = flag.Int("nice", 0, "run this program and the Caddy processes at this nice value (negative needs privileges): on a machine shared with other work, -10 lets the measurement take the CPU when it needs it")
	flagWarmup    = flag.Duration("warmup", 300*time.Millisecond, "warm-up window per config before each set of rounds")
	flagProfile   = flag.String("cpuprofile", "", "write CPU and allocation profiles of the two Caddy processes (over every workload measured) into this folder: plain.pprof, llm_meta.pprof, *.allocs.pprof")
	flagTrace     = flag.Bool("trace", false, "with -cpuprofile, also write a runtime execution trace of each Caddy process into the folder (plain.trace, llm_meta.trace): go tool trace -pprof=sched|sync|syscall|net FILE shows where goroutines waited")
	flagVerbose   = flag.Bool("v", false, "print every figure of every workload, not only the table")
	flagPin       = flag.Bool("pin", false, "run the Caddy processes on the last CPU (GOMAXPROCS 1) and this program on the others, so that the Caddy measured does not share a core's caches with the load generator (pin.go); the targets are judged unpinned")
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

func run() error {
	if runtime.GOOS != "linux" {
		return errors.New("needs Linux (/proc for CPU time and RSS)")
	}
	if *flagNice != 0 {
		if err := renice(os.Getpid(), *flagNice); err != nil {
			return fmt.Errorf("-nice %d: %v", *flagNice, err)
		}
	}
	if *flagPin {
		var err error
		if caddyCPUs, loadCPUs, err = pinSets(); err != nil {
			return err
		}
		if err := pinSelf(&loadCPUs); err != nil {
			return err
		}
	}
	// The load generator and the upstream share the machine with Caddy: keep
	// their GC quiet.
	debug.SetGCPercent(400)

	modes, err := selection("mode", *flagMode, kindStream, kindJSON, kindConvert, kindFirst, "idle")
	if err != nil {
		return err
	}
	var protoNames []string
	for _, p := range protocols {
		protoNames = append(protoNames, p.name)
	}
	protos, err := selection("proto", *flagProto, protoNames...)
	if err != nil {
		return err
	}
	tools, err := selection("tools", *flagTools, "no", "yes")
	if err != nil {
		return err
	}
	var concs []int
	for _, c := range strings.Split(*flagConc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -conc %q", *flagConc)
		}
		concs = append(concs, n)
	}
	if !(*flagFirstRate > 0) {
		return fmt.Errorf("-first-rate %v: streams per second, more than 0", *flagFirstRate)
	}
	if *flagEvents < 4 {
		return fmt.Errorf("-events %d: at least 4 (tool calls take half of them)", *flagEvents)
	}

	// The upstream serves every workload (the idle mode uses the chat
	// stream's); the selected ones are measured.
	all := buildWorkloads(map[string]bool{kindStream: true, kindJSON: true, kindConvert: true, kindFirst: true},
		map[string]bool{"chat": true, "responses": true, "anthropic": true, "datastream": true, "uistream": true},
		map[string]bool{"no": true, "yes": true}, *flagEvents, *flagJSONBytes)
	var loads []*workload
	for _, wl := range all {
		if modes[wl.kind] && protos[wl.proto.name] && tools[yesNo(wl.tools)] {
			loads = append(loads, wl)
		}
	}
	if len(loads) == 0 && !modes["idle"] {
		return fmt.Errorf("no workload selected by -mode %s -proto %s -tools %s (converted streams are -proto datastream,uistream)", *flagMode, *flagProto, *flagTools)
	}
	chatStreamLoad := all[0] // stream, chat, no tools: the first of the table

	u := &upstream{loads: all, idleEvent: chatStreamLoad.parts[0]}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	usrv := &http.Server{Handler: u, ReadHeaderTimeout: 10 * time.Second}
	go usrv.Serve(ul)
	defer usrv.Close()
	up := ul.Addr().String()
	if *flagPeers != "" {
		return runPeers(up, loads, concs, os.Stdout) // peers.go
	}

	printMachine()
	t0 := time.Now()
	out := struct {
		Machine map[string]string `json:"machine"`
		Flags   map[string]string `json:"flags"`
		Rows    []row             `json:"rows"`
		Results []*result         `json:"results"`
		Idle    *idleResult       `json:"idle,omitempty"`
	}{Machine: machine(), Flags: map[string]string{}}
	flag.VisitAll(func(f *flag.Flag) { out.Flags[f.Name] = f.Value.String() })

	if len(loads) > 0 {
		plain, mod, err := startPair(up)
		if err != nil {
			return err
		}
		defer plain.stop()
		defer mod.stop()
		if err := selfCheck(plain, mod, loads); err != nil {
			return err
		}
		fmt.Printf("self-check passed: %d workloads, plain forwards the upstream's bytes, llm_meta adds the meta they call for\n", len(loads))
		fmt.Printf("streams of %d content events; JSON replies of about %d bytes; %d rounds of %v per config and concurrency\n",
			*flagEvents, *flagJSONBytes, *flagRounds, *flagDuration)
		if *flagVerbose {
			for _, wl := range loads {
				fmt.Printf("  %-32s upstream: %3d writes, %6d bytes; events read: plain %3d, llm_meta %3d\n",
					wl.name(), len(wl.parts), len(bytes.Join(wl.parts, nil)), wl.want[plainSide], wl.want[moduleSide])
			}
		}
		printTableHead()
		for _, wl := range loads {
			for _, conc := range concs {
				r := measure(plain, mod, wl, conc)
				w := makeRow(r)
				printRow(w)
				if *flagVerbose {
					printDetails(r, *flagRounds)
				}
				out.Results = append(out.Results, r)
				out.Rows = append(out.Rows, w)
			}
		}
	}

	if modes["idle"] {
		if out.Idle, err = runIdle(up, *flagIdle, chatStreamLoad); err != nil {
			return err
		}
	}

	summary(out.Rows, out.Idle)
	fmt.Printf("\ntotal time %v\n", time.Since(t0).Round(time.Second))
	if err := writeOut(out); err != nil {
		return err
	}
	// A figure taken over failed requests, or none, is no figure.
	for _, w := range out.Rows {
		if w.Errors > 0 || !(w.Plain > 0 && w.Module > 0) {
			return fmt.Errorf("%s %s tools=%s c=%d: %d errors, throughput %s / %s: the figures of this run are not to be trusted",
				w.Kind, w.Proto, yesNo(w.Tools), w.Conc, w.Errors, fmtNum(float64(w.Plain)), fmtNum(float64(w.Module)))
		}
	}
	return nil
}

// writeOut writes the results as JSON to -out's file, if it names one.
func writeOut(v any) error {
	if *flagOut == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(*flagOut, b, 0o644)
}

// holdFor is how long a first-mode stream waits after its first event at
// concurrency conc, for about rate streams a second through the Caddy
// under test.
func holdFor(conc int, rate float64) time.Duration {
	return time.Duration(float64(conc) / rate * float64(time.Second))
}

// startPair starts the two Caddy processes, with profiles when -cpuprofile.
func startPair(up string) (plain, mod *caddyProc, err error) {
	profile := func(name string) string {
		if *flagProfile == "" {
			return ""
		}
		os.MkdirAll(*flagProfile, 0o755)
		abs, _ := filepath.Abs(filepath.Join(*flagProfile, name+".pprof"))
		return abs
	}
	if plain, err = startCaddy("plain", up, false, profile("plain")); err != nil {
		return nil, nil, err
	}
	if mod, err = startCaddy("llm_meta", up, true, profile("llm_meta")); err != nil {
		plain.stop()
		return nil, nil, err
	}
	fmt.Printf("upstream %s, plain Caddy %s (pid %d), llm_meta Caddy %s (pid %d)\n",
		up, plain.url, plain.cmd.Process.Pid, mod.url, mod.cmd.Process.Pid)
	return plain, mod, nil
}

// measure drives one workload at one concurrency: a warm-up window per
// config, then -rounds alternations, the first of each pair swapping every
// round.
func measure(plain, mod *caddyProc, wl *workload, conc int) *result {
	cp, cm := newClient(conc), newClient(conc)
	defer cp.CloseIdleConnections()
	defer cm.CloseIdleConnections()
	r := &result{Kind: wl.kind, Proto: wl.proto.name, Tools: wl.tools, Conc: conc}
	d := *flagDuration
	if wl.kind == kindFirst {
		hold := holdFor(conc, *flagFirstRate)
		wl.hold, wl.stagger = []string{hold.String()}, hold/time.Duration(conc)
		defer func() { wl.hold, wl.stagger = nil, 0 }()
		d = max(d, 4*hold) // each worker a few streams a window
	}
	drive(plain, cp, wl, plainSide, conc, *flagWarmup)
	drive(mod, cm, wl, moduleSide, conc, *flagWarmup)
	for round := 0; round < *flagRounds; round++ {
		order := []int{plainSide, moduleSide}
		if round%2 == 1 {
			order = []int{moduleSide, plainSide}
		}
		for _, side := range order {
			if side == moduleSide {
				record(r, drive(mod, cm, wl, side, conc, d), true)
			} else {
				record(r, drive(plain, cp, wl, side, conc, d), false)
			}
		}
	}
	return r
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
	if *flagPin {
		m["pinned"] = fmt.Sprintf("Caddys on CPUs %s, clients and upstream on CPUs %s", cpuList(&caddyCPUs), cpuList(&loadCPUs))
	}
	return m
}

func printMachine() {
	m := machine()
	fmt.Printf("machine: %s, %s CPUs, %s; load average at start %s\n", m["cpu"], m["nproc"], m["go"], m["loadavg_at_start"])
	if p := m["pinned"]; p != "" {
		fmt.Printf("pinned (-pin): %s\n", p)
	}
}
