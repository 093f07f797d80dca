// Command harness is the Go side of the real-OpenClaw end-to-end test
// (e2e/openclaw/run.sh): a mock model for OpenClaw's agent, a slow proxy for
// the look-up, and the checks.
//
//	harness mock  -addr 127.0.0.1:P [-slow-addr 127.0.0.1:S -slow-target http://127.0.0.1:O -slow-delay 5s]
//	harness check -caddy http://127.0.0.1:C ... (see check.go)
//	harness bench -openclaw http://127.0.0.1:O -token T -turns 50
//	harness ports N                  # N free loopback ports
//	harness wait -url U [-ok]        # until U answers
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: harness mock|check|bench|ports|wait [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "mock":
		err = runMock(os.Args[2:])
	case "check":
		err = runCheck(os.Args[2:])
	case "bench":
		err = runBench(os.Args[2:])
	case "ports":
		err = runPorts(os.Args[2:])
	case "wait":
		err = runWait(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(1)
	}
}
