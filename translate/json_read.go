package translate

import (
	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// Reading the parts of a forwarded JSON reply that its index (json_index.go)
// points at, each in one walk (jsonscan.Iter) instead of one gjson look-up
// per path from the top: the usage object's counts, the tools of a
// Responses output or an Anthropic content. Each value is the one gjson's
// Get would find; keys are compared raw, which the index allows only for
// replies without escapes in keys.

// jsonSpan is the bounds of a value in a document; end 0: none.
type jsonSpan struct{ v, end int }

// number reads the value as gjson reads a number, ok false when it is
// not one.
func (sp jsonSpan) number(s string) (float64, bool) {
	if sp.end == 0 {
		return 0, false
	}
	return jsonscan.Number(s[sp.v:sp.end])
}

// count is count for the value.
func (sp jsonSpan) count(s string) usageCount {
	if f, ok := sp.number(s); ok {
		n, ok := countOf(f)
		return usageCount{n, ok}
	}
	return usageCount{}
}

// costAt records the cost a usage object gave (usage.cost), as setCostFrom.
func (r *Reply) costAt(s string, cost jsonSpan) {
	if f, ok := cost.number(s); ok {
		r.setRankedCost(f, costUsage)
	}
}

// readUsageIndexed reads the reply's usage object by the protocol's usage
// names, and its cost, from where the index found their counts.
func (r *Reply) readUsageIndexed(s string, x *jsonIndex, n *usageNames) {
	if x.top[topUsage] == 0 {
		return
	}
	var c [maxUsageSlots]usageCount
	k := len(n.slots) - 1
	for i := 0; i < k; i++ {
		c[i] = x.usageSpan(s, n.slots[i]).count(s)
	}
	r.Usage.applyAs(n, c[:k])
	r.costAt(s, x.usageSpan(s, n.slots[k]))
}

// usageSpan is the value of a usage slot.
func (x *jsonIndex) usageSpan(s string, slot int) jsonSpan {
	if x.usage[slot] == 0 {
		return jsonSpan{}
	}
	v := jsonscan.Space(s, x.usage[slot])
	return jsonSpan{v, jsonscan.SkipValue(s, v)}
}

// walkToolItems adds the tools the items of the array (or the values of
// the object) at s[v] name, as addItemTool does for each item that gjson's
// ForEach visits: the items of a Responses output, the blocks of an
// Anthropic content. The index finds them in the pass that validates a
// reply; this walk reads a reply with more of them than the index holds.
func walkToolItems(s string, v int, m *Meta, toolOf func(string) (string, bool)) {
	if s[v] != '[' && s[v] != '{' {
		return
	}
	it := jsonscan.IterAt(s, v)
	for _, item, ok := it.Next(); ok; _, item, ok = it.Next() {
		if s[item] != '{' {
			continue
		}
		typ, name := -1, -1 // the first of each, as gjson's Get finds it
		fields := jsonscan.IterAt(s, item)
		for k, f, ok := fields.Next(); ok; k, f, ok = fields.Next() {
			switch {
			case typ < 0 && jsonscan.KeyIs(k, "type"):
				typ = f
			case name < 0 && jsonscan.KeyIs(k, "name"):
				name = f
			}
		}
		it.SkipTo(fields.End())
		addItemToolAt(s, typ, name, m, toolOf)
	}
}

// addItemToolAt adds the tool of an item whose first type and name values
// start at typ and name (-1: none there), as addItemTool does.
func addItemToolAt(s string, typ, name int, m *Meta, toolOf func(string) (string, bool)) {
	if typ < 0 {
		return
	}
	t, isStr := strAt(s, typ)
	if !isStr {
		return
	}
	tool, byName := toolOf(t)
	if !byName {
		m.AddTool(tool) // "" adds nothing
		return
	}
	if name >= 0 {
		if n, ok := strAt(s, name); ok {
			m.AddTool(n)
		}
	}
}
