package caddymodule

import (
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"
	"github.com/llm-meta/llm_meta/translate"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("llm_meta", parseCaddyfile)
	// Right after encode: encode compresses what we write, and we wrap
	// handle, route, respond and reverse_proxy alike.
	httpcaddyfile.RegisterDirectiveOrder("llm_meta", httpcaddyfile.After, "encode")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	llm_meta [<matcher>] {
//	    chat_path         <path>
//	    run_once_path     <path>|off
//	    edge_path         <path>|off
//	    default_model     <model>
//	    max_prompt_chars  <n>
//	    max_request_bytes <size>
//	    max_buffer_bytes  <size>
//	    max_event_bytes   <size>
//	    max_meta_bytes    <size>
//	    final_meta        on|off
//	    meta_event        chunk|bare
//	    hustle_summary    on|off
//	    convert_streams   on|off
//	    structured_output {
//	        models      <glob...>
//	        instruction <text>
//	    }
//	    stream_usage      on|off
//	    timing            on|off
//	    mark_interrupted  on|off
//	    tool_arguments    on|off
//	    prices {
//	        <model glob> <input> <output> [<cached input>]   # USD per 1M tokens
//	    }
//	    openclaw [<gateway>] {
//	        gateway <url>
//	        token   <token>
//	        agent   <id>
//	        timeout <duration>
//	    }
//	}
//
// Sizes are in Caddy's usual notation (16MiB, 512KB, 1048576). on|off also
// accepts true|false.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		key := d.Val()
		switch key {
		case "chat_path", "default_model":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			if key == "chat_path" {
				h.ChatPath = v
			} else {
				h.DefaultModel = v
			}
		case "run_once_path", "edge_path":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			if v == "off" {
				v = ""
			}
			if key == "run_once_path" {
				h.RunOncePath = &v
			} else {
				h.EdgePath = &v
			}
		case "max_prompt_chars":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return d.Errf("max_prompt_chars: %q is not a whole number of characters (0 is off)", v)
			}
			h.MaxPromptChars = n
		case "max_request_bytes", "max_buffer_bytes", "max_event_bytes", "max_meta_bytes":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			n, err := humanize.ParseBytes(v)
			if err != nil || n == 0 || n > 1<<40 {
				return d.Errf("%s: %q is not a size such as 16MiB", key, v)
			}
			switch key {
			case "max_request_bytes":
				h.MaxRequestBytes = int64(n)
			case "max_buffer_bytes":
				h.MaxBufferBytes = int64(n)
			case "max_meta_bytes":
				h.MaxMetaBytes = int64(n)
			default:
				h.MaxEventBytes = int64(n)
			}
		case "final_meta", "hustle_summary", "convert_streams", "stream_usage", "timing", "mark_interrupted", "tool_arguments":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			b, ok := parseSwitch(v)
			if !ok {
				return d.Errf("%s: %q must be on or off", key, v)
			}
			switch key {
			case "final_meta":
				h.FinalMeta = &b
			case "hustle_summary":
				h.HustleSummary = &b
			case "stream_usage":
				h.StreamUsage = &b
			case "timing":
				h.Timing = b
			case "mark_interrupted":
				h.MarkInterrupted = b
			case "tool_arguments":
				h.ToolArguments = b
			default:
				h.ConvertStreams = &b
			}
		case "meta_event":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			if v != MetaEventChunk && v != MetaEventBare {
				return d.Errf("meta_event: %q must be chunk or bare", v)
			}
			h.MetaEvent = v
		case "structured_output":
			if err := h.unmarshalStructured(d); err != nil {
				return err
			}
		case "prices":
			if err := h.unmarshalPrices(d); err != nil {
				return err
			}
		case "openclaw":
			if err := h.unmarshalOpenClaw(d); err != nil {
				return err
			}
		default:
			return d.Errf("unrecognized llm_meta subdirective '%s'", key)
		}
	}
	return nil
}

func (h *Handler) unmarshalStructured(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	if h.StructuredOutput == nil {
		h.StructuredOutput = new(StructuredOutput)
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "models":
			models := d.RemainingArgs()
			if len(models) == 0 {
				return d.ArgErr()
			}
			h.StructuredOutput.Models = append(h.StructuredOutput.Models, models...)
		case "instruction":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			h.StructuredOutput.Instruction = v
		default:
			return d.Errf("unrecognized structured_output subdirective '%s'", d.Val())
		}
	}
	return nil
}

// unmarshalPrices reads the prices block: one row a line, a model glob
// then the input, output and (optionally) cached input prices in US
// dollars per million tokens.
func (h *Handler) unmarshalPrices(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		args := append([]string{d.Val()}, d.RemainingArgs()...)
		if len(args) != 3 && len(args) != 4 {
			return d.Errf("prices: %q: want <model glob> <input> <output> [<cached input>]", strings.Join(args, " "))
		}
		var usd [3]float64
		for i, a := range args[1:] {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil || f < 0 {
				return d.Errf("prices: %s: %q is not a price in US dollars per million tokens", args[0], a)
			}
			usd[i] = f
		}
		p := translate.Price{Model: args[0], Input: usd[0], Output: usd[1]}
		if len(args) == 4 {
			p.CachedInput = &usd[2]
		}
		h.Prices = append(h.Prices, p)
	}
	return nil
}

// oneArg reads exactly one argument for the current subdirective.
func oneArg(d *caddyfile.Dispenser) (string, error) {
	if !d.NextArg() {
		return "", d.ArgErr()
	}
	v := d.Val()
	if d.NextArg() {
		return "", d.ArgErr()
	}
	return v, nil
}

func parseSwitch(v string) (bool, bool) {
	switch v {
	case "on", "true":
		return true, true
	case "off", "false":
		return false, true
	}
	return false, false
}
