package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// pinSets splits the CPUs this process may use into one for the Caddys
// (the last) and the rest for the driver; with fewer than two it refuses.
func TestPinSets(t *testing.T) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	caddy, load, err := pinSets()
	if all.Count() < 2 {
		if err == nil {
			t.Fatalf("pinSets on %d CPUs: no error", all.Count())
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if caddy.Count() != 1 || load.Count() != all.Count()-1 {
		t.Fatalf("caddy %s, load %s, of %s", cpuList(&caddy), cpuList(&load), cpuList(&all))
	}
	for c := 0; c < len(all)*64; c++ {
		if caddy.IsSet(c) && (load.IsSet(c) || !all.IsSet(c)) {
			t.Fatalf("Caddy CPU %d: also the driver's, or not ours (load %s, all %s)", c, cpuList(&load), cpuList(&all))
		}
		if load.IsSet(c) && !all.IsSet(c) {
			t.Fatalf("driver CPU %d is not ours (all %s)", c, cpuList(&all))
		}
		if caddy.IsSet(c) {
			for d := c + 1; d < len(all)*64; d++ {
				if all.IsSet(d) {
					t.Fatalf("Caddy CPU %d is not the last of %s", c, cpuList(&all))
				}
			}
		}
	}
}

func TestCPUList(t *testing.T) {
	var s unix.CPUSet
	if got := cpuList(&s); got != "" {
		t.Errorf("empty set: %q", got)
	}
	s.Set(0)
	s.Set(3)
	s.Set(65)
	if got := cpuList(&s); got != "0,3,65" {
		t.Errorf("got %q, want 0,3,65", got)
	}
}
