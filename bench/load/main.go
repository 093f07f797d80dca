// Command load puts many concurrent, long-lived SSE streams through Caddy
// with llm_meta in front of reverse_proxy, all in this one process on
// loopback, and checks that every event arrives, in order, followed by the
// final meta event and [DONE]; it samples goroutines and memory before,
// during and after the load and fails when they do not come back near the
// baseline.
//
//	go run ./bench/load -streams 1000 -duration 60s
//
// See README.md next to this file.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	_ "github.com/llm-meta/llm_meta/caddymodule"
)

var (
	flStreams   = flag.Int("streams", 1000, "concurrent client streams")
	flDuration  = flag.Duration("duration", 60*time.Second, "how long streams are (re)opened")
	flEventsMin = flag.Int("events-min", 10, "fewest content events in one stream")
	flEventsMax = flag.Int("events-max", 40, "most content events in one stream")
	flGapMin    = flag.Duration("gap-min", 50*time.Millisecond, "shortest pause before each upstream event")
	flGapMax    = flag.Duration("gap-max", 200*time.Millisecond, "longest pause before each upstream event")
	flSample    = flag.Duration("sample", 5*time.Second, "sampling interval during the load")
	flIdle      = flag.Duration("idle", 2*time.Second, "idle timeout of pooled connections (client, reverse_proxy, upstream)")
	flSettle    = flag.Duration("settle", 5*time.Second, "wait before the baseline and after-load samples (must exceed -idle)")
	flGorSlack  = flag.Int("goroutine-slack", 25, "goroutines allowed above the baseline after the load")
	flHeapSlack = flag.Int("heap-slack-mib", 16, "MiB of HeapInuse allowed above the baseline after the load")
	flRSSSlack  = flag.Int("rss-slack-mib", 96, "MiB of VmRSS allowed above the baseline after the load")
	flModule    = flag.Bool("module", true, "put llm_meta in front of reverse_proxy (false: plain reverse_proxy, for comparison)")
)

const model = "load-model"

// ---- upstream -------------------------------------------------------------

