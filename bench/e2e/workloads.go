package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The table of workloads: each protocol × kind × tools, all driven by the
// same measuring loop (drive) and checked by the same self-check.

// Kinds of workload.
const (
	kindStream  = "stream"  // a stream the module forwards, adding meta
	kindJSON    = "json"    // a JSON reply the module rewrites
	kindConvert = "convert" // a Vercel AI SDK stream the module converts into chat chunks
	// kindFirst is a short stream whose upstream holds after the first
	// event (a model thinking), so that the Caddy under test is far from
	// saturated: the time to the first event is then the two Caddys' own
	// latency, not the queue of other streams' events it is under load.
	kindFirst = "first"
)

// firstEvents is the content events of a kindFirst stream.
const firstEvents = 8

// protocol is how one protocol's requests and replies look.
type protocol struct {
	name   string
	kinds  []string // the kinds it takes part in
	path   string
	stream func(*script) [][]byte
	json   func(*script) []byte
	// streamHeader is the upstream's reply headers for a stream.
	streamHeader http.Header
	// lines: its stream is one part a line (the data stream), not SSE.
	lines bool
	// request is the client's body.
	request func(stream, tools bool) string
}

const chatMessages = `"messages":[{"role":"system","content":"You are a helpful assistant. Answer briefly."},{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]`

func chatRequest(stream, tools bool) string {
	b := `{"model":"gpt-4o-mini","stream":` + strconv.FormatBool(stream)
	if stream {
		// The client asks for the usage chunk itself, so that the module
		// forwards the request byte-identical and both sides get the same
		// upstream bytes (SPEC 9.1).
		b += `,"stream_options":{"include_usage":true}`
	}
	if tools {
		b += `,"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}},{"type":"function","function":{"name":"get_markets","parameters":{"type":"object"}}}]`
	}
	return b + "," + chatMessages + "}"
}

func responsesRequest(stream, tools bool) string {
	b := `{"model":"gpt-4o-mini","stream":` + strconv.FormatBool(stream)
	if tools {
		b += `,"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}},{"type":"function","name":"get_markets","parameters":{"type":"object"}}]`
	}
	return b + `,"input":[{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`
}

func anthropicRequest(stream, tools bool) string {
	b := `{"model":"claude-sonnet-4-20250514","max_tokens":1024,"stream":` + strconv.FormatBool(stream)
	if tools {
		b += `,"tools":[{"name":"get_weather","input_schema":{"type":"object"}},{"name":"get_markets","input_schema":{"type":"object"}}]`
	}
	return b + `,"system":"You are a helpful assistant. Answer briefly.","messages":[{"role":"user","content":"What are the hottest prediction markets right now, and how has their volume moved this week?"}]}`
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

var sseHeader = header("Content-Type", "text/event-stream", "Cache-Control", "no-cache")

var protocols = []*protocol{
	{name: "chat", kinds: []string{kindStream, kindJSON, kindFirst}, path: "/v1/chat/completions", stream: chatStream, json: chatJSON, streamHeader: sseHeader, request: chatRequest},
	{name: "responses", kinds: []string{kindStream, kindJSON, kindFirst}, path: "/v1/responses", stream: responsesStream, json: responsesJSON, streamHeader: sseHeader, request: responsesRequest},
	{name: "anthropic", kinds: []string{kindStream, kindJSON, kindFirst}, path: "/v1/messages", stream: anthropicStream, json: anthropicJSON, streamHeader: sseHeader, request: anthropicRequest},
	// The converted streams answer a chat client (the request is a chat
	// request); plain reverse_proxy passes the same upstream bytes as they are.
	{name: "datastream", kinds: []string{kindConvert}, path: "/v1/chat/completions", stream: dataStream, lines: true, request: chatRequest,
		streamHeader: header("Content-Type", "text/plain; charset=utf-8", "X-Vercel-AI-Data-Stream", "v1")},
	{name: "uistream", kinds: []string{kindConvert}, path: "/v1/chat/completions", stream: uiStream, request: chatRequest,
		streamHeader: header("Content-Type", "text/event-stream", "Cache-Control", "no-cache", "X-Vercel-AI-UI-Message-Stream", "v1", "X-Accel-Buffering", "no")},
}

// Sides of a comparison.
const (
	plainSide  = 0
	moduleSide = 1
)

// workload is one row of the table.
type workload struct {
	kind   string
	proto  *protocol
	tools  bool
	id     []string    // the X-Bench-Workload header value: which reply the upstream sends
	body   []byte      // the client's request body
	header http.Header // the upstream's reply headers
	parts  [][]byte    // the upstream's writes, each flushed (a JSON reply: one)
	script *script
	// perStream is the unit of the throughput figure for one completed
	// request: upstream events (streams) or 1 (JSON).
	perStream int64
	// want is the events the client reads per stream, for each side (set
	// by the self-check, which also proves them right).
	want [2]int
	// hold is the X-Bench-Hold header of a kindFirst stream's requests:
	// how long its upstream waits after the first event (set for each
	// concurrency; nil: no wait); stagger is how far apart the workers
	// start, so that the streams arrive evenly rather than all at once.
	hold    []string
	stagger time.Duration
}

func (w *workload) name() string {
	return w.kind + " " + w.proto.name + " tools=" + yesNo(w.tools)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// lines says whether the client of side reads one part a line: only plain
// reverse_proxy passing a data stream.
func (w *workload) lines(side int) bool { return side == plainSide && w.proto.lines }

// buildWorkloads makes the table for the selected kinds, protocols and
// tools; events is the content events per stream, jsonSize the size of a
// JSON reply.
func buildWorkloads(kinds, protos, tools map[string]bool, events, jsonSize int) []*workload {
	var ws []*workload
	for _, kind := range []string{kindStream, kindJSON, kindConvert, kindFirst} {
		if !kinds[kind] {
			continue
		}
		for _, p := range protocols {
			if !protos[p.name] || !slices.Contains(p.kinds, kind) {
				continue
			}
			for _, t := range []bool{false, true} {
				if !tools[yesNo(t)] || (kind == kindFirst && t) {
					continue // tool calls come after the first event
				}
				w := &workload{kind: kind, proto: p, tools: t, id: []string{strconv.Itoa(len(ws))}, body: []byte(p.request(kind != kindJSON, t))}
				if kind == kindJSON {
					var reply []byte
					reply, w.script = sizedJSON(p.json, t, jsonSize)
					w.parts = [][]byte{reply}
					w.header = header("Content-Type", "application/json", "Content-Length", strconv.Itoa(len(reply)))
					w.perStream = 1
				} else {
					n := events
					if kind == kindFirst {
						n = firstEvents
					}
					w.script = streamScript(n, t)
					w.parts = p.stream(w.script)
					w.header = p.streamHeader
					w.perStream = int64(len(w.parts))
				}
				ws = append(ws, w)
			}
		}
	}
	return ws
}

// selection parses a comma-separated flag against its allowed values;
// "all" selects every one.
func selection(flagName, value string, allowed ...string) (map[string]bool, error) {
	sel := map[string]bool{}
	for _, v := range strings.Split(value, ",") {
		v = strings.TrimSpace(v)
		switch {
		case v == "all":
			for _, a := range allowed {
				sel[a] = true
			}
		case slices.Contains(allowed, v):
			sel[v] = true
		default:
			return nil, fmt.Errorf("-%s: %q is not one of all,%s", flagName, v, strings.Join(allowed, ","))
		}
	}
	return sel, nil
}
