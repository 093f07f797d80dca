package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The peers' self-check, before anything is measured: one request of
// every workload through each contender. Each must give the upstream's
// answer (its text and the names of its tool calls, read in the
// protocol's own format, so a gateway that re-serializes the reply passes
// as long as it says the same); the upstream direct and plain
// reverse_proxy must pass its bytes unchanged, and llm_meta's reply must
// carry the meta (checkModuleReply). The events each contender's client
// read are what every later request must read.

// peersChecked is what the self-check found: the events each contender's
// client reads per workload, and the workloads whose bytes each changed.
type peersChecked struct {
	want    map[*workload][]int
	changed [nContenders][]string
}

func peersCheck(cts []*contender, loads []*workload) (*peersChecked, error) {
	ck := &peersChecked{want: map[*workload][]int{}}
	buf := make([]byte, 32<<10)
	for _, ct := range cts {
		c := peerClient(ct, 1)
		defer c.CloseIdleConnections()
		for _, wl := range loads {
			var got bytes.Buffer
			var s samples
			n, err := exchange(c, ct.url, wl, ct.side, buf, &got, &s)
			if err != nil {
				return nil, fmt.Errorf("self-check %s via %s: %w\nreply:\n%s", wl.name(), ct.name, err, clip(got.Bytes()))
			}
			reply := got.Bytes()
			same := bytes.Equal(reply, bytes.Join(wl.parts, nil))
			if !same {
				ck.changed[ct.id] = append(ck.changed[ct.id], workloadLabel(wl))
			}
			switch ct.id {
			case ctDirect, ctPlain:
				if !same {
					err = fmt.Errorf("the reply is not the upstream's bytes")
				}
			case ctModule:
				err = checkModuleReply(wl, reply)
			}
			if err == nil {
				err = checkAnswer(wl, reply)
			}
			if err != nil {
				return nil, fmt.Errorf("self-check %s via %s: %w\nreply:\n%s", wl.name(), ct.name, err, clip(reply))
			}
			if ck.want[wl] == nil {
				ck.want[wl] = make([]int, len(cts))
			}
			ck.want[wl][ct.id] = n
		}
	}
	return ck, nil
}

// checkAnswer reads the text and the tool calls' names out of a reply in
// wl's protocol and format and holds them against the upstream's script.
func checkAnswer(wl *workload, reply []byte) error {
	var text strings.Builder
	var tools []string
	if wl.kind == kindJSON {
		var o map[string]any
		if err := json.Unmarshal(reply, &o); err != nil {
			return fmt.Errorf("reply is not a JSON object: %w", err)
		}
		answerJSON(wl.proto.name, o, &text, &tools)
	} else {
		objs, _, err := sseObjects(reply)
		if err != nil {
			return err
		}
		for _, o := range objs {
			answerEvent(wl.proto.name, o, &text, &tools)
		}
	}
	if text.String() != wl.script.fullText() {
		return fmt.Errorf("text %q, want %q", clipString(text.String()), clipString(wl.script.fullText()))
	}
	if !slices.Equal(tools, wl.script.toolNames()) {
		return fmt.Errorf("tool calls %q, want %q", tools, wl.script.toolNames())
	}
	return nil
}

func clipString(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:40] + "…" + s[len(s)-40:]
}

// answerJSON collects a whole reply's text and tool names: a
// chat.completion's message, a Responses object's output items, an
// Anthropic message's content blocks.
func answerJSON(proto string, o map[string]any, text *strings.Builder, tools *[]string) {
	switch proto {
	case "chat":
		for _, ch := range list(o["choices"]) {
			msg := obj(obj(ch)["message"])
			text.WriteString(str(msg["content"]))
			for _, tc := range list(msg["tool_calls"]) {
				*tools = append(*tools, str(obj(obj(tc)["function"])["name"]))
			}
		}
	case "responses":
		for _, it := range list(o["output"]) {
			item := obj(it)
			switch item["type"] {
			case "message":
				for _, p := range list(item["content"]) {
					text.WriteString(str(obj(p)["text"]))
				}
			case "function_call":
				*tools = append(*tools, str(item["name"]))
			}
		}
	case "anthropic":
		for _, b := range list(o["content"]) {
			block := obj(b)
			switch block["type"] {
			case "text":
				text.WriteString(str(block["text"]))
			case "tool_use":
				*tools = append(*tools, str(block["name"]))
			}
		}
	}
}

// answerEvent collects one stream event's text and tool names: chat
// chunks' deltas, Responses' text deltas and function_call items as they
// are added, Anthropic's text deltas and tool_use blocks as they start.
func answerEvent(proto string, o map[string]any, text *strings.Builder, tools *[]string) {
	switch proto {
	case "chat":
		for _, ch := range list(o["choices"]) {
			delta := obj(obj(ch)["delta"])
			text.WriteString(str(delta["content"]))
			for _, tc := range list(delta["tool_calls"]) {
				if name := str(obj(obj(tc)["function"])["name"]); name != "" {
					*tools = append(*tools, name)
				}
			}
		}
	case "responses":
		switch o["type"] {
		case "response.output_text.delta":
			text.WriteString(str(o["delta"]))
		case "response.output_item.added":
			if item := obj(o["item"]); item["type"] == "function_call" {
				*tools = append(*tools, str(item["name"]))
			}
		}
	case "anthropic":
		switch o["type"] {
		case "content_block_delta":
			if d := obj(o["delta"]); d["type"] == "text_delta" {
				text.WriteString(str(d["text"]))
			}
		case "content_block_start":
			if b := obj(o["content_block"]); b["type"] == "tool_use" {
				*tools = append(*tools, str(b["name"]))
			}
		}
	}
}

// Readings of decoded JSON that are empty where the shape differs.
func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func str(v any) string { s, _ := v.(string); return s }
