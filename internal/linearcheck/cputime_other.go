//go:build !linux

package linearcheck

import "time"

// clockName says in the check's log what its costs are.
const clockName = "wall"

// startClock returns a wall clock where the thread's CPU time is not read
// (cputime_linux.go): waits while other processes run count in it, which
// only the best of the rounds leaves out.
func startClock() (now func() int64, stop func()) {
	start := time.Now()
	return func() int64 { return int64(time.Since(start)) }, func() {}
}
