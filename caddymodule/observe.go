package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2"

	"github.com/llm-meta/llm_meta/httpmeta"
	"github.com/llm-meta/llm_meta/translate"
)

// caddyObserver gives Caddy the handler's placeholders and the module's
// metrics (httpmeta.Observer).
type caddyObserver struct{}

// Started makes the request's replacer ask the exchange's view for the
// module's placeholders: the access log reads them after the handlers
// returned, when only the view is left. Caddy's own providers come first;
// ours is the last asked, so other look-ups do not pass through it.
func (caddyObserver) Started(r *http.Request, x *httpmeta.Exchange) {
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Map(placeholders{x.View()}.value)
	}
}

func (caddyObserver) Fallback(reason string) {
	if metrics.fallbacks != nil {
		metrics.fallbacks.WithLabelValues(reason).Inc()
	}
}

func (caddyObserver) RunOnceAnswered(n int) {
	if metrics.runOnceBytes != nil {
		metrics.runOnceBytes.Observe(float64(n))
	}
}

// Done counts the reply.
func (caddyObserver) Done(x *httpmeta.Exchange) {
	if metrics.requests == nil {
		return
	}
	format, stats, rep := x.Format(), x.Stats(), x.Reply()
	requestCounter(x.Mode(), format).Inc()
	if stats.Events > 0 {
		eventCounter(format).Add(float64(stats.Events))
	}
	if stats.FinalMeta > 0 {
		metrics.finalMeta.Add(float64(stats.FinalMeta))
	}
	if rep.Usage.Known() {
		metrics.inputTokens.Add(float64(rep.Usage.Input))
		metrics.outputTokens.Add(float64(rep.Usage.Output))
	}
	if rep.HasCost {
		metrics.cost.Add(rep.Cost)
	}
	if rep.Interrupted {
		metrics.interrupted.Inc()
	}
}

// The placeholders the module answers (SPEC 8).
const (
	phMode  = "http.llm_meta.mode"
	phFmt   = "http.llm_meta.format"
	phTools = "http.llm_meta.tools_used"
	phIn    = "http.llm_meta.input_tokens"
	phOut   = "http.llm_meta.output_tokens"
	phCost  = "http.llm_meta.cost_usd"
	phCut   = "http.llm_meta.interrupted"
	phModel = "http.llm_meta.model_served"
)

// placeholders answers the module's placeholders from the state of the
// reply when they are read: by `header` as the status goes downstream (the
// values of a buffered reply are known by then), by log fields once the
// reply is done. Nothing is built for a request whose placeholders nobody
// reads.
type placeholders struct{ v *httpmeta.View }

func (p placeholders) value(key string) (any, bool) {
	switch key {
	case phMode:
		return modeNames[p.v.Mode()], true
	case phFmt:
		return formatNames[p.v.Format()], true
	case phTools:
		return p.v.Tools(), true
	case phCost:
		// Empty when unknown (SPEC 9.4).
		if usd, ok := p.v.Cost(); ok {
			return strconv.FormatFloat(usd, 'f', -1, 64), true
		}
		return "", true
	case phCut:
		// "true" or empty (SPEC 11.1).
		if p.v.Interrupted() {
			return "true", true
		}
		return "", true
	case phModel:
		// The reply's model whenever it named one (SPEC 11.2), cleaned
		// as tool names are (SPEC 8.1).
		return translate.CleanHeaderValue(p.v.ModelServed()), true
	case phIn, phOut:
		u := p.v.Usage()
		switch {
		case !u.Known():
			return "", true
		case key == phIn:
			return u.Input, true
		}
		return u.Output, true
	}
	return nil, false
}

// The names of modes and formats as interface values, boxed once: boxing a
// string on each read would allocate.
var (
	modeNames   [httpmeta.NumModes]any
	formatNames [translate.NumFormats]any
)

func init() {
	for m := range modeNames {
		modeNames[m] = httpmeta.Mode(m).String()
	}
	for f := range formatNames {
		formatNames[f] = translate.Format(f).String()
	}
}
