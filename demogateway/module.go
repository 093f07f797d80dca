// Package demogateway is a built-in stand-in for an LLM gateway, so that the
// example Caddyfile runs on a fresh machine with no model and no keys and
// still shows everything llm_meta does: OpenAI chat JSON and SSE replies with
// tool calls, the OpenAI Responses API, Anthropic Messages, Google's Gemini
// API, an Agent Hustle data stream, an AI SDK UI message stream and
// structured JSON replies.
//
// Its replies are canned and deterministic; only the echo of the last user
// message changes, so that a user sees the round trip.
//
// Paths (any prefix, like gateways mounted under a base path):
//
//	POST …/chat/completions  OpenAI chat completions, JSON or SSE
//	POST …/responses         OpenAI Responses API, JSON or its event stream
//	POST …/messages          Anthropic Messages, JSON or its event stream
//	POST …/models/M:generateContent        Gemini, JSON
//	POST …/models/M:streamGenerateContent  Gemini, its event stream with
//	                         alt=sse, else a streamed JSON array
//	GET  …/models            the model names below
//
// On chat completions the request's model picks the reply:
//
//	demo-hustle      Agent Hustle: Vercel AI SDK data stream v1, always streamed
//	demo-ui          AI SDK 5 UI message stream, always streamed
//	demo-structured  a structured-output JSON object as the content (also for
//	                 any model when response_format is json_schema/json_object)
//	demo-plain       plain text, no tools, no meta
//	anything else    OpenAI: tool calls (two parallel ones when the message
//	                 mentions "weather"), text, usage and a gateway meta table
//
// Model names match by substring, tried in that order. Responses, Messages
// and Gemini know "structured" and "plain" the same way; every other model
// (Hustle and UI included: those are chat-gateway protocols) gets the tool
// calls and the text, as function_call items / tool_use blocks /
// functionCall parts, in the API's own shape and with no gateway meta
// (OpenAI, Anthropic and Google send none). Gemini's model is the path's.
//
// Usage is in each protocol's own shape and counts the same tokens in all of
// them: the input (about four characters a token), of which the messages
// before the last are "cached" as a provider's prompt cache would serve
// them, and the output. Chat streams end with the usage chunk only when the
// request asks for it (stream_options.include_usage), as OpenAI's do. A model
// whose name contains "openrouter" (demo-openrouter) also reports the reply's
// price in USD as "cost" in its usage object, as OpenRouter does, in the
// three protocols OpenRouter speaks (not Gemini's).
//
// Two names show what llm_meta says about a reply (SPEC 11), in every
// protocol: a model whose name contains "cut" (demo-cut, demo-hustle-cut,
// demo-ui-cut…), or a last message that says "cut short", ends a stream
// cleanly in the middle of its text, without its protocol's end, as a
// crashed upstream would (a JSON reply stays whole); a model whose name
// contains "auto" (demo-auto, as openrouter/auto) answers as
// demo-openai-fallback, another model than the one asked for.
//
// Usage:
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

// Handler answers chat completion, Responses, Messages, Gemini and model list
// requests with canned replies in the formats real gateways use. It is a
// terminal handler for the paths it serves (see the package comment); any
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

// protocol is the API a request came in on.
type protocol int

const (
	protoChat protocol = iota
	protoResponses
	protoMessages
	protoGemini
)

// protocolOf tells which API a path belongs to.
func protocolOf(path string) (protocol, bool) {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return protoChat, true
	case strings.HasSuffix(path, "/responses"):
		return protoResponses, true
	case strings.HasSuffix(path, "/messages"):
		return protoMessages, true
	case isGeminiPath(path):
		return protoGemini, true
	}
	return 0, false
}

// ServeHTTP answers the gateway paths and passes everything else on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if proto, ok := protocolOf(r.URL.Path); ok {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeProtocolError(w, proto, &requestError{http.StatusMethodNotAllowed, "Only POST is allowed on " + r.URL.Path + "."})
			return nil
		}
		return h.serve(w, r, proto)
	}
	if strings.HasSuffix(r.URL.Path, "/models") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return serveModels(w, r)
	}
	return next.ServeHTTP(w, r)
}

// readRequest decodes the request of any protocol into the chat request the
// canned replies are made from.
func readRequest(w http.ResponseWriter, r *http.Request, proto protocol) (*chatRequest, error) {
	switch proto {
	case protoResponses:
		return readResponsesRequest(w, r)
	case protoMessages:
		return readMessagesRequest(w, r)
	case protoGemini:
		return readGeminiRequest(w, r)
	}
	return readChatRequest(w, r)
}

// writeProtocolError answers a request error in the API's own error shape.
func writeProtocolError(w http.ResponseWriter, proto protocol, err error) {
	switch proto {
	case protoMessages:
		writeAnthropicError(w, err)
		return
	case protoGemini:
		writeGeminiError(w, err)
		return
	}
	writeRequestError(w, err)
}

// serve reads the request, picks the reply and writes it.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, proto protocol) error {
	start := time.Now()
	req, err := readRequest(w, r, proto)
	if err != nil {
		writeProtocolError(w, proto, err)
		return nil
	}
	s := newStreamer(w, r.Context(), h.pause)
	defer s.stop()

	var kind string
	switch proto {
	case protoResponses:
		kind = "responses"
		err = serveResponses(s, req)
	case protoMessages:
		kind = "messages"
		err = serveMessages(s, req)
	case protoGemini:
		kind = "gemini"
		err = serveGemini(s, req, r.URL.Query().Get("alt") == "sse")
	default:
		k := req.kind()
		kind = k.String()
		err = serveChat(s, req, k)
	}
	// A client that left is not an error of ours: the reply simply stops.
	// Anything else already reached the client as a partial reply, so it is
	// only logged; returning it would make Caddy try to write an error page
	// over a response that has started.
	if c := h.logger.Check(zap.DebugLevel, "demo reply"); c != nil {
		c.Write(
			zap.String("kind", kind),
			zap.Bool("stream", req.Stream),
			zap.Int("events", s.events),
			zap.Duration("duration", time.Since(start)),
			zap.Error(err),
		)
	}
	return nil
}

// serveChat answers a chat completion in the gateway format of kind.
func serveChat(s *streamer, req *chatRequest, kind replyKind) error {
	switch kind {
	case kindHustle:
		return serveHustle(s, req)
	case kindUI:
		return serveUIStream(s, req)
	case kindStructured:
		return serveStructured(s, req)
	}
	return serveOpenAI(s, req, kind == kindPlain)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
