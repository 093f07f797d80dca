package caddymodule

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Caddy's encode in front of llm_meta, as the Caddyfile orders them: encode
// compresses what the module wrote, the module reads identity bodies, and a
// stream is not held back by compression.

func encodeGzip() map[string]any {
	return map[string]any{
		"handler":   "encode",
		"encodings": map[string]any{"gzip": map[string]any{}},
		"prefer":    []string{"gzip"},
	}
}

func TestBehindEncodeJSON(t *testing.T) {
	content := strings.Repeat("All work and no play. ", 60) // over encode's minimum_length
	sawAcceptEncoding := make(chan []string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		sawAcceptEncoding <- r.Header.Values("Accept-Encoding")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"`+content+`"},"meta":{"tools_used":["search"]}}]}`)
	}))
	defer up.Close()
	base := loadCaddy(t, encodeGzip(), llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(chatRequest))
	must(t, err, "building the request")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := testClient.Do(req)
	must(t, err, "request through Caddy")
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding = %q, want gzip from encode", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	must(t, err, "gzip header")
	body, err := io.ReadAll(zr)
	must(t, err, "decompressing")
	want := `{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"` + content + `"}}],"meta":{"tools_used":["search"]}}`
	assertJSONBody(t, body, want)
	// Go's transport asks for gzip on its own when the header is absent and
	// then decompresses transparently; anything else reaching the upstream
	// would mean compressed bytes in the module.
	for _, v := range waitOn(t, sawAcceptEncoding, "the upstream request") {
		if v != "gzip" {
			t.Errorf("upstream got Accept-Encoding %q", v)
		}
	}
}

func TestBehindEncodeStreamNotHeld(t *testing.T) {
	for _, enc := range []string{"gzip", "identity"} {
		t.Run(enc, func(t *testing.T) {
			events := []string{
				sseChunk(`{"role":"assistant","content":"Hel"}`),
				sseChunk(`{"tool_calls":[{"index":0,"function":{"name":"search","arguments":""}}]}`),
				sseChunk(`{"content":"lo"}`),
			}
			proceed := make(chan struct{})
			upstreamDone := make(chan string, 1)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				upstreamDone <- servePaced(w, r, events, false, proceed)
			}))
			defer up.Close()
			base := loadCaddy(t, encodeGzip(), llmMeta(t, nil), proxyTo(up.Listener.Addr().String()))

			resp, _ := postStream(t, base, "/v1/chat/completions", chatRequest, "Accept-Encoding", enc)
			var body io.Reader = resp.Body
			if resp.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(resp.Body)
				must(t, err, "gzip header")
				body = zr
			}
			t.Logf("Content-Encoding %q", resp.Header.Get("Content-Encoding"))
			br := bufio.NewReader(body)
			for i, want := range events {
				got, err := readEvent(br)
				if err != nil || got != want {
					t.Fatalf("event %d = %q, %v; want %q", i, got, err, want)
				}
				release(t, proceed, fmt.Sprintf("after event %d", i))
			}
			rest, err := io.ReadAll(br)
			must(t, err, "reading the end of the stream")
			if msg := waitOn(t, upstreamDone, "the upstream to finish"); msg != "" {
				t.Fatal(msg)
			}
			tail := parseClientEvents(rest)
			if len(tail) != 2 || string(tail[1].data) != "[DONE]" || !strings.Contains(string(tail[0].data), `"tools_used":["search"]`) {
				t.Errorf("end of stream = %q, want the final meta event then [DONE]", rest)
			}
		})
	}
}
