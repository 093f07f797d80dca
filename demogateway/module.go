// Package demogateway is a built-in stand-in for an LLM gateway, so that the
// example Caddyfile runs on a fresh machine with no model and no keys and
// still shows everything llm_meta does: OpenAI JSON and SSE replies with tool
// calls, an Agent Hustle data stream, an AI SDK UI message stream and
// structured JSON replies.
//
// Its replies are canned and deterministic; only the echo of the last user
// message changes, so that a user sees the round trip.
//
// The request's model picks the reply (GET …/models lists these names):
//
//	demo-hustle      Agent Hustle: Vercel AI SDK data stream v1, always streamed
//	demo-ui          AI SDK 5 UI message stream, always streamed
//	demo-structured  a structured-output JSON object as the content (also for
//	                 any model when response_format is json_schema/json_object)
//	demo-plain       plain text, no tools, no meta
//	anything else    OpenAI: tool calls (two parallel ones when the message
//	                 mentions "weather"), text, usage and a gateway meta table
//
// Model names match by substring, tried in that order. Usage:
//
//	:8081 {
//		llm_meta_demo {
//			pause 40ms
//		}
//	}
package demogateway

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// defaultPause is long enough for a streamed reply to be seen arriving word
// by word in a terminal, short enough for a demo reply to take about a second.
const defaultPause = 40 * time.Millisecond

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler answers OpenAI-style chat completion and model list requests with
// canned replies in the formats real gateways use. It is a terminal handler
// for the paths it serves (`POST …/chat/completions`, `GET …/models`); any
// other request goes to the next handler.
type Handler struct {
	// Pause between two events of a streamed reply, so that it arrives like a
	// real model's. Default: 40ms. 0 sends the events back to back.
	Pause *caddy.Duration `json:"pause,omitempty"`

	pause  time.Duration
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_meta_demo",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets the default pause and the logger. Pause is a pointer so that
// an explicit 0 (no pause) is not mistaken for "unset".
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	h.pause = defaultPause
	if h.Pause != nil {
		h.pause = time.Duration(*h.Pause)
	}
	return nil
}

// Validate rejects a negative pause.
func (h *Handler) Validate() error {
	if h.Pause != nil && *h.Pause < 0 {
		return fmt.Errorf("pause must not be negative, got %s", time.Duration(*h.Pause))
	}
	return nil
}

// ServeHTTP answers the gateway paths and passes everything else on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	switch {
	case strings.HasSuffix(r.URL.Path, "/chat/completions"):
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "Only POST is allowed on "+r.URL.Path+".")
			return nil
		}
		return h.serveChat(w, r)
	case strings.HasSuffix(r.URL.Path, "/models") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		return serveModels(w, r)
	}
	return next.ServeHTTP(w, r)
}

// serveChat reads the request, picks the reply kind and writes it.
func (h *Handler) serveChat(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	req, err := readChatRequest(w, r)
	if err != nil {
		writeRequestError(w, err)
		return nil
	}
	kind := req.kind()
	s := newStreamer(w, r.Context(), h.pause)
	defer s.stop()

	switch kind {
	case kindHustle:
		err = serveHustle(s, req)
	case kindUI:
		err = serveUIStream(s, req)
	case kindStructured:
		err = serveStructured(s, req)
	default:
		err = serveOpenAI(s, req, kind == kindPlain)
	}
	// A client that left is not an error of ours: the reply simply stops.
	// Anything else already reached the client as a partial reply, so it is
	// only logged; returning it would make Caddy try to write an error page
	// over a response that has started.
	if c := h.logger.Check(zap.DebugLevel, "demo reply"); c != nil {
		c.Write(
			zap.String("kind", kind.String()),
			zap.Bool("stream", req.Stream),
			zap.Int("events", s.events),
			zap.Duration("duration", time.Since(start)),
			zap.Error(err),
		)
	}
	return nil
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
