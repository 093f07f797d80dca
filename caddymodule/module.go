// Package caddymodule is the Caddy glue of llm_meta: the module, its
// configuration and Caddyfile directive, metrics and placeholders. The
// handler itself is package httpmeta (net/http), and the rules live in
// package translate.
package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llm-meta/llm_meta/httpmeta"
	"github.com/llm-meta/llm_meta/translate"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// The two shapes of the final meta event (meta_event).
const (
	MetaEventChunk = "chunk"
	MetaEventBare  = "bare"
)

// Handler is the llm_meta HTTP handler. It stands in front of an LLM gateway
// (usually reverse_proxy) and gives chat UIs one contract: the reply text
// plus a meta object (tools used, structured results, prompt trimming,
// structured metadata, Agent Hustle's reasoning and cost). It rewrites JSON
// replies and event streams as they pass, converts Vercel AI SDK streams into
// OpenAI chunks, answers run-once requests with one JSON object, and serves
// the JARVIS edge-function endpoints.
type Handler struct {
	// Upstream path for requests made from the run-once and edge endpoints.
	// Default: /v1/chat/completions.
	ChatPath string `json:"chat_path,omitempty"`

	// Path of the run-once endpoint. Default /v1/run_once; "" turns it off.
	RunOncePath *string `json:"run_once_path,omitempty"`

	// Path of the JARVIS edge-function endpoint. Default
	// /functions/v1/jarvis; "" turns it off.
	EdgePath *string `json:"edge_path,omitempty"`

	// Model sent upstream from the endpoints when the client gave none.
	// "" sends none.
	DefaultModel string `json:"default_model,omitempty"`

	// Prompt trimming: when the messages' text exceeds this many characters
	// (Unicode code points), the oldest messages are dropped. 0 is off.
	MaxPromptChars int `json:"max_prompt_chars,omitempty"`

	// Largest request body inspected, in bytes. Larger bodies are forwarded
	// untouched. Default 16 MiB.
	MaxRequestBytes int64 `json:"max_request_bytes,omitempty"`

	// Largest reply buffered (JSON rewriting, run-once), in bytes.
	// Default 16 MiB.
	MaxBufferBytes int64 `json:"max_buffer_bytes,omitempty"`

	// Largest SSE event or data-stream line parsed, in bytes. Larger ones
	// pass uninspected (SSE) or are skipped (data stream). Default 1 MiB.
	MaxEventBytes int64 `json:"max_event_bytes,omitempty"`

	// Largest meta collected for one reply, in bytes of JSON (SPEC 8.1):
	// what would cross it is dropped, whole keys and whole tool names, with
	// a warning (fallback reason meta_too_large). Default 256 KiB.
	MaxMetaBytes int64 `json:"max_meta_bytes,omitempty"`

	// Write the final meta event in streams. Default true.
	FinalMeta *bool `json:"final_meta,omitempty"`

	// Shape of the final meta event: "chunk" (a valid chat.completion.chunk
	// with empty choices, the default) or "bare" (data: {"meta":{...}}).
	MetaEvent string `json:"meta_event,omitempty"`

	// Derive structured_result from Agent Hustle metadata. Default true.
	HustleSummary *bool `json:"hustle_summary,omitempty"`

	// Convert Vercel AI SDK streams into OpenAI chunks. Default true; false
	// passes them untouched.
	ConvertStreams *bool `json:"convert_streams,omitempty"`

	// Structured output settings. Default: every model ("*").
	StructuredOutput *StructuredOutput `json:"structured_output,omitempty"`

	// Ask chat-completion streams for their usage (include_usage), and
	// withhold the usage chunk the client did not ask for. Default true.
	StreamUsage *bool `json:"stream_usage,omitempty"`

	// Prices per million tokens, for meta.cost_usd when the upstream
	// reports no cost: the first row whose model glob matches.
	Prices []translate.Price `json:"prices,omitempty"`

	// Add meta.timing (first_token_ms, total_ms). Default false.
	Timing bool `json:"timing,omitempty"`

	// End a stream the upstream cut short (it ended cleanly before its
	// protocol's end) with the protocol's own error event, so that client
	// libraries raise an error instead of returning half an answer as
	// whole (SPEC 11.1). meta.interrupted is added either way. Default
	// false.
	MarkInterrupted bool `json:"mark_interrupted,omitempty"`

	// Add meta.tool_calls, each tool call's name and arguments (SPEC
	// 11.3). Off by default: arguments can hold what a user typed.
	ToolArguments bool `json:"tool_arguments,omitempty"`

	// Tool names from an OpenClaw gateway's session history (SPEC 10).
	// Absent: off, and no look-up is made.
	OpenClaw *OpenClaw `json:"openclaw,omitempty"`

	core *httpmeta.Handler // the handler, made by Provision
}

