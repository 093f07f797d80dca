package translate

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// Hustle collects the data elements of a stream (SPEC 5.1: the elements of
// data stream parts 2 and 8, the data of UI stream data-* parts) for
// meta.hustle. The five kinds Agent Hustle sends (reasoning, intent_context,
// dev_tools_info, path_info, token_usage) are kept as they came, a later one
// replacing an earlier one of the same kind; any other element is appended
// to data, up to MaxHustleData.
//
// The zero value is empty and ready to use.
type Hustle struct {
	// Max bounds the bytes kept (0: DefaultMaxMetaBytes): they end up in
	// a meta bounded the same way, so what would not fit there is dropped
	// as it comes rather than held (SPEC 8.1).
	Max int

	kinds [len(hustleKinds)][]byte // raw JSON per kind, nil when absent
	order [len(hustleKinds)]int8   // kinds in first-seen order
	n     int                      // kinds seen
	data  [][]byte                 // other elements, raw JSON
	held  int                      // bytes in kinds and data
	over  bool                     // an element was dropped for Max
}

// MaxHustleData is the most elements meta.hustle.data keeps; later ones are
// dropped.
const MaxHustleData = 64

// hustleKinds are the types of the elements kept by kind.
var hustleKinds = [...]string{"reasoning", "intent_context", "dev_tools_info", "path_info", "token_usage"}

// AddElement takes one data element, raw JSON. raw is copied. An element
// that is not valid JSON is ignored.
func (h *Hustle) AddElement(raw []byte) {
	raw = bytes.TrimSpace(raw)
	s := strView(raw)
	if !jsonscan.Valid(s) {
		return
	}
	// A type that is no string reads as "", no kind.
	if k := slices.Index(hustleKinds[:], gjson.Get(s, "type").Str); k >= 0 && raw[0] == '{' {
		if !h.take(len(raw) - len(h.kinds[k])) {
			return
		}
		if h.kinds[k] == nil {
			h.order[h.n] = int8(k)
			h.n++
		}
		h.kinds[k] = append(h.kinds[k][:0], raw...)
		return
	}
	if len(h.data) >= MaxHustleData || !h.take(len(raw)+1) {
		return
	}
	h.data = append(h.data, append([]byte(nil), raw...))
}

// take holds n more bytes when they fit within Max, noting a drop when not.
func (h *Hustle) take(n int) bool {
	max := h.Max
	if max <= 0 {
		max = DefaultMaxMetaBytes
	}
	if h.held+n > max {
		h.over = true
		return false
	}
	h.held += n
	return true
}

// Empty reports whether no element came.
func (h *Hustle) Empty() bool { return h.n == 0 && len(h.data) == 0 }

// AppendTo sets m's hustle key to an object holding the kinds in first-seen
// order, then "data":[...] when other elements came. Nothing is set when h is
// empty. When summary is true, h holds any of the five kinds, and m has no
// structured_result, it also sets structured_result to the key_value summary
// of SPEC 5.1 (when that summary has at least one entry).
func (h *Hustle) AppendTo(m *Meta, summary bool) {
	if h.over {
		m.dropped() // reported with the meta's own drops, once
	}
	if h.Empty() {
		return
	}
	// Each member and element is followed by a comma, the last one's
	// replaced by the closing bracket. held counts the elements and a
	// comma after each datum; a kind's name and punctuation take at most
	// 20 bytes more.
	b := make([]byte, 0, h.held+16+20*len(hustleKinds))
	b = append(b, '{')
	for _, k := range h.order[:h.n] {
		b = jsonscan.AppendString(b, hustleKinds[k])
		b = append(b, ':')
		b = append(append(b, h.kinds[k]...), ',')
	}
	if len(h.data) > 0 {
		b = append(b, `"data":[`...)
		for _, e := range h.data {
			b = append(append(b, e...), ',')
		}
		b = append(b[:len(b)-1], "],"...)
	}
	b = append(b[:len(b)-1], '}')
	m.Set(KeyHustle, b)
	if summary && h.n > 0 && !m.Has(KeyStructuredResult) {
		if sr := h.summary(); sr != nil {
			m.Set(KeyStructuredResult, sr)
		}
	}
}

