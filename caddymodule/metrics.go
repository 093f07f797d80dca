package caddymodule

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llm-meta/llm_meta/httpmeta"
	"github.com/llm-meta/llm_meta/translate"
)

// The collectors are made once per process and registered with every
// config's registry (each reload makes a new one), as Caddy's own
// reverse_proxy metrics are. Labels are low-cardinality: mode, format,
// reason and direction take a handful of fixed values; none takes a value
// a client chooses (no model label).
var (
	metricsOnce sync.Once
	metrics     struct {
		requests      *prometheus.CounterVec
		events        *prometheus.CounterVec
		finalMeta     prometheus.Counter
		fallbacks     *prometheus.CounterVec
		runOnceBytes  prometheus.Histogram
		inputTokens   prometheus.Counter // tokens_total{direction="input"}
		outputTokens  prometheus.Counter // tokens_total{direction="output"}
		cost          prometheus.Counter
		interrupted   prometheus.Counter
		allCollectors []prometheus.Collector
	}
)

// The counters of each label set, looked up in their vectors once and kept:
// WithLabelValues hashes the labels and takes a lock on every call. Formats
// that share a name share the counter.
var (
	requestCounters [httpmeta.NumModes][translate.NumFormats]atomic.Pointer[prometheus.Counter]
	eventCounters   [translate.NumFormats]atomic.Pointer[prometheus.Counter]
)

// requestCounter is the requests counter of mode and format.
func requestCounter(m httpmeta.Mode, f translate.Format) prometheus.Counter {
	p := &requestCounters[m][f]
	if c := p.Load(); c != nil {
		return *c
	}
	c := metrics.requests.WithLabelValues(m.String(), f.String())
	p.Store(&c)
	return c
}

// eventCounter is the events counter of format.
func eventCounter(f translate.Format) prometheus.Counter {
	p := &eventCounters[f]
	if c := p.Load(); c != nil {
		return *c
	}
	c := metrics.events.WithLabelValues(f.String())
	p.Store(&c)
	return c
}

func initMetrics() {
	const ns, sub = "caddy", "llm_meta"
	metrics.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "requests_total",
		Help: "POST requests handled, by what the module did (mode) and the upstream reply's format.",
	}, []string{"mode", "format"})
	metrics.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "events_total",
		Help: "Events or data-stream parts read from upstream streams, by format.",
	}, []string{"format"})
	metrics.finalMeta = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "final_meta_events_total",
		Help: "Final meta events written into streams.",
	})
	metrics.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "fallbacks_total",
		Help: "Times the module forwarded something untouched or skipped it instead of rewriting it, by reason.",
	}, []string{"reason"})
	metrics.runOnceBytes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: ns, Subsystem: sub, Name: "run_once_reply_bytes",
		Help:    "Size of run-once answers written, in bytes.",
		Buckets: prometheus.ExponentialBuckets(64, 4, 10),
	})
	tokens := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "tokens_total",
		Help: "Tokens the replies reported in their usage, by direction (input or output).",
	}, []string{"direction"})
	metrics.inputTokens = tokens.WithLabelValues("input")
	metrics.outputTokens = tokens.WithLabelValues("output")
	metrics.cost = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "cost_usd_total",
		Help: "Cost of the replies in US dollars, as reported upstream or computed from the prices table.",
	})
	metrics.interrupted = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "interrupted_total",
		Help: "Streams the upstream ended cleanly before their protocol's end (SPEC 11.1).",
	})
	metrics.allCollectors = []prometheus.Collector{metrics.requests, metrics.events, metrics.finalMeta, metrics.fallbacks, metrics.runOnceBytes, tokens, metrics.cost, metrics.interrupted}
}

// registerMetrics adds the collectors to this config's registry.
func registerMetrics(ctx caddy.Context) error {
	metricsOnce.Do(initMetrics)
	reg := ctx.GetMetricsRegistry()
	if reg == nil {
		return nil
	}
	for _, c := range metrics.allCollectors {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				return err
			}
		}
	}
	return nil
}