// upstream streams OpenAI chunks, paced: event i carries "seq":i and the
// time it was written ("ts", Unix nanoseconds). The first one starts a tool
// call (so the final meta event has tools_used), a meta-only event in the
// middle must be withheld and merged, the last one has finish_reason stop.
// The number of events comes in X-Load-Events.
func upstream(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n, _ := strconv.Atoi(r.Header.Get("X-Load-Events"))
	sid := r.Header.Get("X-Load-Stream")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if rc.Flush() != nil {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(len(sid))))
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	created := time.Now().Unix()
	buf := make([]byte, 0, 512)
	for i := 0; i < n; i++ {
		timer.Reset(*flGapMin + time.Duration(rng.Int64N(int64(*flGapMax-*flGapMin)+1)))
		select {
		case <-r.Context().Done():
			return
		case <-timer.C:
		}
		buf = buf[:0]
		if i == n/2 {
			buf = append(buf, "data: {\"meta\":{\"source\":\"load\"}}\n\n"...)
		}
		buf = append(buf, `data: {"id":"chatcmpl-`...)
		buf = append(buf, sid...)
		buf = append(buf, `","object":"chat.completion.chunk","created":`...)
		buf = strconv.AppendInt(buf, created, 10)
		buf = append(buf, `,"model":"`+model+`","seq":`...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, `,"ts":`...)
		buf = strconv.AppendInt(buf, time.Now().UnixNano(), 10)
		switch {
		case i == 0:
			buf = append(buf, `,"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":""}}]},"finish_reason":null}]}`...)
		case i == n-1:
			buf = append(buf, `,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`...)
		default:
			buf = append(buf, `,"choices":[{"index":0,"delta":{"content":"tok`...)
			buf = strconv.AppendInt(buf, int64(i), 10)
			buf = append(buf, ` "},"finish_reason":null}]}`...)
		}
		buf = append(buf, "\n\n"...)
		if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// ---- client ---------------------------------------------------------------

// counters of the whole run.
var (
	open      atomic.Int64
	streams   atomic.Int64
	events    atomic.Int64
	failures  atomic.Int64
	failMu    sync.Mutex
	failKinds = map[string]int{}
	failFirst = map[string]string{}
	latency   [320]atomic.Int64 // by latBucket(microseconds)
	latMax    atomic.Int64      // microseconds
)

// latBucket: values below 16 µs exactly, then 8 buckets per power of two
// (within 12.5%).
func latBucket(us uint64) int {
	if us < 16 {
		return int(us)
	}
	e := bits.Len64(us) - 4
	return 16 + (e-1)*8 + int(us>>uint(e)) - 8
}

// latUpper is the largest value in bucket i.
func latUpper(i int) int64 {
	if i < 16 {
		return int64(i)
	}
	e := (i-16)/8 + 1
	m := (i-16)%8 + 8
	return int64(m+1)<<e - 1
}

func fail(kind, detail string) {
	failures.Add(1)
	failMu.Lock()
	if failKinds[kind] == 0 {
		failFirst[kind] = detail
	}
	failKinds[kind]++
	failMu.Unlock()
}

func recordLatency(ts int64) {
	us := (time.Now().UnixNano() - ts) / 1000
	if us < 0 {
		us = 0
	}
	latency[min(latBucket(uint64(us)), len(latency)-1)].Add(1)
	for {
		m := latMax.Load()
		if us <= m || latMax.CompareAndSwap(m, us) {
			return
		}
	}
}

// percentile returns the upper bound (µs) of the bucket holding quantile q.
func percentile(q float64) int64 {
	var total int64
	for i := range latency {
		total += latency[i].Load()
	}
	if total == 0 {
		return 0
	}
	want := int64(q * float64(total))
	var seen int64
	for i := range latency {
		seen += latency[i].Load()
		if seen > want {
			return min(latUpper(i), latMax.Load())
		}
	}
	return latMax.Load()
}

type chunk struct {
	Seq     *int              `json:"seq"`
	TS      int64             `json:"ts"`
	Choices []json.RawMessage `json:"choices"`
	Meta    *struct {
		Tools  []string `json:"tools_used"`
		Source string   `json:"source"`
	} `json:"meta"`
}

// stream runs one client stream and checks it event by event.
func stream(ctx context.Context, client *http.Client, url string, id int64, rng *rand.Rand) {
	n := *flEventsMin + rng.IntN(*flEventsMax-*flEventsMin+1)
	sid := strconv.FormatInt(id, 10)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(n+2)*(*flGapMax)+30*time.Second)
	defer cancel()
	body := `{"model":"` + model + `","stream":true,"messages":[{"role":"user","content":"stream ` + sid + `"}]}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Load-Events", strconv.Itoa(n))
	req.Header.Set("X-Load-Stream", sid)
	open.Add(1)
	defer open.Add(-1)
	resp, err := client.Do(req)
	if err != nil {
		fail("request", err.Error())
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		fail("status", fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type")))
		return
	}
	br := bufio.NewReaderSize(resp.Body, 4096)
	next, metaSeen, done := 0, false, false
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			if err == io.EOF && len(line) == 0 {
				break
			}
			fail("read", fmt.Sprintf("stream %s after %d/%d events: %v", sid, next, n, err))
			return
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data[:0], bytes.TrimPrefix(v, []byte(" "))...)
			}
			continue
		}
		if len(data) == 0 {
			continue // a comment or an empty event
		}
		if done {
			fail("extra", fmt.Sprintf("stream %s: event after [DONE]: %.100s", sid, data))
			return
		}
		if string(data) == "[DONE]" {
			if next != n || !metaSeen {
				fail("done", fmt.Sprintf("stream %s: [DONE] after %d/%d events, final meta %v", sid, next, n, metaSeen))
				return
			}
			done = true
			data = data[:0]
			continue
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			fail("json", fmt.Sprintf("stream %s: %v: %.100s", sid, err, data))
			return
		}
		switch {
		case c.Meta != nil && !*flModule:
			// Plain reverse_proxy: the upstream's meta-only event passes
			// and no final meta event is added.
			if metaSeen || len(c.Choices) != 0 || c.Meta.Source != "load" {
				fail("meta", fmt.Sprintf("stream %s: meta event after %d/%d events (seen before: %v): %.200s", sid, next, n, metaSeen, data))
				return
			}
			metaSeen = true
		case c.Meta != nil:
			if metaSeen || next != n || len(c.Choices) != 0 || len(c.Meta.Tools) != 1 || c.Meta.Tools[0] != "lookup" || c.Meta.Source != "load" {
				fail("meta", fmt.Sprintf("stream %s: meta event after %d/%d events (seen before: %v): %.200s", sid, next, n, metaSeen, data))
				return
			}
			metaSeen = true
		case c.Seq != nil:
			if *c.Seq != next {
				fail("order", fmt.Sprintf("stream %s: seq %d where %d was due", sid, *c.Seq, next))
				return
			}
			next++
			events.Add(1)
			recordLatency(c.TS)
		default:
			fail("unknown", fmt.Sprintf("stream %s: %.200s", sid, data))
			return
		}
		data = data[:0]
	}
	if !done {
		fail("lost", fmt.Sprintf("stream %s ended after %d/%d events, final meta %v, no [DONE]", sid, next, n, metaSeen))
		return
	}
	streams.Add(1)
}

// ---- sampling -------------------------------------------------------------

type sample struct {
	at         time.Duration
	goroutines int
	heapInuse  uint64
	heapAlloc  uint64
	rss        uint64
	open       int64
	events     int64
}

func take(start time.Time) sample {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return sample{time.Since(start), runtime.NumGoroutine(), m.HeapInuse, m.HeapAlloc, vmRSS(), open.Load(), events.Load()}
}

// vmRSS reads VmRSS from /proc/self/status (0 where there is none).
func vmRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func mib(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func printSample(label string, s sample) {
	fmt.Printf("%-10s %8s %10d %10s %10s %9s %8d %10d\n", label, s.at.Truncate(time.Second), s.goroutines,
		mib(s.heapInuse), mib(s.heapAlloc), mib(s.rss), s.open, s.events)
}

// quiet collects garbage and returns memory to the OS before a sample.
func quiet() {
	runtime.GC()
	debug.FreeOSMemory()
}

// moduleGoroutines counts goroutines running llm_meta's code.
func moduleGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "llm_meta/caddymodule.") || strings.Contains(g, "llm_meta/translate.") {
			n++
		}
	}
	return n
}

// ---- setup ----------------------------------------------------------------

func raiseFDLimit(need uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	if lim.Cur < need {
		fmt.Fprintf(os.Stderr, "warning: open-file limit %d is below the ~%d this run needs\n", lim.Cur, need)
	}
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal("listen: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
	_ = caddy.Stop()
	os.Exit(2)
}

func startCaddy(upstreamAddr string) string {
	addr := freeAddr()
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"logging": map[string]any{"logs": map[string]any{"default": map[string]any{"level": "ERROR"}}},
		"apps": map[string]any{"http": map[string]any{
			"servers": map[string]any{"load": map[string]any{
				"listen":          []string{addr},
				"automatic_https": map[string]any{"disable": true},
				"routes": []any{map[string]any{"handle": []any{
					map[string]any{
						"handler":   "reverse_proxy",
						"upstreams": []any{map[string]any{"dial": upstreamAddr}},
						"transport": map[string]any{"protocol": "http", "keep_alive": map[string]any{
							"idle_timeout": int64(*flIdle),
						}},
					},
				}}},
			}},
		}},
	}
	if *flModule {
		routes := cfg["apps"].(map[string]any)["http"].(map[string]any)["servers"].(map[string]any)["load"].(map[string]any)["routes"].([]any)
		h := routes[0].(map[string]any)
		h["handle"] = append([]any{map[string]any{"handler": "llm_meta"}}, h["handle"].([]any)...)
	}
	raw, _ := json.Marshal(cfg)
	if err := caddy.Load(raw, true); err != nil {
		fatal("loading Caddy: %v", err)
	}
	return "http://" + addr + "/v1/chat/completions"
}

func main() {
	flag.Parse()
	if *flEventsMin < 2 || *flEventsMax < *flEventsMin || *flGapMax < *flGapMin || *flSettle <= *flIdle {
		fatal("bad flags: need 2 <= events-min <= events-max, gap-min <= gap-max, settle > idle")
	}
	dir, err := os.MkdirTemp("", "llm_meta_load")
	if err == nil {
		os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
		os.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
		defer os.RemoveAll(dir)
	}
	raiseFDLimit(uint64(*flStreams)*4 + 256)

	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fatal("listen: %v", err)
	}
	up := &http.Server{Handler: http.HandlerFunc(upstream), IdleTimeout: *flIdle, ReadHeaderTimeout: 10 * time.Second}
	go up.Serve(ul)
	url := startCaddy(ul.Addr().String())

	client := &http.Client{Transport: &http.Transport{
		DisableCompression:  true,
		MaxIdleConns:        *flStreams,
		MaxIdleConnsPerHost: *flStreams,
		IdleConnTimeout:     *flIdle,
	}}

	chain := "llm_meta + reverse_proxy"
	if !*flModule {
		chain = "reverse_proxy alone (comparison run)"
	}
	fmt.Printf("load through %s: %d streams for %v, %d–%d events each, %v–%v apart; GOMAXPROCS %d, %s\n",
		chain, *flStreams, *flDuration, *flEventsMin, *flEventsMax, *flGapMin, *flGapMax, runtime.GOMAXPROCS(0), runtime.Version())

	// Warm up (pools, first-use allocations), let idle connections expire,
	// then take the baseline.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream(context.Background(), client, url, int64(-1-i), rand.New(rand.NewPCG(uint64(i), 1)))
		}()
	}
	wg.Wait()
	if failures.Load() > 0 {
		report(nil)
		fatal("the warm-up streams failed")
	}
	streams.Store(0)
	events.Store(0)
	for i := range latency {
		latency[i].Store(0)
	}
	latMax.Store(0)
	client.CloseIdleConnections()
	time.Sleep(*flSettle)
	baseModule := moduleGoroutines()
	quiet()
	start := time.Now()
	base := take(start)

	fmt.Printf("\n%-10s %8s %10s %10s %10s %9s %8s %10s\n", "phase", "t", "goroutines", "HeapInuse", "HeapAlloc", "VmRSS", "open", "events")
	fmt.Printf("%-10s %8s %10s %10s %10s %9s %8s %10s\n", "", "", "", "MiB", "MiB", "MiB", "streams", "")
	printSample("baseline", base)

	// The load: each worker opens a stream, checks it, and opens the next
	// until the duration is over; streams in flight then finish.
	loadStart := time.Now()
	deadline := loadStart.Add(*flDuration)
	var nextID atomic.Int64
	for w := range *flStreams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(loadStart.UnixNano())))
			// Spread the first opens over a second.
			time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
			for time.Now().Before(deadline) {
				stream(context.Background(), client, url, nextID.Add(1), rng)
			}
		}()
	}
	peak := base
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(*flSample)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-t.C:
			}
			s := take(start)
			printSample("during", s)
			peak.goroutines = max(peak.goroutines, s.goroutines)
			peak.heapInuse = max(peak.heapInuse, s.heapInuse)
			peak.heapAlloc = max(peak.heapAlloc, s.heapAlloc)
			peak.rss = max(peak.rss, s.rss)
			peak.open = max(peak.open, s.open)
		}
	}()
	wg.Wait()
	loadTime := time.Since(loadStart)
	close(stopSampling)
	<-sampled
	peak.at, peak.events = loadTime, events.Load()
	printSample("peak", peak)

	// After: idle connections closed or expired, garbage collected.
	client.CloseIdleConnections()
	time.Sleep(*flSettle)
	afterModule := moduleGoroutines()
	quiet()
	after := take(start)
	printSample("after", after)

	ok := report(&runInfo{base, after, baseModule, afterModule, loadTime})
	_ = caddy.Stop()
	_ = up.Close()
	if !ok {
		os.Exit(1)
	}
}

type runInfo struct {
	base, after             sample
	baseModule, afterModule int
	loadTime                time.Duration
}

// report prints the totals and the verdict.
func report(ri *runInfo) bool {
	ok := true
	if ri != nil {
		ev := events.Load()
		fmt.Printf("\nstreams completed %d, content events %d (%.0f/s over %v)\n", streams.Load(), ev, float64(ev)/ri.loadTime.Seconds(), ri.loadTime.Truncate(time.Millisecond))
		fmt.Printf("event latency upstream write -> client read: p50 <= %s, p99 <= %s, p99.9 <= %s, max %s\n",
			usText(percentile(0.50)), usText(percentile(0.99)), usText(percentile(0.999)), usText(latMax.Load()))
		fmt.Printf("goroutines running llm_meta code: baseline %d, after %d\n", ri.baseModule, ri.afterModule)
		check := func(good bool, format string, args ...any) {
			mark := "ok  "
			if !good {
				mark, ok = "FAIL", false
			}
			fmt.Printf("%s "+format+"\n", append([]any{mark}, args...)...)
		}
		fmt.Println()
		what := "every event arrived in order, final meta event then [DONE]"
		if !*flModule {
			what = "every event arrived in order, then [DONE]"
		}
		check(failures.Load() == 0, "%s (%d failures)", what, failures.Load())
		check(streams.Load() > 0, "streams completed: %d", streams.Load())
		check(ri.afterModule == 0, "no goroutine runs llm_meta code after the load (%d)", ri.afterModule)
		check(ri.after.goroutines <= ri.base.goroutines+*flGorSlack, "goroutines back near baseline: %d -> %d (slack %d)", ri.base.goroutines, ri.after.goroutines, *flGorSlack)
		check(ri.after.heapInuse <= ri.base.heapInuse+uint64(*flHeapSlack)<<20, "HeapInuse back near baseline: %s -> %s MiB (slack %d MiB)", mib(ri.base.heapInuse), mib(ri.after.heapInuse), *flHeapSlack)
		check(ri.after.rss <= ri.base.rss+uint64(*flRSSSlack)<<20, "VmRSS back near baseline: %s -> %s MiB (slack %d MiB)", mib(ri.base.rss), mib(ri.after.rss), *flRSSSlack)
	}
	failMu.Lock()
	defer failMu.Unlock()
	for k, n := range failKinds {
		ok = false
		fmt.Printf("  failure %-8s x%d, first: %s\n", k, n, failFirst[k])
	}
	return ok
}

func usText(us int64) string {
	return (time.Duration(us) * time.Microsecond).String()
}
