package translate

import "strconv"

// Reading the parts of a forwarded JSON reply that its index (json_index.go)
// points at, each in one walk (json_walk.go) instead of one gjson look-up
// per path from the top: the usage object's counts, the tools of a
// Responses output or an Anthropic content. Each value is the one gjson's
// Get would find; keys are compared raw, which the index allows only for
// replies without escapes in keys.

// jsonSpan is the bounds of a value in a document; end 0: none.
type jsonSpan struct{ v, end int }

// number reads the value as gjson reads a number (strconv.ParseFloat; a
// plain integer of up to 15 digits directly), ok false when it is not one.
func (sp jsonSpan) number(s string) (float64, bool) {
	if sp.end == 0 {
		return 0, false
	}
	raw := s[sp.v:sp.end]
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	if len(raw) <= 15 {
		n := 0
		for i := 0; i < len(raw); i++ {
			c := raw[i]
			if c < '0' || c > '9' {
				goto parse
			}
			n = n*10 + int(c-'0')
		}
		return float64(n), true
	}
parse:
	f, _ := strconv.ParseFloat(raw, 64) // a valid document's number: ±Inf at worst, as in gjson
	return f, true
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
	v := walkSpace(s, x.usage[slot])
	return jsonSpan{v, walkValue(s, v)}
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
	it := iterAt(s, v)
	for _, item, ok := it.next(); ok; _, item, ok = it.next() {
		if s[item] != '{' {
			continue
		}
		typ, name := -1, -1 // the first of each, as gjson's Get finds it
		fields := iterAt(s, item)
		for k, f, ok := fields.next(); ok; k, f, ok = fields.next() {
			switch {
			case k == "type" && typ < 0:
				typ = f
			case k == "name" && name < 0:
				name = f
			}
		}
		it.skipTo(fields.i)
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
