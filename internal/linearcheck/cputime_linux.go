//go:build linux

package linearcheck

import (
	"runtime"
	"syscall"
)

// rusageThread is getrusage(2)'s RUSAGE_THREAD: the calling thread alone.
const rusageThread = 1

// clockName says in the check's log what its costs are.
const clockName = "thread CPU"

// startClock pins the calling goroutine to its thread and returns a clock
// of the CPU time that thread spends, user and system, and a stop that
// unpins it. CPU time leaves out the time the thread waits while other
// processes run, which is what wall time gains on a loaded machine; the
// module's work runs on the caller's goroutine alone (it starts none), so
// the thread's time is that work's, with the GC assists it pays for.
func startClock() (now func() int64, stop func()) {
	runtime.LockOSThread()
	return threadCPU, runtime.UnlockOSThread
}

// threadCPU returns the CPU time the calling thread has used, in ns.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		// getrusage(2) fails only on a bad argument or address.
		panic("linearcheck: getrusage(RUSAGE_THREAD): " + err.Error())
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