// StructuredOutput configures structured mode (SPEC 7).
type StructuredOutput struct {
	// Globs (path.Match) of models that get structured mode. Default ["*"].
	Models []string `json:"models,omitempty"`
	// Replaces the built-in instruction appended to the system prompt.
	Instruction string `json:"instruction,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_meta",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets the defaults and makes the handler.
func (h *Handler) Provision(ctx caddy.Context) error {
	if err := registerMetrics(ctx); err != nil {
		return fmt.Errorf("llm_meta: registering metrics: %w", err)
	}
	c := httpmeta.DefaultConfig()
	if h.ChatPath == "" {
		h.ChatPath = c.ChatPath
	}
	h.MaxRequestBytes = intOr(h.MaxRequestBytes, c.MaxRequestBytes)
	h.MaxBufferBytes = intOr(h.MaxBufferBytes, c.MaxBufferBytes)
	h.MaxEventBytes = intOr(h.MaxEventBytes, c.MaxEventBytes)
	h.MaxMetaBytes = intOr(h.MaxMetaBytes, c.MaxMetaBytes)
	if h.MetaEvent == "" {
		h.MetaEvent = MetaEventChunk
	}
	c.ChatPath, c.DefaultModel = h.ChatPath, h.DefaultModel
	c.RunOncePath = stringOr(h.RunOncePath, c.RunOncePath)
	c.EdgePath = stringOr(h.EdgePath, c.EdgePath)
	c.MaxRequestBytes, c.MaxBufferBytes, c.MaxEventBytes, c.MaxMetaBytes = h.MaxRequestBytes, h.MaxBufferBytes, h.MaxEventBytes, h.MaxMetaBytes
	c.FinalMeta = boolOr(h.FinalMeta, true)
	c.HustleSummary = boolOr(h.HustleSummary, true)
	c.ConvertStreams = boolOr(h.ConvertStreams, true)
	c.BareMeta = h.MetaEvent == MetaEventBare
	// With final_meta off nothing is withheld, so nothing is asked for.
	c.Request.StreamUsage = boolOr(h.StreamUsage, true) && c.FinalMeta
	if so := h.StructuredOutput; so != nil {
		if so.Models != nil {
			c.Request.StructuredModels = so.Models
		}
		c.Request.Instruction = so.Instruction
	}
	c.Request.MaxPromptChars = h.MaxPromptChars
	c.Prices, c.Timing = h.Prices, h.Timing
	c.MarkInterrupted, c.ToolArguments = h.MarkInterrupted, h.ToolArguments
	if h.OpenClaw != nil {
		h.OpenClaw.provision()
		c.OpenClaw = h.OpenClaw.client
	}
	c.Logger = ctx.Logger()
	c.Observer = caddyObserver{}
	c.UpstreamStatus = handlerErrorStatus
	h.core = httpmeta.New(c)
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return h.core.Serve(w, r, next)
}

// handlerErrorStatus is the status of an error reverse_proxy returned (a
// failed dial is a 502 HandlerError, a timeout a 504), 0 when it has none.
func handlerErrorStatus(err error) int {
	var he caddyhttp.HandlerError
	if errors.As(err, &he) {
		return he.StatusCode
	}
	return 0
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	if !strings.HasPrefix(h.ChatPath, "/") {
		return fmt.Errorf("llm_meta: chat_path %q must start with /", h.ChatPath)
	}
	runOnce, edge := h.core.RunOncePath, h.core.EdgePath
	for name, p := range map[string]string{"run_once_path": runOnce, "edge_path": edge} {
		if p != "" && !strings.HasPrefix(p, "/") {
			return fmt.Errorf("llm_meta: %s %q must start with / (or be empty to turn it off)", name, p)
		}
	}
	if runOnce != "" && runOnce == edge {
		return fmt.Errorf("llm_meta: run_once_path and edge_path are both %q", runOnce)
	}
	if h.MaxPromptChars < 0 {
		return fmt.Errorf("llm_meta: max_prompt_chars must not be negative, got %d", h.MaxPromptChars)
	}
	for name, v := range map[string]int64{"max_request_bytes": h.MaxRequestBytes, "max_buffer_bytes": h.MaxBufferBytes, "max_event_bytes": h.MaxEventBytes, "max_meta_bytes": h.MaxMetaBytes} {
		if v < 0 {
			return fmt.Errorf("llm_meta: %s must be positive, got %d", name, v)
		}
	}
	if h.MetaEvent != MetaEventChunk && h.MetaEvent != MetaEventBare {
		return fmt.Errorf("llm_meta: meta_event must be %q or %q, got %q", MetaEventChunk, MetaEventBare, h.MetaEvent)
	}
	for _, g := range h.core.Request.StructuredModels {
		if !translate.ValidGlob(g) {
			return fmt.Errorf("llm_meta: structured_output model pattern %q is not a valid glob", g)
		}
	}
	for i, p := range h.Prices {
		if !translate.ValidGlob(p.Model) || p.Model == "" {
			return fmt.Errorf("llm_meta: prices[%d]: model pattern %q is not a valid glob", i, p.Model)
		}
		if p.Input < 0 || p.Output < 0 || p.CachedInput != nil && *p.CachedInput < 0 {
			return fmt.Errorf("llm_meta: prices[%d] (%s): prices must not be negative", i, p.Model)
		}
	}
	if h.OpenClaw != nil {
		return h.OpenClaw.validate()
	}
	return nil
}

// Cleanup releases what Provision made that outlives a request.
func (h *Handler) Cleanup() error {
	if h.OpenClaw != nil {
		h.OpenClaw.cleanup()
	}
	return nil
}

func stringOr(p *string, def string) string {
	if p == nil {
		return def
	}
	return *p
}

func intOr(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
