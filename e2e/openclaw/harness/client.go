package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/llm-meta/llm_meta/openclaw"
)

// reply is what one request gave: enough to check it is whole, on time, and
// which tools its meta names.
type reply struct {
	status  int
	id      string   // the chat completion's or response's id, when seen
	text    string   // the reply text (content, deltas, output_text)
	tools   []string // meta.tools_used
	done    bool     // a stream's [DONE] (or terminal event) arrived
	elapsed time.Duration
	raw     string // the body, for failure messages (cut)
}

var httpClient = &http.Client{Timeout: 3 * time.Minute}

// post sends body to url and reads the whole reply, JSON or SSE.
func post(url string, body string, headers ...string) (reply, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	r := reply{status: resp.StatusCode}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		err = r.readSSE(resp.Body)
	} else {
		var b []byte
		b, err = io.ReadAll(resp.Body)
		r.readJSON(b)
	}
	r.elapsed = time.Since(start)
	if err != nil {
		return r, fmt.Errorf("reading the reply of %s: %w", url, err)
	}
	return r, nil
}

// readJSON reads a chat completion, a Responses object or a run-once reply.
func (r *reply) readJSON(b []byte) {
	r.raw = cut(string(b))
	v := gjson.ParseBytes(b)
	r.id = v.Get("id").Str
	switch {
	case v.Get("content").Type == gjson.String: // run-once
		r.text = v.Get("content").Str
	case v.Get("object").Str == "response":
		v.Get("output.#.content.#.text").ForEach(func(_, t gjson.Result) bool {
			t.ForEach(func(_, s gjson.Result) bool { r.text += s.Str; return true })
			return true
		})
	default:
		r.text = v.Get("choices.0.message.content").Str
	}
	r.addTools(v.Get("meta.tools_used"))
	r.done = true
}

// readSSE reads an OpenAI chunk stream or a Responses event stream.
func (r *reply) readSSE(body io.Reader) error {
	var all bytes.Buffer
	sc := bufio.NewScanner(io.TeeReader(body, &all))
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			r.done = true
			continue
		}
		v := gjson.Parse(data)
		switch typ := v.Get("type").Str; {
		case strings.HasPrefix(typ, "response."):
			if typ == "response.output_text.delta" {
				r.text += v.Get("delta").Str
			}
			if typ == "response.completed" || typ == "response.failed" || typ == "response.incomplete" {
				r.id = v.Get("response.id").Str
				r.addTools(v.Get("response.meta.tools_used"))
				r.done = true
			}
		default:
			if id := v.Get("id").Str; id != "" {
				r.id = id
			}
			r.text += v.Get("choices.0.delta.content").Str
			r.addTools(v.Get("meta.tools_used"))
		}
	}
	r.raw = cut(all.String())
	return sc.Err()
}

func (r *reply) addTools(v gjson.Result) {
	v.ForEach(func(_, t gjson.Result) bool {
		r.tools = append(r.tools, t.Str)
		return true
	})
}

func (r reply) hasTool(name string) bool {
	for _, t := range r.tools {
		if t == name {
			return true
		}
	}
	return false
}

func cut(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// history asks the gateway itself for a session's transcript, as the
// module does, and returns the tools of the run (package openclaw's reading).
// runID "" means the session's last run.
func history(gateway, token, sessionKey, runID string) (tools []string, lastRun string, took time.Duration, err error) {
	req, err := http.NewRequest(http.MethodPost, gateway+"/tools/invoke", bytes.NewReader(openclaw.HistoryRequest(sessionKey)))
	if err != nil {
		return nil, "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, "", 0, fmt.Errorf("sessions_history: %w", err)
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, "", 0, fmt.Errorf("sessions_history: status %d, %v", resp.StatusCode, err)
	}
	gjson.GetBytes(answer, "result.details.messages.#.__openclaw.runId").ForEach(func(_, id gjson.Result) bool {
		lastRun = id.Str
		return true
	})
	if runID == "" {
		runID = lastRun
	}
	err = openclaw.TranscriptTools(string(answer), runID, func(n string) { tools = append(tools, n) })
	return tools, lastRun, time.Since(start), err
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
