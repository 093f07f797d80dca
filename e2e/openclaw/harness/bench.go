package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// runBench measures, over a number of agent turns that each run the ls
// tool, OpenClaw's own reply time and the time of the module's
// sessions_history look-up made right after each reply (the POST and
// translate's reading of the answer), in one session whose transcript grows
// as a real chat's does. With -caddy and -caddy-off it also times the same
// turns through Caddy with the openclaw option on and off.
func runBench(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	gateway := fs.String("openclaw", "", "the OpenClaw gateway")
	token := fs.String("token", "", "the gateway token")
	turns := fs.Int("turns", 50, "agent turns to time")
	caddyOn := fs.String("caddy", "", "a Caddy site with the openclaw option (optional)")
	caddyOff := fs.String("caddy-off", "", "the same site without it (optional)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gateway == "" || *token == "" || *turns < 2 {
		return errors.New("bench needs -openclaw, -token and -turns of 2 or more")
	}
	type series struct {
		name, url, key, body string
		headers              []string
		times                []time.Duration
	}
	nonce := time.Now().UnixNano() % 1e9
	mk := func(name, url string, headers ...string) *series {
		user := fmt.Sprintf("bench-%s-%d", strings.Fields(name)[0], nonce)
		return &series{name: name, url: url, key: "agent:main:openai-user:" + user, headers: headers,
			body: `{"model":"openclaw","user":"` + user + `","messages":[{"role":"user","content":"` + useTool + `"}]}`}
	}
	// Each series has a session of its own, and the series take turns, so
	// that the growth of a session and the load of the machine weigh on all
	// of them alike.
	direct := mk("direct OpenClaw reply (JSON, agent runs ls)", *gateway, "Authorization", "Bearer "+*token)
	all := []*series{direct}
	if *caddyOn != "" {
		all = append(all, mk("on: through Caddy, openclaw on", *caddyOn))
	}
	if *caddyOff != "" {
		all = append(all, mk("off: through Caddy, openclaw off", *caddyOff))
	}
	var lookupT []time.Duration
	for i := range *turns {
		for _, s := range all {
			r, err := post(s.url+"/v1/chat/completions", s.body, s.headers...)
			if err != nil || r.status != 200 {
				return fmt.Errorf("%s, turn %d: status %d, %v", s.name, i, r.status, err)
			}
			s.times = append(s.times, r.elapsed)
			if s == direct {
				tools, _, took, err := history(*gateway, *token, s.key, r.id)
				if err != nil || !contains(tools, "ls") {
					return fmt.Errorf("turn %d: look-up gave %q, %v", i, tools, err)
				}
				lookupT = append(lookupT, took)
			}
		}
	}
	fmt.Printf("openclaw bench: %d turns per series, each series one session (its transcript growing to the look-up's 100 messages)\n", *turns)
	report(direct.name, direct.times)
	report("sessions_history look-up after it", lookupT)
	for _, s := range all[1:] {
		report(s.name, s.times)
	}
	return nil
}

// report prints the median and p99 (nearest rank) of ds.
func report(name string, ds []time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	p := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	fmt.Printf("  %-46s median %8.2f ms   p99 %8.2f ms   (n=%d)\n", name, ms(p(0.5)), ms(p(0.99)), len(s))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