// kind is the element of the first of names (hustleKinds) that came.
func (h *Hustle) kind(names ...string) gjson.Result {
	for _, name := range names {
		if k := slices.Index(hustleKinds[:], name); h.kinds[k] != nil {
			return gjson.ParseBytes(h.kinds[k])
		}
	}
	return gjson.Result{}
}

// summary is the key_value summary of SPEC 5.1, or nil when it would have
// no entry. Each entry is there only when its source is
// present: not missing, not null, not an empty string or list.
func (h *Hustle) summary() []byte {
	reasoning := h.kind("reasoning")
	intent := h.kind("intent_context")
	devTools := h.kind("dev_tools_info")
	tokens := h.kind("token_usage", "path_info")

	dst := []byte(`{"type":"key_value","entries":[`)
	add := func(key, value string) {
		if value == "" {
			return
		}
		if dst[len(dst)-1] == '}' { // not the first
			dst = append(dst, ',')
		}
		dst = jsonscan.AppendString(append(dst, `{"key":`...), key)
		dst = append(jsonscan.AppendString(append(dst, `,"value":`...), value), '}')
	}

	add("Intent", cmp.Or(summaryText(reasoning.Get("activeIntent")), summaryText(intent.Get("intentContext.activeIntent"))))
	add("Reasoning", summaryText(reasoning.Get("thinking")))
	add("Categories", cmp.Or(summaryList(devTools.Get("qualifiedCategories")), summaryList(reasoning.Get("categories"))))
	add("Networks", summaryList(reasoning.Get("networks")))
	add("Confidence", summaryText(reasoning.Get("confidence")))
	add("Available tools", summaryText(devTools.Get("toolCount")))
	in, out := summaryText(tokens.Get("tokensIn")), summaryText(tokens.Get("tokensOut"))
	switch {
	case in != "" && out != "":
		add("Tokens", in+" in / "+out+" out")
	case in != "":
		add("Tokens", in+" in")
	case out != "":
		add("Tokens", out+" out")
	}
	if cost := summaryText(tokens.Get("costUsd")); cost != "" {
		add("Cost", "$"+cost)
	}
	if dst[len(dst)-1] == '[' {
		return nil
	}
	return append(dst, "]}"...)
}

// summaryText is a value as the summary shows it: strings as they are,
// numbers as their shortest decimal, never in exponent form (an integer
// literal as written, so that counts above 2^53 stay exact), other values
// by the rule of SPEC 4.1; "" when missing or null.
func summaryText(v gjson.Result) string {
	if v.Type == gjson.Number && strings.TrimLeft(v.Raw, "-0123456789") != "" {
		return strconv.FormatFloat(v.Num, 'f', -1, 64)
	}
	return valueAsString(v) // a number's raw text; "" when missing or null
}

// summaryList joins the items of an array with ", ", skipping empty ones;
// "" when v is not an array or has no item to show.
func summaryList(v gjson.Result) string {
	if !v.IsArray() {
		return ""
	}
	var b []byte
	v.ForEach(func(_, e gjson.Result) bool {
		s := summaryText(e)
		if s == "" {
			return true
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, s...)
		return true
	})
	return string(b)
}

// usageInto gives the record Hustle's token usage when the reply reported
// none of its own (SPEC 9.1: token_usage, else path_info), and Hustle's
// costUsd as the upstream's cost (SPEC 9.2: after usage.cost and the cost
// header).
func (h *Hustle) usageInto(r *Reply) {
	v := h.kind("token_usage", "path_info")
	if !v.Exists() {
		return
	}
	if !r.Usage.Known() {
		r.Usage.read(v, &hustleUsage)
	}
	if c := v.Get("costUsd"); c.Type == gjson.Number {
		r.setRankedCost(c.Num, costHustle)
	}
}

// hustleUsage names the counts of Hustle's token_usage (or path_info)
// element: tokensIn, tokensOut, cachedTokens. Its totalTokens counts
// something else, so the total is always input + output; its costUsd has
// a rank of its own (usageInto).
var hustleUsage = usageNames{paths: []string{"tokensIn", "tokensOut", "", "cachedTokens", "", ""}}
