package httpmeta

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tidwall/gjson"
)

// TestJSONReplyOnTheWireAsPlainProxy: end to end over loopback TCP, a
// JSON reply rewritten by the handler in front of the standard library's
// reverse proxy leaves the server in as many writes as the reply the same
// proxy forwards alone, with a Content-Length and no chunking, and the
// request reaches the upstream in as many writes. Not a timing test: the
// in-process benchmarks cannot see a write, a flush or chunked encoding
// added per reply, and each costs a system call and a wake-up of the
// client or the upstream on every request (BENCHMARKS.md, "llm_meta's own
// share on JSON").
func TestJSONReplyOnTheWireAsPlainProxy(t *testing.T) {
	for _, c := range []struct{ name, path, reply string }{
		{"chat", DefaultChatPath, sizedReply(`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"PAD"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`)},
		{"chat with tool calls", DefaultChatPath, sizedReply(`{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"PAD","tool_calls":[{"id":"x","type":"function","function":{"name":"search","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}`)},
		{"Responses", "/v1/responses", sizedReply(`{"id":"r1","object":"response","model":"m","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"PAD"}]}],"usage":{"input_tokens":3,"output_tokens":5,"total_tokens":8}}`)},
		{"Anthropic", "/v1/messages", sizedReply(`{"id":"m1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"PAD"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":5}}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := onTheWire(t, c.path, c.reply, false)
			mod := onTheWire(t, c.path, c.reply, true)
			if !gjson.Get(mod.body, "meta.usage").Exists() {
				t.Fatalf("the handler added no meta.usage: %.200s", mod.body)
			}
			if plain.body != c.reply {
				t.Fatalf("plain proxy changed the reply: %.200s", plain.body)
			}
			if mod.contentLength != int64(len(mod.body)) || len(mod.transferEncoding) != 0 {
				t.Errorf("with the handler: Content-Length %d, Transfer-Encoding %q for a %d-byte reply; plain proxy: %d, %q",
					mod.contentLength, mod.transferEncoding, len(mod.body), plain.contentLength, plain.transferEncoding)
			}
			if mod.clientWrites != plain.clientWrites || mod.clientWrites != 1 {
				t.Errorf("writes to the client: %d with the handler, %d without", mod.clientWrites, plain.clientWrites)
			}
			if mod.upstreamWrites != plain.upstreamWrites {
				t.Errorf("writes to the upstream: %d with the handler, %d without", mod.upstreamWrites, plain.upstreamWrites)
			}
		})
	}
}

// sizedReply fills the PAD of a reply template so that the reply is about
// 2 KB, the size bench/e2e and bench/peers measure.
func sizedReply(template string) string {
	return strings.Replace(template, "PAD", strings.Repeat("lorem ipsum ", 2048/12)[:2048-len(template)], 1)
}

// wire is what one request did on the wire.
type wire struct {
	body             string
	contentLength    int64
	transferEncoding []string
	// Writes of the server to the client's connection, and of the proxy
	// to the upstream's, for this one request.
	clientWrites, upstreamWrites int64
}

// onTheWire makes one JSON request through the standard library's reverse
// proxy, with the handler in front of it when module is set, on fresh
// connections, and counts the writes on both of them.
func onTheWire(t *testing.T, path, reply string, module bool) wire {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
		io.WriteString(w, reply)
	}))
	defer up.Close()
	target, err := url.Parse(up.URL)
	must(t, err, "parsing the upstream's URL")

	var upstreamWrites, clientWrites atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(target)
	dialer := &net.Dialer{}
	proxy.Transport = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{c, &upstreamWrites}, nil
	}}
	var h http.Handler = proxy
	if module {
		h = New(DefaultConfig()).Wrap(proxy)
	}
	front := httptest.NewUnstartedServer(h)
	front.Listener = countingListener{front.Listener, &clientWrites}
	front.Start()
	defer front.Close()

	resp, err := http.Post(front.URL+path, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`))
	must(t, err, "POST "+path)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(t, err, "reading the reply")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return wire{body: string(b), contentLength: resp.ContentLength, transferEncoding: resp.TransferEncoding,
		clientWrites: clientWrites.Load(), upstreamWrites: upstreamWrites.Load()}
}

// countingListener counts the writes to every connection it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.n}, nil
}

// countingConn counts its Write calls: each is at least one system call.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}
