// Command segments splits the time each request spends inside a Caddy into
// the legs of its way through, from runtime execution traces, so that what
// llm_meta adds can be placed on a machine whose load makes end-to-end
// latencies move by more than that (BENCHMARKS.md, "llm_meta's own share
// on JSON"). It reads the traces bench/e2e writes (-cpuprofile DIR -trace:
// DIR/plain.trace, DIR/llm_meta.trace) and prints, for each, percentiles
// over the requests of:
//
//	request side   the request read from the client → handed to the transport's write loop
//	upstream leg   handed to the write loop → the reply's body read to its end
//	reply side     the transport handing the connection back → the reply written to the client
//	server total   the request read → the reply written
//
// Each leg is taken on the goroutine that serves the client's connection
// (net/http's conn.serve), from its own state transitions and system
// calls, so another process's load lengthens a leg only while that
// goroutine is running or runnable; the low percentiles are the work
// itself. It is a module of its own so that the repository's module does
// not depend on golang.org/x/exp.
//
//	go run ./bench/e2e -mode json -proto chat -tools no -conc 1 -rounds 3 -duration 1s -cpuprofile prof -trace
//	(cd bench/segments && go run . ../../prof/plain.trace ../../prof/llm_meta.trace)
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: segments TRACE...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		l, err := read(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "segments:", err)
			os.Exit(1)
		}
		fmt.Printf("%s: %d requests\n", filepath.Base(path), len(l.total))
		fmt.Printf("  %-14s %8s %8s %8s %8s  µs\n", "", "p10", "p25", "p50", "p75")
		for _, s := range []struct {
			name string
			v    []float64
		}{{"request side", l.request}, {"upstream leg", l.upstream}, {"reply side", l.reply}, {"server total", l.total}} {
			fmt.Printf("  %-14s %8.1f %8.1f %8.1f %8.1f\n", s.name, pct(s.v, .10), pct(s.v, .25), pct(s.v, .50), pct(s.v, .75))
		}
	}
}

// legs holds each request's legs, µs.
type legs struct{ request, upstream, reply, total []float64 }

// conn is where the request a connection's goroutine serves has got to.
type conn struct {
	phase                    int // 0 between requests, 1 request read, 2 handed upstream, 3 reply body read
	read, handed, handedBack trace.Time
}

// read goes through one trace's events once.
func read(path string) (*legs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var l legs
	conns := map[trace.GoID]*conn{}
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return &l, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		from, to := st.Goroutine()
		g := st.Resource.Goroutine()
		stack := frames(st.Stack)
		switch {
		case from == trace.GoRunning && to == trace.GoSyscall && strings.Contains(stack, "syscall.read") &&
			strings.Contains(stack, "Peek<net/http.(*conn).serve"):
			// Reading the next request: the last such read before it is
			// handed on is the one that had its bytes.
			c := conns[g]
			if c == nil {
				c = &conn{}
				conns[g] = c
			}
			if c.phase <= 1 {
				c.phase, c.read = 1, ev.Time()
			}
		case to == trace.GoRunnable && strings.HasPrefix(frames(ev.Stack()), "runtime.chansend1<net/http.(*persistConn).roundTrip"):
			// The serving goroutine wakes the transport's write loop.
			if c := conns[ev.Goroutine()]; c != nil && c.phase == 1 {
				c.phase, c.handed = 2, ev.Time()
			}
		case from == trace.GoRunning && to == trace.GoWaiting && strings.Contains(stack, "bodyEOFSignal).condfn"):
			// The reply's body read to its end: the serving goroutine waits
			// for the transport to take the upstream connection back.
			if c := conns[g]; c != nil && c.phase == 2 {
				l.upstream = append(l.upstream, us(ev.Time()-c.handed))
				l.request = append(l.request, us(c.handed-c.read))
				c.phase = 3
			}
		case from == trace.GoWaiting && to == trace.GoRunnable:
			if c := conns[g]; c != nil && c.phase == 3 {
				c.handedBack = ev.Time()
			}
		case from == trace.GoRunning && to == trace.GoSyscall && strings.Contains(stack, "syscall.write") &&
			strings.Contains(stack, "checkConnErrorWriter"):
			// The reply written to the client.
			if c := conns[g]; c != nil && c.phase == 3 {
				l.reply = append(l.reply, us(ev.Time()-c.handedBack))
				l.total = append(l.total, us(ev.Time()-c.read))
				c.phase = 0
			}
		}
	}
}

func frames(s trace.Stack) string {
	var b strings.Builder
	for f := range s.Frames() {
		b.WriteString(f.Func)
		b.WriteByte('<')
	}
	return b.String()
}

func us(d trace.Time) float64 { return float64(d) / 1e3 }

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}
