// Package httpmeta is llm_meta as net/http middleware: the request side
// (SPEC 2, 3, 6.2, 6.3) and a response writer that runs package translate
// over the reply as it passes (SPEC 4 to 6, 8.1, 9, 10). It knows nothing
// of Caddy: package caddymodule configures it from a Caddyfile or JSON and
// hands it Caddy's next handler, and Wrap puts it in front of any
// http.Handler (such as httputil.ReverseProxy). It never switches on a
// protocol either: translate recognises the reply and reads it into one
// record, translate.Reply.
package httpmeta

import (
	"net/http"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llm-meta/llm_meta/openclaw"
	"github.com/llm-meta/llm_meta/translate"
)

// Defaults of SPEC 1.
const (
	DefaultChatPath        = "/v1/chat/completions"
	DefaultRunOncePath     = "/v1/run_once"
	DefaultEdgePath        = "/functions/v1/jarvis"
	DefaultMaxRequestBytes = 16 << 20
	DefaultMaxBufferBytes  = 16 << 20
	DefaultMaxEventBytes   = 1 << 20
	DefaultMaxMetaBytes    = translate.DefaultMaxMetaBytes
)

// Config is what the handler does, complete: every field is used as it is
// (DefaultConfig gives SPEC 1's defaults).
type Config struct {
	ChatPath     string // upstream path of requests made from the endpoints
	RunOncePath  string // the run-once endpoint, "" off
	EdgePath     string // the edge-function endpoint, "" off
	DefaultModel string // model sent from the endpoints when the client gave none

	MaxRequestBytes int64
	MaxBufferBytes  int64
	MaxEventBytes   int64
	MaxMetaBytes    int64

	FinalMeta      bool // write the final meta event into streams
	BareMeta       bool // the final meta event as data: {"meta":…} instead of a chunk
	HustleSummary  bool // structured_result from Agent Hustle's metadata
	ConvertStreams bool // Vercel AI SDK streams into OpenAI chunks
	Timing         bool // meta.timing

	MarkInterrupted bool // end an interrupted stream with its protocol's error event (SPEC 11.1)
	ToolArguments   bool // meta.tool_calls (SPEC 11.3)

	Request translate.RequestOptions // the request side: structured mode, trimming, stream usage
	Prices  []translate.Price        // meta.cost_usd when the upstream reports none

	OpenClaw *openclaw.Client // tool names from an OpenClaw gateway (SPEC 10); nil: off

	Logger   *zap.Logger // fallbacks, failures and a debug line per reply; nil: none
	Observer Observer    // nil: none

	// UpstreamStatus is the status an error returned by next stands for
	// (Caddy's HandlerError carries one); 0 or a nil func: 502.
	UpstreamStatus func(error) int
}

// DefaultConfig is the configuration of SPEC 1's defaults.
func DefaultConfig() Config {
	return Config{
		ChatPath:        DefaultChatPath,
		RunOncePath:     DefaultRunOncePath,
		EdgePath:        DefaultEdgePath,
		MaxRequestBytes: DefaultMaxRequestBytes,
		MaxBufferBytes:  DefaultMaxBufferBytes,
		MaxEventBytes:   DefaultMaxEventBytes,
		MaxMetaBytes:    DefaultMaxMetaBytes,
		FinalMeta:       true,
		HustleSummary:   true,
		ConvertStreams:  true,
		Request:         translate.RequestOptions{StructuredModels: []string{"*"}, StreamUsage: true},
	}
}

// Observer is told what happens to each exchange, for metrics and
// placeholders. Its methods run on the request's goroutine and must not
// keep the exchange past Done.
type Observer interface {
	// Started: the exchange is about to go upstream. x, like the x of
	// Done, is valid until Serve returns and then used again for another
	// request; x.View() stays valid for reading its figures later.
	Started(r *http.Request, x *Exchange)
	// Fallback: something was forwarded untouched or skipped (reason is a
	// fixed word, never content).
	Fallback(reason string)
	// RunOnceAnswered: a run-once answer of n bytes was written.
	RunOnceAnswered(n int)
	// Done: the reply has ended.
	Done(x *Exchange)
}

// Next is the handler after this one: caddyhttp.Handler has this shape.
type Next interface {
	ServeHTTP(http.ResponseWriter, *http.Request) error
}

// Handler is llm_meta over net/http. Make it with New.
type Handler struct {
	Config
	warn  func(reason string) // fallback, bound once: a method value allocates each time it is made
	clock bool                // a request's start is read: meta.timing, or the debug line's duration
}

// New returns a handler for c.
func New(c Config) *Handler {
	h := &Handler{Config: c}
	h.warn = h.fallback
	// Reading the clock costs a request about as much as a header look-up;
	// only these two read what it gives. (Caddy makes a new handler when
	// its log level changes.)
	h.clock = c.Timing || c.Logger != nil && c.Logger.Core().Enabled(zapcore.DebugLevel)
	return h
}

// Wrap returns next with the handler in front of it, for a plain net/http
// server.
func (h *Handler) Wrap(next http.Handler) http.Handler {
	n := plainNext{next}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = h.Serve(w, r, n) })
}

// plainNext is an http.Handler as a Next that never fails.
type plainNext struct{ h http.Handler }

func (p plainNext) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	p.h.ServeHTTP(w, r)
	return nil
}
