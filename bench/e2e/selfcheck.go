package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// The self-check, before any measurement: one request of every workload
// through each Caddy. A benchmark of a broken pipeline is worthless, so
// the run stops unless
//   - plain reverse_proxy passed the upstream's bytes unchanged;
//   - the llm_meta reply carries a meta whose usage is the upstream's and
//     whose tools_used names exactly the tools called (none without tools);
//   - a converted stream is chat chunks whose text is the upstream's.
// The events each side read are what every later request must read.

func selfCheck(plain, mod *caddyProc, loads []*workload) error {
	c := newClient(1)
	defer c.CloseIdleConnections()
	buf := make([]byte, 32<<10)
	for _, wl := range loads {
		want := bytes.Join(wl.parts, nil)
		for side, p := range []*caddyProc{plain, mod} {
			var got bytes.Buffer
			var s samples
			n, err := exchange(c, p.url, wl, side, buf, &got, &s)
			if err != nil {
				return fmt.Errorf("self-check %s via %s: %v", wl.name(), p.name, err)
			}
			if side == plainSide && !bytes.Equal(got.Bytes(), want) {
				return fmt.Errorf("self-check %s: plain reverse_proxy changed the reply (%d bytes in, %d out)", wl.name(), len(want), got.Len())
			}
			if side == moduleSide {
				if err := checkModuleReply(wl, got.Bytes()); err != nil {
					return fmt.Errorf("self-check %s via llm_meta: %v\nreply:\n%s", wl.name(), err, clip(got.Bytes()))
				}
			}
			wl.want[side] = n
		}
	}
	return nil
}

// clip is the start and the end of a long reply, for an error message.
func clip(b []byte) []byte {
	if len(b) <= 1600 {
		return b
	}
	return slices.Concat(b[:600], []byte("\n…\n"), b[len(b)-1000:])
}

// checkModuleReply finds the meta in the reply and checks it against the
// upstream's script.
func checkModuleReply(wl *workload, reply []byte) error {
	var objs []map[string]any
	if wl.kind == kindJSON {
		var o map[string]any
		if err := json.Unmarshal(reply, &o); err != nil {
			return fmt.Errorf("reply is not a JSON object: %v", err)
		}
		objs = append(objs, o)
	} else {
		var done bool
		var err error
		if objs, done, err = sseObjects(reply); err != nil {
			return err
		}
		// Chat chunks (and so a conversion's output) end with [DONE].
		if wantDone := wl.kind == kindConvert || wl.proto.name == "chat"; done != wantDone {
			return fmt.Errorf("[DONE] at the end: %v, want %v", done, wantDone)
		}
	}
	var metas []map[string]any
	for _, o := range objs {
		if m, ok := o["meta"].(map[string]any); ok {
			metas = append(metas, m)
		}
		if r, ok := o["response"].(map[string]any); ok { // Responses: the terminal event's response
			if m, ok := r["meta"].(map[string]any); ok {
				metas = append(metas, m)
			}
		}
	}
	if len(metas) != 1 {
		return fmt.Errorf("%d objects carry a meta, want 1", len(metas))
	}
	meta := metas[0]
	usage, _ := meta["usage"].(map[string]any)
	if usage["input_tokens"] != float64(wl.script.in) || usage["output_tokens"] != float64(wl.script.out) {
		return fmt.Errorf("meta.usage %v, want input_tokens %d, output_tokens %d", meta["usage"], wl.script.in, wl.script.out)
	}
	var tools []string
	if list, ok := meta["tools_used"].([]any); ok {
		for _, t := range list {
			name, _ := t.(string)
			tools = append(tools, name)
		}
	}
	if !slices.Equal(tools, wl.script.toolNames()) {
		return fmt.Errorf("meta.tools_used %q, want %q", tools, wl.script.toolNames())
	}
	if wl.kind == kindConvert {
		return checkConverted(wl, objs)
	}
	return nil
}

// checkConverted: every event a chat chunk, their text the upstream's.
func checkConverted(wl *workload, objs []map[string]any) error {
	var text string
	for _, o := range objs {
		if o["object"] != "chat.completion.chunk" {
			return fmt.Errorf("converted event %v is not a chat.completion.chunk", o)
		}
		choices, _ := o["choices"].([]any)
		for _, ch := range choices {
			delta, _ := ch.(map[string]any)["delta"].(map[string]any)
			s, _ := delta["content"].(string)
			text += s
		}
	}
	if text != wl.script.fullText() {
		return fmt.Errorf("converted text %q, want %q", text, wl.script.fullText())
	}
	return nil
}

// sseObjects is the JSON object of each event's data (one data line per
// event in these streams), [DONE] left out; done says whether it came.
func sseObjects(reply []byte) (objs []map[string]any, done bool, err error) {
	for _, ev := range bytes.Split(reply, []byte("\n\n")) {
		if len(bytes.TrimSpace(ev)) == 0 {
			continue
		}
		var data []byte
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				data = d
			}
		}
		if string(data) == "[DONE]" {
			done = true
			continue
		}
		var o map[string]any
		if err := json.Unmarshal(data, &o); err != nil {
			return nil, false, fmt.Errorf("event %q: data is not a JSON object: %v", ev, err)
		}
		objs = append(objs, o)
	}
	if len(objs) == 0 {
		return nil, false, errors.New("no events")
	}
	return objs, done, nil
}
