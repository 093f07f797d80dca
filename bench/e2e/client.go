package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The load generator: workers looping on requests of one workload to one
// Caddy for a window.

func newClient(conc int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DisableCompression:  true,
		MaxIdleConns:        conc + 64,
		MaxIdleConnsPerHost: conc + 64,
		IdleConnTimeout:     time.Minute,
		ForceAttemptHTTP2:   false,
	}}
}

var jsonContentType = []string{"application/json"}

// exchange makes one request of wl and reads the reply to its end, as the
// client of side: the time to the first event and the gaps between events
// go to s (streams), or the latency (JSON); every byte read also goes to
// capture when it is not nil. It returns the events read (JSON: 1).
func exchange(c *http.Client, url string, wl *workload, side int, buf []byte, capture io.Writer, s *samples) (int, error) {
	start := time.Now()
	req, err := http.NewRequest(http.MethodPost, url+wl.proto.path, bytes.NewReader(wl.body))
	if err != nil {
		return 0, err
	}
	req.Header["Content-Type"] = jsonContentType
	req.Header["X-Bench-Workload"] = wl.id
	if wl.hold != nil {
		req.Header["X-Bench-Hold"] = wl.hold
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if capture != nil {
		body = io.TeeReader(body, capture)
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, body)
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	if wl.kind == kindJSON {
		n, err := io.CopyBuffer(io.Discard, body, buf)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, fmt.Errorf("empty reply")
		}
		s.lat = append(s.lat, time.Since(start))
		return 1, nil
	}
	events := 0
	var last time.Time
	err = readEvents(body, wl.lines(side), buf, func(now time.Time) {
		events++
		if events == 1 {
			s.ttfe = append(s.ttfe, now.Sub(start))
		} else {
			s.gaps = append(s.gaps, now.Sub(last))
		}
		last = now
	})
	return events, err
}

// readEvents reads r to its end and calls event, with the time of the
// read, for each complete event: an SSE event ends at a blank line (these
// streams use LF only), a data-stream part (lines) at its LF.
func readEvents(r io.Reader, lines bool, buf []byte, event func(time.Time)) error {
	prevLF := false
	for {
		n, err := r.Read(buf)
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
				if lines || (i > 0 && p[i-1] == '\n') || (i == 0 && prevLF) {
					event(now)
				}
				prevLF = i == len(p)-1
				i++
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// window is what one config did in one measurement window.
type window struct {
	ok, errs   int64
	events     int64 // upstream events of the completed streams
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

// drive runs conc workers making requests of wl to one Caddy (side) for d.
// A request counts only when the client read exactly the events the
// self-check found.
func drive(p *caddyProc, c *http.Client, wl *workload, side, conc int, d time.Duration) window {
	var wg sync.WaitGroup
	all := make([]samples, conc)
	m0, okm := p.memStats()
	cpu0 := p.cpu()
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(s *samples, delay time.Duration) {
			defer wg.Done()
			time.Sleep(delay)
			buf := make([]byte, 32<<10)
			for time.Now().Before(deadline) {
				n, err := exchange(c, p.url, wl, side, buf, nil, s)
				switch {
				case err != nil:
					s.err("%s via %s: %v", wl.name(), p.name, err)
				case n != wl.want[side]:
					s.err("%s via %s: %d events, want %d", wl.name(), p.name, n, wl.want[side])
				default:
					s.ok++
					s.events += wl.perStream
				}
			}
		}(&all[w], time.Duration(w)*wl.stagger)
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
