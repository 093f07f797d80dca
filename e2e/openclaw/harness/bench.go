package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
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
	user := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1e9)
	key := "agent:main:openai-user:" + user
	body := `{"model":"openclaw","user":"` + user + `","messages":[{"role":"user","content":"` + useTool + `"}]}`
	var replyT, lookupT []time.Duration
	for i := range *turns {
		r, err := post(*gateway+"/v1/chat/completions", body, "Authorization", "Bearer "+*token)
		if err != nil || r.status != 200 {
			return fmt.Errorf("turn %d: status %d, %v", i, r.status, err)
		}
		tools, _, took, err := history(*gateway, *token, key, r.id)
		if err != nil || !contains(tools, "ls") {
			return fmt.Errorf("turn %d: look-up gave %q, %v", i, tools, err)
		}
		replyT = append(replyT, r.elapsed)
		lookupT = append(lookupT, took)
	}
	fmt.Printf("openclaw bench: %d turns, one session (its transcript growing to the look-up's 100 messages)\n", *turns)
	report("OpenClaw reply (JSON, agent runs ls)", replyT)
	report("sessions_history look-up after it", lookupT)
	for _, site := range []struct{ name, url string }{{"through Caddy, openclaw on", *caddyOn}, {"through Caddy, openclaw off", *caddyOff}} {
		if site.url == "" {
			continue
		}
		var ts []time.Duration
		for i := range *turns {
			r, err := post(site.url+"/v1/chat/completions", body)
			if err != nil || r.status != 200 {
				return fmt.Errorf("%s, turn %d: status %d, %v", site.name, i, r.status, err)
			}
			ts = append(ts, r.elapsed)
		}
		report(site.name, ts)
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
	fmt.Printf("  %-40s median %8.2f ms   p99 %8.2f ms   (n=%d)\n", name, ms(p(0.5)), ms(p(0.99)), len(s))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
