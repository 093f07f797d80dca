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

// walkFields finds, in one pass over the members of the object at s[o],
// the value of each of paths (a key, or two joined by a dot) as gjson's Get
// finds it: the first member of that name; for two keys, the first member
// of the first name through which the second leads. It stops once all are
// found, unless whole asks for the object to be read to its end, which it
// then returns (-1 otherwise).
func walkFields(s string, o int, paths []string, vals []jsonSpan, whole bool) int {
	left := len(paths)
	it := iterAt(s, o)
	for k, v, ok := it.next(); ok && (whole || left > 0); k, v, ok = it.next() {
		if left == 0 {
			continue
		}
		for j, path := range paths {
			if vals[j].end != 0 || len(path) < len(k) || path[:len(k)] != k {
				continue
			}
			switch rest := path[len(k):]; {
			case rest == "":
				vals[j] = jsonSpan{v, walkValue(s, v)}
				left--
			case rest[0] == '.' && s[v] == '{':
				if cv, ce, found := walkMember(s, v, rest[1:]); found {
					vals[j] = jsonSpan{cv, ce}
					left--
				}
			}
		}
	}
	if !whole {
		return -1
	}
	return it.i
}

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

// readUsageAt reads the usage object at s[o] (ReadChat, ReadResponses: the
// shape says which) and its cost.
func (r *Reply) readUsageAt(s string, o int, shape *usageShape) {
	var c [5]usageCount
	r.readUsageFields(s, o, shape[:], c[:])
	r.Usage.apply(&c)
}

// readAnthropicUsageAt reads the Anthropic usage object at s[o]
// (UpdateAnthropic) and its cost.
func (r *Reply) readAnthropicUsageAt(s string, o int) {
	var c [4]usageCount
	r.readUsageFields(s, o, anthropicUsage[:], c[:])
	r.Usage.applyAnthropic(&c)
}

// readUsageFields reads the counts a usage object at s[o] gives under
// names (at most five) into c, and records its cost.
func (r *Reply) readUsageFields(s string, o int, names []string, c []usageCount) {
	var paths [6]string
	var vals [6]jsonSpan
	n := copy(paths[:], names)
	paths[n] = "cost"
	walkFields(s, o, paths[:n+1], vals[:n+1], false)
	for i := range c {
		c[i] = vals[i].count(s)
	}
	r.costAt(s, vals[n])
}

// walkToolItems adds the tools the items of the array (or the values of
// the object) at s[v] name, as addItemTool does for each item that gjson's
// ForEach visits: the items of a Responses output, the blocks of an
// Anthropic content.
func walkToolItems(s string, v int, m *Meta, toolOf func(string) (string, bool)) {
	if s[v] != '[' && s[v] != '{' {
		return
	}
	var fields [2]jsonSpan
	paths := [2]string{"type", "name"}
	it := iterAt(s, v)
	for _, item, ok := it.next(); ok; _, item, ok = it.next() {
		if s[item] != '{' {
			continue
		}
		fields = [2]jsonSpan{}
		it.skipTo(walkFields(s, item, paths[:], fields[:], true))
		t := fields[0]
		if t.end == 0 || s[t.v] != '"' {
			continue
		}
		tool, byName := toolOf(jsonStr(s[t.v:t.end]))
		if n := fields[1]; !byName {
			m.AddTool(tool)
		} else if n.end != 0 && s[n.v] == '"' {
			m.AddTool(jsonStr(s[n.v:n.end]))
		}
	}
}
