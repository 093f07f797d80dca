package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/llm-meta/llm_meta/openclaw"
)

// OpenClaw reads the tools an OpenClaw gateway's agent ran itself, which its
// chat endpoints never show, from the session transcript when a reply has
// ended (SPEC 10).
type OpenClaw struct {
	// Base URL of the OpenClaw gateway, such as http://127.0.0.1:18789;
	// required. The look-up goes to <gateway>/tools/invoke. Placeholders
	// known at start-up ({env.*}) are expanded once.
	Gateway string `json:"gateway"`

	// The gateway token, sent as Authorization: Bearer <token>. Caddy
	// placeholders such as {env.OPENCLAW_GATEWAY_TOKEN} are expanded for
	// each request. Empty: the Authorization header of the client's request
	// is sent as it came. It never reaches a log.
	Token string `json:"token,omitempty"`

	// The agent a request goes to when neither a header nor its model names
	// one, as in OpenClaw's own config. Default main.
	Agent string `json:"agent,omitempty"`

	// Longest wait for the look-up, counted from the end of the reply.
	// Default 2s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	gateway string           // Gateway with its placeholders expanded
	client  *openclaw.Client // nil when the gateway does not parse (validate says why)
}

// provision makes the client.
func (o *OpenClaw) provision() {
	o.gateway = caddy.NewReplacer().ReplaceKnown(o.Gateway, "")
	var token func(*http.Request) string
	if o.Token != "" {
		token = o.token
	}
	o.client, _ = openclaw.New(o.gateway, o.Agent, time.Duration(o.Timeout), token)
}

// token expands the token's placeholders with the request's replacer.
func (o *OpenClaw) token(r *http.Request) string {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	return repl.ReplaceKnown(o.Token, "")
}

// validate checks the configuration, after provision.
func (o *OpenClaw) validate() error {
	if strings.TrimSpace(o.Gateway) == "" {
		return errors.New("llm_meta: openclaw: gateway is required (the base URL of the OpenClaw gateway, such as http://127.0.0.1:18789)")
	}
	if _, err := openclaw.ParseGateway(o.gateway); err != nil {
		shown := o.Gateway
		if u, perr := url.Parse(shown); perr == nil {
			shown = u.Redacted() // a password in it stays out of the message
		}
		return fmt.Errorf("llm_meta: openclaw: gateway %q: %w", shown, err)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("llm_meta: openclaw: timeout must not be negative, got %s", time.Duration(o.Timeout))
	}
	return nil
}

// cleanup lets the client's idle connections go with the config.
func (o *OpenClaw) cleanup() {
	if o.client != nil {
		o.client.Close()
	}
}
