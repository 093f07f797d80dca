package caddymodule

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/llm-meta/llm_meta/translate"
)

// Defaults of the openclaw option (SPEC 1, 10).
const (
	DefaultOpenClawTimeout = 2 * time.Second
	// maxOpenClawAnswer caps the sessions_history answer read: 100 messages
	// of a real transcript are some tens of KiB; what is larger is refused,
	// never held.
	maxOpenClawAnswer = 4 << 20
	// reasonOpenClawHistory is the fallback of a look-up that gave nothing.
	reasonOpenClawHistory = "openclaw_history"
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

	gateway  string // Gateway with its placeholders expanded
	endpoint string // <gateway>/tools/invoke, "" when Gateway does not parse
	agent    string
	timeout  time.Duration
	client   *http.Client
}

// provision sets the defaults and makes the client. A gateway that does not
// parse leaves endpoint empty; validate says why.
func (o *OpenClaw) provision() {
	o.gateway = caddy.NewReplacer().ReplaceKnown(o.Gateway, "")
	if u, err := parseGateway(o.gateway); err == nil {
		u.Path = strings.TrimRight(u.Path, "/") + "/tools/invoke"
		u.RawPath = ""
		o.endpoint = u.String()
	}
	o.agent = translate.NormalizeOpenClawAgent(o.Agent)
	o.timeout = time.Duration(o.Timeout)
	if o.timeout == 0 {
		o.timeout = DefaultOpenClawTimeout
	}
	o.client = &http.Client{
		Transport: &http.Transport{
			// The gateway is named directly: no proxy from the environment.
			Proxy:                 nil,
			DialContext:           (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConnsPerHost:   16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 0, // the look-up's own deadline bounds it
		},
		// A redirect is an answer the module does not follow: it would carry
		// the token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// validate checks the configuration, after provision.
func (o *OpenClaw) validate() error {
	if strings.TrimSpace(o.Gateway) == "" {
		return errors.New("llm_meta: openclaw: gateway is required (the base URL of the OpenClaw gateway, such as http://127.0.0.1:18789)")
	}
	if _, err := parseGateway(o.gateway); err != nil {
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

// parseGateway parses the gateway URL: http or https, a host, no query,
// fragment or credentials (the token has its own setting, kept out of logs).
func parseGateway(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("the scheme must be http or https")
	case u.Host == "":
		return nil, errors.New("no host")
	case u.User != nil:
		return nil, errors.New("credentials in the URL are not allowed; use token")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, errors.New("a query or fragment is not allowed")
	}
	return u, nil
}

// cleanup lets the client's idle connections go with the config.
func (o *OpenClaw) cleanup() {
	if o.client != nil {
		o.client.CloseIdleConnections()
	}
}

// prepareSession finds the OpenClaw session of a request about to go
// upstream (SPEC 10), from its headers, its path and body, the body as sent
// upstream (for the endpoints, the chat request made from it). When no
// header or user names one, it makes a key and sets it on r, so that
// OpenClaw files the turn where the look-up will find it. A body the module
// could not read (larger than max_request_bytes) must not be passed here:
// its user is unknown, and a made key would move the client's turn to
// another session.
func (o *OpenClaw) prepareSession(r *http.Request, body []byte) string {
	model, user, responses := translate.OpenClawRequestFields(body)
	agentHeader := r.Header.Get(translate.OpenClawAgentHeader)
	if strings.TrimSpace(agentHeader) == "" {
		agentHeader = r.Header.Get(translate.OpenClawAgentHeaderAlt)
	}
	key, made := translate.OpenClawSessionKey(translate.OpenClawRequest{
		SessionHeader: r.Header.Get(translate.OpenClawSessionHeader),
		AgentHeader:   agentHeader,
		Model:         model,
		User:          user,
		Responses:     responses || strings.HasSuffix(r.URL.Path, "/responses"),
		Agent:         o.agent,
	})
	if made {
		r.Header.Set(translate.OpenClawSessionHeader, key)
	}
	return key
}

// lookupTools asks the gateway for the session's transcript and returns the
// tools the run runID ran, in order. It returns within the timeout (or when
// ctx ends). repl expands the token's placeholders; clientAuth is the
// client's Authorization header, sent when no token is configured. Its
// errors name what went wrong and never hold the token, a header or the
// transcript.
func (o *OpenClaw) lookupTools(ctx context.Context, repl *caddy.Replacer, clientAuth, sessionKey, runID string) ([]string, error) {
	if o.endpoint == "" {
		return nil, openClawErr("no gateway", nil)
	}
	auth := clientAuth
	if o.Token != "" {
		if repl == nil {
			repl = caddy.NewReplacer()
		}
		token := repl.ReplaceKnown(o.Token, "")
		if token == "" {
			return nil, openClawErr("the token is empty once its placeholders are expanded", nil)
		}
		auth = "Bearer " + token
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(translate.OpenClawHistoryRequest(sessionKey)))
	if err != nil {
		return nil, openClawErr("making the request", nil)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, transportErr(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, openClawErr("status "+strconv.Itoa(resp.StatusCode), nil)
	}
	if resp.ContentLength > maxOpenClawAnswer {
		return nil, openClawErr("answer larger than 4 MiB", nil)
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxOpenClawAnswer+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, transportErr(ctx, err)
		}
		return nil, openClawErr("answer cut off", nil)
	}
	if len(answer) > maxOpenClawAnswer {
		return nil, openClawErr("answer larger than 4 MiB", nil)
	}
	var names []string
	if err := translate.OpenClawTools(answer, runID, func(n string) { names = append(names, n) }); err != nil {
		return nil, openClawErr("reading the answer", err)
	}
	return names, nil
}

// openClawTools adds to add the tools the run runID of the session
// sessionKey (from prepareSession) ran, read from the gateway when the reply
// has ended; runID is the reply's id. A look-up that fails, is too slow or
// cannot be read adds nothing and is logged as the fallback
// openclaw_history; the reply goes on either way. It returns at once when
// the option is off or either id is missing.
func (h *Handler) openClawTools(r *http.Request, sessionKey, runID string, add func(string)) {
	o := h.OpenClaw
	if o == nil || sessionKey == "" || runID == "" {
		return
	}
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	names, err := o.lookupTools(r.Context(), repl, r.Header.Get("Authorization"), sessionKey, runID)
	if err != nil {
		h.openClawFallback(err)
		return
	}
	for _, n := range names {
		add(n)
	}
}

// openClawFallback is fallback with the look-up's error, which holds no
// secret or content (see lookupTools), so operators see why.
func (h *Handler) openClawFallback(err error) {
	if metrics.fallbacks != nil {
		metrics.fallbacks.WithLabelValues(reasonOpenClawHistory).Inc()
	}
	if h.logger != nil {
		h.logger.Warn("llm_meta fallback", zap.String("reason", reasonOpenClawHistory), zap.String("error", err.Error()))
	}
}

// openClawError is a failed look-up: what went wrong, and for errors.Is the
// cause, whose own text (a URL, a header line) is never shown.
type openClawError struct {
	kind  string
	cause error
}

func openClawErr(kind string, cause error) error { return &openClawError{kind, cause} }

func (e *openClawError) Error() string {
	if isTranslateErr(e.cause) {
		// translate's errors name the fault only.
		return "openclaw sessions_history: " + e.kind + ": " + e.cause.Error()
	}
	return "openclaw sessions_history: " + e.kind
}

func (e *openClawError) Unwrap() error { return e.cause }

func isTranslateErr(err error) bool {
	for _, t := range []error{translate.ErrOpenClawMalformed, translate.ErrOpenClawNotOK, translate.ErrOpenClawStatusError, translate.ErrOpenClawNoMessages} {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// transportErr reduces a transport error to its kind: the deadline, a
// cancelled request, a refused or failed connection.
func transportErr(ctx context.Context, err error) error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return openClawErr("timed out", context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		return openClawErr("cancelled", context.Canceled)
	case errors.Is(err, syscall.ECONNREFUSED):
		return openClawErr("connection refused", syscall.ECONNREFUSED)
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return openClawErr("connection failed ("+opErr.Op+")", nil)
	}
	return openClawErr("request failed", nil)
}
