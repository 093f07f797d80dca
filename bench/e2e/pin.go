package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// With -pin the Caddy processes run on the last CPU and this program (the
// clients and the upstream) on the others. On a machine this small the
// load generator otherwise shares every core, and so every core's caches,
// with the Caddy it measures: between two requests the Caddy's code and
// data are pushed out by the client's and the upstream's, which a proxy
// in production, on cores of its own, does not suffer. Pinned, each
// Caddy has one core (GOMAXPROCS 1): where it uses all of it, the ratio is
// that of the two Caddys' CPU per request; where it does not, the driver
// on its one CPU sets the pace (streams, on two CPUs). Unpinned (the
// default, the targets' set-up) the ratio is that of the whole machine's.

// pinSets returns the CPUs for the Caddys and for this program: the last
// CPU this program may run on, and the rest.
func pinSets() (caddy, load unix.CPUSet, err error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return caddy, load, fmt.Errorf("-pin: %w", err)
	}
	if all.Count() < 2 {
		return caddy, load, fmt.Errorf("-pin needs two CPUs, this program may use %d", all.Count())
	}
	last := -1
	for c := 0; c < len(all)*64; c++ {
		if all.IsSet(c) {
			last = c
		}
	}
	load = all
	load.Clear(last)
	caddy.Set(last)
	return caddy, load, nil
}

// pinProcess sets the CPUs of every thread of process pid (affinity is per
// thread on Linux; threads made later inherit their maker's).
func pinProcess(pid int, set *unix.CPUSet) error {
	err := eachThread(pid, func(tid int) error {
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH { // ESRCH: the thread has ended
			return fmt.Errorf("thread %d: %w", tid, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("-pin: %w", err)
	}
	return nil
}

// pinSelf moves this program to its CPUs, with as many Ps as it has CPUs.
func pinSelf(load *unix.CPUSet) error {
	if err := pinProcess(os.Getpid(), load); err != nil {
		return err
	}
	runtime.GOMAXPROCS(load.Count())
	return nil
}

// The CPU sets of -pin.
var caddyCPUs, loadCPUs unix.CPUSet

// cpuList spells a CPU set as its numbers, comma-separated.
func cpuList(set *unix.CPUSet) string {
	var b []byte
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(c), 10)
		}
	}
	return string(b)
}
