package main

import (
	"errors"
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// runMock serves the mock model and, when asked, the slow proxy until killed.
func runMock(args []string) error {
	fs := flag.NewFlagSet("mock", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address of the mock model")
	slowAddr := fs.String("slow-addr", "", "address of the slow proxy (none when empty)")
	slowTarget := fs.String("slow-target", "", "the OpenClaw gateway the slow proxy forwards to")
	slowDelay := fs.Duration("slow-delay", 5*time.Second, "how long the slow proxy holds each request before forwarding it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	errc := make(chan error, 2)
	go func() { errc <- serve(*addr, new(mockModel)) }()
	if *slowAddr != "" {
		target, err := url.Parse(*slowTarget)
		if err != nil || target.Host == "" {
			return errors.New("slow proxy: -slow-target must be the gateway's URL")
		}
		go func() { errc <- serve(*slowAddr, slowProxy(target, *slowDelay)) }()
	}
	return <-errc
}

// slowProxy forwards to target after delay: an OpenClaw gateway whose
// sessions_history look-up takes longer than the module waits. A client
// that gives up first ends the wait.
func slowProxy(target *url.URL, delay time.Duration) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			log.Printf("slow proxy: %s %s given up by the client after %v", r.Method, r.URL.Path, time.Since(start).Round(time.Millisecond))
			return
		}
		rp.ServeHTTP(w, r)
	})
}

func serve(addr string, h http.Handler) error {
	log.Printf("listening on %s", addr)
	return (&http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}).ListenAndServe()
}
