package main

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// upstream is the gateway stand-in, in this process: no pacing, every part
// of a stream written and flushed on its own. The request header
// X-Bench-Workload says which workload's reply to send (the module and
// reverse_proxy forward it as it is); X-Bench-Hold, how long to wait after
// the first part (the first mode's streams).
type upstream struct {
	loads []*workload
	// idleEvent is what an idle stream (X-Bench-Idle) sends before it
	// waits for the client to go away.
	idleEvent []byte
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	hdr := w.Header()
	if r.Header.Get("X-Bench-Idle") != "" {
		hdr["Content-Type"] = sseHeader["Content-Type"]
		w.WriteHeader(http.StatusOK)
		w.Write(u.idleEvent)
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		return
	}
	i, err := strconv.Atoi(r.Header.Get("X-Bench-Workload"))
	if err != nil || i < 0 || i >= len(u.loads) {
		http.Error(w, "no such workload", http.StatusBadRequest)
		return
	}
	wl := u.loads[i]
	for k, v := range wl.header {
		hdr[k] = v
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	hold, _ := time.ParseDuration(r.Header.Get("X-Bench-Hold"))
	for i, p := range wl.parts {
		if _, err := w.Write(p); err != nil {
			return
		}
		if wl.kind != kindJSON {
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if i == 0 && hold > 0 && !waitFor(r, min(hold, maxHold)) {
			return
		}
	}
}

// maxHold bounds the wait a request may ask for.
const maxHold = 10 * time.Second

// waitFor waits d, or until the client goes away (false).
func waitFor(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
