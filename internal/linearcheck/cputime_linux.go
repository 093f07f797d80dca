//go:build linux

package linearcheck

import (
	"runtime"
	"syscall"
	"unsafe"
)

// clockThreadCPUTime is clock_gettime(2)'s CLOCK_THREAD_CPUTIME_ID: the
// CPU time of the calling thread, to the nanosecond. getrusage(2)'s
// RUSAGE_THREAD tells the same time in steps of about 100 µs.
const clockThreadCPUTime = 3

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
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		// clock_gettime(2) fails only on a bad clock or address.
		panic("linearcheck: clock_gettime(CLOCK_THREAD_CPUTIME_ID): " + errno.Error())
	}
	return ts.Nano()
}
