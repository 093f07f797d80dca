package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unmarshalOpenClaw reads the openclaw block of llm_meta (SPEC 10):
//
//	openclaw [<gateway>] {
//	    gateway <url>
//	    token   <token>
//	    agent   <id>
//	    timeout <duration>
//	}
//
// The gateway may be given inline or in the block. The token is usually a
// placeholder such as {env.OPENCLAW_GATEWAY_TOKEN}, expanded per request.
func (h *Handler) unmarshalOpenClaw(d *caddyfile.Dispenser) error {
	if h.OpenClaw != nil {
		return d.Err("openclaw: given twice")
	}
	o := new(OpenClaw)
	if d.NextArg() {
		o.Gateway = d.Val()
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		key := d.Val()
		v, err := oneArg(d)
		if err != nil {
			return err
		}
		switch key {
		case "gateway":
			o.Gateway = v
		case "token":
			o.Token = v
		case "agent":
			o.Agent = v
		case "timeout":
			dur, err := caddy.ParseDuration(v)
			if err != nil {
				return d.Errf("openclaw timeout: %q is not a duration such as 2s", v)
			}
			if dur < 0 {
				return d.Errf("openclaw timeout: %q must not be negative", v)
			}
			o.Timeout = caddy.Duration(dur)
		default:
			return d.Errf("unrecognized openclaw subdirective '%s'", key)
		}
	}
	if o.Gateway == "" {
		return d.Err("openclaw: gateway is required (the base URL of the OpenClaw gateway, such as http://127.0.0.1:18789)")
	}
	h.OpenClaw = o
	return nil
}
