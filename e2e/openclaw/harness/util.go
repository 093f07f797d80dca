package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// runPorts prints n loopback ports that were free a moment ago, all
// different (they are held open together while chosen).
func runPorts(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: harness ports N")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n < 1 {
		return fmt.Errorf("ports: %q is not a count", args[0])
	}
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("ports: %w", err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	fmt.Println(strings.Join(ports, " "))
	return nil
}

// runWait waits until url answers (with 200 when -ok), or fails after
// -timeout; it prints how long it waited.
func runWait(args []string) error {
	fs := flag.NewFlagSet("wait", flag.ContinueOnError)
	url := fs.String("url", "", "what to poll (GET)")
	timeout := fs.Duration("timeout", 2*time.Minute, "longest wait")
	want200 := fs.Bool("ok", false, "wait for a 200, not just any answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	start := time.Now()
	client := &http.Client{Timeout: 5 * time.Second}
	for time.Since(start) < *timeout {
		resp, err := client.Get(*url)
		if err == nil {
			resp.Body.Close()
			if !*want200 || resp.StatusCode == http.StatusOK {
				fmt.Printf("%.1f\n", time.Since(start).Seconds())
				return nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("wait: %s did not answer within %v", *url, *timeout)
}
