package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The idle mode: the memory of -idle streams held open after their first
// event, through a fresh Caddy of each config.

type idleResult struct {
	Streams   int     `json:"streams"`
	PlainMiB  float64 `json:"plain_rss_delta_mib"`
	ModuleMiB float64 `json:"llm_meta_rss_delta_mib"`
	PlainRSS  float64 `json:"plain_rss_mib"`
	ModuleRSS float64 `json:"llm_meta_rss_mib"`
	AddedMiB  float64 `json:"added_rss_delta_mib"` // llm_meta's growth minus plain's
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// idleRSS opens n streams through a fresh Caddy that stay open after their
// first event and reports the RSS before and with them.
// wl is the chat stream workload, whose first event the idle streams get.
func idleRSS(name, up string, module bool, n int, wl *workload) (before, with int64, err error) {
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
		side := plainSide
		if module {
			side = moduleSide
		}
		if _, err := exchange(c, p.url, wl, side, buf, nil, &s); err != nil {
			return 0, 0, fmt.Errorf("%s: warm-up: %v", name, err)
		}
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
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url+wl.proto.path, bytes.NewReader(wl.body))
			req.Header["Content-Type"] = jsonContentType
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

// runIdle measures both configs and prints their RSS.
func runIdle(up string, n int, wl *workload) (*idleResult, error) {
	fmt.Printf("\nidle: %d streams held open after their first event, fresh Caddy per config\n", n)
	pb, pw, err := idleRSS("plain", up, false, n, wl)
	if err != nil {
		return nil, err
	}
	mb, mw, err := idleRSS("llm_meta", up, true, n, wl)
	if err != nil {
		return nil, err
	}
	fmt.Printf("  %-36s %12s %12s %10s\n", "", "plain", "llm_meta", "added")
	fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "RSS before (MiB)", mib(pb), mib(mb), mib(mb-pb))
	fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", fmt.Sprintf("RSS with %d streams (MiB)", n), mib(pw), mib(mw), mib(mw-pw))
	fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "growth (MiB)", mib(pw-pb), mib(mw-mb), mib((mw-mb)-(pw-pb)))
	fmt.Printf("  %-36s %12.1f %12.1f %10.1f\n", "growth per stream (KiB)", float64(pw-pb)/1024/float64(n), float64(mw-mb)/1024/float64(n), float64((mw-mb)-(pw-pb))/1024/float64(n))
	return &idleResult{Streams: n, PlainMiB: mib(pw - pb), ModuleMiB: mib(mw - mb), PlainRSS: mib(pw), ModuleRSS: mib(mw), AddedMiB: mib((mw - mb) - (pw - pb))}, nil
}
