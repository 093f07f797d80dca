package caddymodule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The comparisons of the conformance README, written independently of the
// module's own parsers so that a bug there cannot hide itself here.

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

// jsonEqualBytes: same JSON value, numbers by value, key order ignored.
func jsonEqualBytes(a, b []byte) (bool, error) {
	va, err := decodeJSON(a)
	if err != nil {
		return false, fmt.Errorf("got: %w", err)
	}
	vb, err := decodeJSON(b)
	if err != nil {
		return false, fmt.Errorf("want: %w", err)
	}
	return matchValue(va, vb, true, "") == nil, nil
}

// jsonMatches: every key of the expected object is present and matches,
// recursively; arrays match element by element with the same length.
func jsonMatches(got, want []byte) error {
	vg, err := decodeJSON(got)
	if err != nil {
		return fmt.Errorf("got is not JSON: %w", err)
	}
	vw, err := decodeJSON(want)
	if err != nil {
		return fmt.Errorf("want is not JSON: %w", err)
	}
	return matchValue(vg, vw, false, "$")
}

func matchValue(got, want any, exact bool, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %T, want object", path, got)
		}
		if exact && len(g) != len(w) {
			return fmt.Errorf("%s: got %d keys, want %d", path, len(g), len(w))
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing", path, k)
			}
			if err := matchValue(gv, wv, exact, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: got %T, want array", path, got)
		}
		if len(g) != len(w) {
			return fmt.Errorf("%s: got %d elements, want %d", path, len(g), len(w))
		}
		for i := range w {
			if err := matchValue(g[i], w[i], exact, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Errorf("%s: got %v, want number %s", path, got, w)
		}
		gf, e1 := g.Float64()
		wf, e2 := w.Float64()
		if g != w && (e1 != nil || e2 != nil || gf != wf) {
			return fmt.Errorf("%s: got %s, want %s", path, g, w)
		}
		return nil
	default:
		if got != want {
			return fmt.Errorf("%s: got %#v, want %#v", path, got, want)
		}
		return nil
	}
}

// clientEvent is one event as a client parses it.
type clientEvent struct{ data []byte }

// parseClientEvents splits a body into events by the SSE rules: CRLF, LF or
// CR line ends, blank line dispatch, comments skipped, data lines joined.
// Events without data are not events.
func parseClientEvents(body []byte) []clientEvent {
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	text = strings.TrimPrefix(text, "\uFEFF")
	var events []clientEvent
	var data []string
	has := false
	dispatch := func() {
		if has {
			events = append(events, clientEvent{data: []byte(strings.Join(data, "\n"))})
		}
		data, has = nil, false
	}
	for _, line := range strings.Split(text, "\n") {
		switch {
		case line == "":
			dispatch()
		case strings.HasPrefix(line, ":"):
		default:
			field, value, found := strings.Cut(line, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			if field == "data" {
				data = append(data, value)
				has = true
			}
		}
	}
	dispatch()
	return events
}

// streamContent joins the reply text over all events, as the conformance
// README says: choice 0's delta.content of chat chunks, the delta of
// Responses response.output_text.delta events, and the delta.text of
// Anthropic content_block_delta events with a text_delta.
func streamContent(events []clientEvent) string {
	var b strings.Builder
	for _, e := range events {
		var v struct {
			Type    string          `json:"type"`
			Delta   json.RawMessage `json:"delta"`
			Choices []struct {
				Index *int `json:"index"`
				Delta struct {
					Content *string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal(e.data, &v) != nil {
			continue
		}
		switch v.Type {
		case "response.output_text.delta":
			var s string
			if json.Unmarshal(v.Delta, &s) == nil {
				b.WriteString(s)
			}
			continue
		case "content_block_delta":
			var d struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(v.Delta, &d) == nil && d.Type == "text_delta" {
				b.WriteString(d.Text)
			}
			continue
		}
		for _, c := range v.Choices {
			if (c.Index == nil || *c.Index == 0) && c.Delta.Content != nil {
				b.WriteString(*c.Delta.Content)
			}
		}
	}
	return b.String()
}

// streamMeta is the meta of the last event that has one: its top-level
// meta, or response.meta in a Responses event.
func streamMeta(events []clientEvent) []byte {
	var meta []byte
	for _, e := range events {
		if m := jsonField(e.data, "meta"); m != nil {
			meta = m
		} else if m := jsonField(jsonField(e.data, "response"), "meta"); m != nil {
			meta = m
		}
	}
	return meta
}

// jsonField returns the raw value of a top-level key of a JSON object.
func jsonField(b []byte, key string) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return nil
	}
	v, ok := obj[key]
	if !ok {
		return nil
	}
	return v
}

func jsonContent(b []byte) string {
	var v struct {
		Content *string `json:"content"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	if v.Content != nil {
		return *v.Content
	}
	if len(v.Choices) > 0 && v.Choices[0].Message.Content != nil {
		return *v.Choices[0].Message.Content
	}
	return ""
}

// normaliseEvent: compact JSON, keys sorted, no HTML escaping, numbers as
// written, top-level id and created replaced by "*"; non-JSON data as it is.
func normaliseEvent(data []byte) string {
	v, err := decodeJSON(data)
	if err != nil {
		return string(data)
	}
	if obj, ok := v.(map[string]any); ok {
		for _, k := range []string{"id", "created"} {
			if _, has := obj[k]; has {
				obj[k] = "*"
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(data)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
