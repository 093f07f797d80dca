// Package openclaw asks an OpenClaw gateway which tools its agent ran in a
// turn (SPEC 10): its chat endpoints never show them, its session
// transcript does. session.go finds the session a request's turn is filed
// under, transcript.go reads the look-up's answer, and this is the net/http
// client around them, with no Caddy in it.
package openclaw

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// DefaultTimeout is the longest wait for a look-up when none is given.
	DefaultTimeout = 2 * time.Second
	// maxAnswer caps the sessions_history answer read: 100 messages of a
	// real transcript are some tens of KiB; what is larger is refused,
	// never held.
	maxAnswer = 4 << 20
)

// Client looks up the tools of a turn in an OpenClaw gateway's session
// history. Make it with New; it is safe for concurrent use.
type Client struct {
	endpoint string // <gateway>/tools/invoke
	agent    string
	timeout  time.Duration
	token    func(*http.Request) string
	http     *http.Client
}

// New makes a client of the gateway at the base URL gateway (see
// ParseGateway). agent is the agent a request goes to when neither a header
// nor its model names one ("" is OpenClaw's main); timeout bounds each
// look-up (0: DefaultTimeout). token, when not nil, gives the gateway token
// for a request, sent as Authorization: Bearer; when nil, the client's own
// Authorization header is sent as it came.
func New(gateway, agent string, timeout time.Duration, token func(*http.Request) string) (*Client, error) {
	u, err := ParseGateway(gateway)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/tools/invoke"
	u.RawPath = ""
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	return &Client{
		endpoint: u.String(),
		agent:    normalizeAgent(agent),
		timeout:  timeout,
		token:    token,
		http: &http.Client{
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
			// A redirect is an answer the client does not follow: it would
			// carry the token elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// ParseGateway parses a gateway URL: http or https, a host, no query,
// fragment or credentials (the token has its own setting, kept out of logs).
// Its errors never quote the URL.
func ParseGateway(s string) (*url.URL, error) {
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

// Close lets the client's idle connections go.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// PrepareSession finds the OpenClaw session of a request about to go
// upstream, from its headers, its path and body (the body as sent
// upstream). When no header or user names one, it makes a key and sets it
// on r, so that OpenClaw files the turn where the look-up will find it. A
// body that could not be read (larger than max_request_bytes) must not be
// passed here: its user is unknown, and a made key would move the client's
// turn to another session.
func (c *Client) PrepareSession(r *http.Request, body []byte) string {
	model, user, responses := requestFields(body)
	agentHeader := r.Header.Get(agentIDHeader)
	if strings.TrimSpace(agentHeader) == "" {
		agentHeader = r.Header.Get(agentHeaderAlt)
	}
	key, made := sessionKeyOf(sessionRequest{
		SessionHeader: r.Header.Get(sessionHeader),
		AgentHeader:   agentHeader,
		Model:         model,
		User:          user,
		Responses:     responses || strings.HasSuffix(r.URL.Path, "/responses"),
		Agent:         c.agent,
	})
	if made {
		r.Header.Set(sessionHeader, key)
	}
	return key
}

// Tools asks the gateway for the session's transcript and returns the
// tools the run runID ran, in order; r is the client's request (its
// context, its Authorization header when no token is set). It returns
// within the timeout or when r's context ends. Its errors name what went
// wrong and never hold the token, a header or the transcript.
func (c *Client) Tools(r *http.Request, sessionKey, runID string) ([]string, error) {
	auth := r.Header.Get("Authorization")
	if c.token != nil {
		token := c.token(r)
		if token == "" {
			return nil, lookupErr("the token is empty once its placeholders are expanded", nil)
		}
		auth = "Bearer " + token
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(HistoryRequest(sessionKey)))
	if err != nil {
		return nil, lookupErr("making the request", nil)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, transportErr(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, lookupErr("status "+strconv.Itoa(resp.StatusCode), nil)
	}
	if resp.ContentLength > maxAnswer {
		return nil, lookupErr("answer larger than 4 MiB", nil)
	}
	// Read as a string: the transcript's reading views it, with no copy.
	var answer strings.Builder
	if _, err := io.Copy(&answer, io.LimitReader(resp.Body, maxAnswer+1)); err != nil {
		if ctx.Err() != nil {
			return nil, transportErr(ctx, err)
		}
		return nil, lookupErr("answer cut off", nil)
	}
	if answer.Len() > maxAnswer {
		return nil, lookupErr("answer larger than 4 MiB", nil)
	}
	var names []string
	if err := TranscriptTools(answer.String(), runID, func(n string) { names = append(names, n) }); err != nil {
		return nil, lookupErr("reading the answer", err)
	}
	return names, nil
}
