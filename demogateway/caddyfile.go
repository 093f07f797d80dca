package demogateway

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("llm_meta_demo", parseCaddyfile)
	// Before respond: it answers like respond does, and it comes after
	// llm_meta (ordered after encode), which must wrap it to rewrite its
	// replies. No global order line is needed.
	httpcaddyfile.RegisterDirectiveOrder("llm_meta_demo", httpcaddyfile.Before, "respond")
}

// parseCaddyfile sets up the handler from Caddyfile tokens.
func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	llm_meta_demo [<matcher>] {
//	    pause <duration>
//	}
//
// pause is the time between two events of a streamed reply (default 40ms;
// 0 for none).
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "pause":
			if !d.NextArg() {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(d.Val())
			if err != nil {
				return d.Errf("bad pause %q: %v", d.Val(), err)
			}
			if dur < 0 {
				return d.Errf("pause must not be negative: %s", d.Val())
			}
			if d.NextArg() {
				return d.ArgErr()
			}
			p := caddy.Duration(dur)
			h.Pause = &p
		default:
			return d.Errf("unrecognized subdirective '%s'", d.Val())
		}
	}
	return nil
}
