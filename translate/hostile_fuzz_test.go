package translate

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Fuzz targets for the hostile-input rewrites (SPEC 8.1): each one-pass
// version against the version it replaced (kept here as the reference, a
// path-based edit per element), and the bounds of Meta.

// trimMsgRef is one message as trimming sees it.
type trimMsgRef struct {
	raw    string
	role   string
	callID string // tool_call_id of a tool message
	size   int
	unit   int // -1: never removed (system, developer); -2: not yet grouped
}

// trimPromptRef trims a chat request body's messages to maxChars code points
// (SPEC 3.1). When messages were removed, out is body with the new messages
// array (every other byte kept), trimmedTo the size after trimming and
// trimmed true; otherwise out is body itself. maxChars <= 0 does nothing.
func trimPromptRef(body []byte, maxChars int) (out []byte, trimmedTo int64, trimmed bool) {
	if maxChars <= 0 {
		return body, 0, false
	}
	msgsRes := gjson.GetBytes(body, "messages")
	if !msgsRes.IsArray() {
		return body, 0, false
	}
	all := msgsRes.Array()
	msgs := make([]trimMsgRef, len(all))
	total := 0
	for i, m := range all {
		msgs[i] = trimMsgRef{raw: m.Raw, role: m.Get("role").Str, size: messageSize(m), unit: -2}
		if msgs[i].role == "tool" {
			msgs[i].callID = m.Get("tool_call_id").Str
		}
		total += msgs[i].size
	}
	if total <= maxChars {
		return body, 0, false
	}

	// Group the messages into units, numbered in order of their oldest member.
	var unitSize []int
	newUnit := func() int {
		unitSize = append(unitSize, 0)
		return len(unitSize) - 1
	}
	for i, m := range all {
		if msgs[i].unit != -2 {
			continue // already claimed by its assistant
		}
		role := msgs[i].role
		switch {
		case role == "system" || role == "developer":
			msgs[i].unit = -1
			continue
		case role == "assistant":
			u := newUnit()
			msgs[i].unit = u
			if calls := m.Get("tool_calls"); calls.IsArray() && calls.Get("#").Int() > 0 {
				claimAnswersRef(msgs, i, u, "tool", calls)
			} else if m.Get("function_call").IsObject() {
				claimAnswersRef(msgs, i, u, "function", gjson.Result{})
			}
		default:
			msgs[i].unit = newUnit()
		}
	}
	for _, m := range msgs {
		if m.unit >= 0 {
			unitSize[m.unit] += m.size
		}
	}
	protected := msgs[len(msgs)-1].unit

	removed := make([]bool, len(unitSize))
	changed := false
	for u := range unitSize {
		if total <= maxChars {
			break
		}
		if u == protected {
			continue
		}
		removed[u] = true
		changed = true
		total -= unitSize[u]
	}
	if !changed {
		return body, 0, false
	}

	arr := make([]byte, 0, len(msgsRes.Raw))
	arr = append(arr, '[')
	first := true
	for _, m := range msgs {
		if m.unit >= 0 && removed[m.unit] {
			continue
		}
		if !first {
			arr = append(arr, ',')
		}
		first = false
		arr = append(arr, m.raw...)
	}
	arr = append(arr, ']')
	next, err := sjson.SetRawBytes(body, "messages", arr)
	if err != nil {
		return body, 0, false
	}
	return next, int64(total), true
}

// claimAnswersRef puts into unit u the messages of role answerRole that answer
// the assistant message at index i: those directly following it, and (for
// tool calls) any later one whose tool_call_id is one of calls' ids.
func claimAnswersRef(msgs []trimMsgRef, i, u int, answerRole string, calls gjson.Result) {
	var ids []string
	calls.ForEach(func(_, c gjson.Result) bool {
		if id := c.Get("id"); id.Type == gjson.String && id.Str != "" {
			ids = append(ids, id.Str)
		}
		return true
	})
	following := true
	for j := i + 1; j < len(msgs); j++ {
		if !following && len(ids) == 0 {
			return
		}
		m := &msgs[j]
		if m.role != answerRole {
			following = false
			continue
		}
		if m.unit != -2 {
			continue // claimed by an earlier assistant
		}
		claimed := following
		for _, want := range ids {
			if m.callID == want {
				claimed = true
				break
			}
		}
		if claimed {
			m.unit = u
		}
	}
}

// stringifyStructuredResultRef is stringifyStructuredResult as it was: one
// sjson set per value.
func stringifyStructuredResultRef(raw []byte) []byte {
	sr := gjson.ParseBytes(raw)
	if !sr.IsObject() {
		return raw
	}
	var paths []string
	var vals []gjson.Result
	collect := func(path string, v gjson.Result) {
		if v.Exists() && v.Type != gjson.String {
			paths = append(paths, path)
			vals = append(vals, v)
		}
	}
	eachIndex := func(arr gjson.Result, fn func(i int, v gjson.Result)) {
		i := 0
		arr.ForEach(func(_, v gjson.Result) bool {
			fn(i, v)
			i++
			return true
		})
	}
	switch sr.Get("type").Str {
	case "list":
		if items := sr.Get("items"); items.IsArray() {
			eachIndex(items, func(i int, v gjson.Result) { collect("items."+strconv.Itoa(i), v) })
		}
	case "table":
		if h := sr.Get("headers"); h.IsArray() {
			eachIndex(h, func(i int, v gjson.Result) { collect("headers."+strconv.Itoa(i), v) })
		}
		if rows := sr.Get("rows"); rows.IsArray() {
			eachIndex(rows, func(i int, row gjson.Result) {
				if row.IsArray() {
					eachIndex(row, func(j int, v gjson.Result) {
						collect("rows."+strconv.Itoa(i)+"."+strconv.Itoa(j), v)
					})
				}
			})
		}
	case "key_value":
		if entries := sr.Get("entries"); entries.IsArray() {
			eachIndex(entries, func(i int, e gjson.Result) {
				if e.IsObject() {
					p := "entries." + strconv.Itoa(i) + "."
					collect(p+"key", e.Get("key"))
					collect(p+"value", e.Get("value"))
				}
			})
		}
	}
	if len(paths) == 0 {
		return raw
	}
	out := append([]byte(nil), raw...)
	for i, p := range paths {
		next, err := sjson.SetBytes(out, p, valueAsString(vals[i]))
		if err != nil {
			return raw
		}
		out = next
	}
	return out
}

var trimSeeds = []string{
	trimBody(sysJarvis, `{"role":"user","content":"First question about the weather?"}`, toolCall9, toolAns9,
		`{"role":"assistant","content":"It is 21 degrees."}`, `{"role":"user","content":"And tomorrow?"}`),
	`{"messages":[{"role":"assistant","tool_calls":[{"id":"a"},{"id":"b"}]},{"role":"user","content":"xx"},{"role":"tool","tool_call_id":"b","content":"yyyy"},{"role":"assistant","tool_calls":[{"id":"b"}]},{"role":"tool","tool_call_id":"a"},{"role":"tool","tool_call_id":"c"},{"role":"user","content":"zz"}]}`,
	`{"messages":[{"role":"assistant","function_call":{"name":"f"}},{"role":"function","content":"abc"},{"role":"function","content":"d"},{"role":"tool","content":"e"},{"role":"developer","content":"fff"},{"role":"user","content":[{"type":"text","text":"gg"},{"type":"image_url"}]}]}`,
	`{"messages":[{"role":"tool","tool_call_id":"x","content":"aaaa"},{"role":"assistant","tool_calls":[{"id":"x"}]},{"role":"tool","tool_call_id":"x","content":"bbbb"},{"role":"assistant","tool_calls":[]},{"role":"tool","content":"c"}]}`,
}

// The one-pass grouping removes exactly the messages the reference removed.
func FuzzTrimPromptAsBefore(f *testing.F) {
	for _, s := range trimSeeds {
		f.Add([]byte(s), 5)
	}
	f.Fuzz(func(t *testing.T, body []byte, max int) {
		if !jsonscan.Valid(string(body)) {
			return // the module trims only bodies it has validated
		}
		max %= 64
		out, size, trimmed := TrimPrompt(body, max)
		rout, rsize, rtrimmed := trimPromptRef(body, max)
		if trimmed != rtrimmed || size != rsize || !bytes.Equal(out, rout) {
			t.Fatalf("%s max %d:\n got %v %d %s\nwant %v %d %s", body, max, trimmed, size, out, rtrimmed, rsize, rout)
		}
	})
}

var structuredSeeds = []string{
	`{"type":"list","items":["a",1,2.50,-3e2,true,false,null,{"k": "v"},[1, "x"]]}`,
	`{"type":"table","headers":["PID",2],"rows":[["123",456],[null,{"a":[]}]]}`,
	`{"rows":[[1]],"type":"table","headers":[1],"rows":[[2]],"headers":"x"}`,
	`{"type":"key_value","entries":[{"value":1,"key":2,"key":3},7,{"key":"k"}]}`,
	`{"type":"list","type":"table","items":[1]}`,
	`{"type":"list","items":[1,"<&>\u2028","\u00e9",{"a":"<b>"}]}`,
	` { "type" : "list" , "items" : [ 1 , 2 ] } `,
}

// The one-pass rewrite writes exactly what the sjson sets wrote.
func FuzzStringifyStructuredResultAsBefore(f *testing.F) {
	for _, s := range structuredSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !jsonscan.Valid(string(raw)) || bytes.Contains(raw, []byte{'\\'}) {
			// Keys with escapes: sjson's paths and gjson's look-ups do not
			// agree on them, so there is no one reference to follow.
			return
		}
		got, want := stringifyStructuredResult(raw), stringifyStructuredResultRef(raw)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got %s\nwant %s", raw, got, want)
		}
	})
}

// rawMembers lists the top-level members of a JSON object as key=raw value.
func rawMembers(b []byte) []string {
	var out []string
	gjson.ParseBytes(b).ForEach(func(k, v gjson.Result) bool {
		out = append(out, k.Str+"="+v.Raw)
		return true
	})
	return out
}

// Removing members in one pass keeps every other member as it was, in
// order, and the JSON valid: for the request flags and for KeepLastCopies.
func FuzzRemoveMembers(f *testing.F) {
	for _, s := range []string{
		`{"run_once":true,"a":1,"run_once":false}`, ` { "run_once" : 1 , "b" : [1] , "enable_structured_output":true } `,
		`{"return_final_only":true}`, `{"run\u005fonce":true,"x":{"run_once":1}}`, `{"a":1,"a":2,"message":"m","message":"n"}`,
	} {
		f.Add([]byte(s))
	}
	keys := []string{"a", "message", "run_once"}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !jsonscan.Valid(string(body)) || !gjson.ParseBytes(body).IsObject() {
			return
		}
		var want []string
		last := map[string]int{}
		gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
			if !isRequestFlag(k.Str) {
				want = append(want, k.Str+"="+v.Raw)
			}
			last[k.Str]++
			return true
		})
		res, ok := RewriteRequest(body, RequestOptions{})
		if !ok || !json.Valid(res.Body) || strconv.Quote(string(bytes.Join(toBytes(rawMembers(res.Body)), []byte{0}))) != strconv.Quote(string(bytes.Join(toBytes(want), []byte{0}))) {
			t.Fatalf("%s: flags removed into %s", body, res.Body)
		}
		kept := KeepLastCopies(body, keys)
		if !json.Valid(kept) {
			t.Fatalf("%s: KeepLastCopies made invalid JSON %s", body, kept)
		}
		seen := map[string]int{}
		gjson.ParseBytes(kept).ForEach(func(k, _ gjson.Result) bool {
			seen[k.Str]++ // a key may hold '=': counted as gjson reads it
			return true
		})
		for _, k := range keys {
			if last[k] > 0 && seen[k] != 1 {
				t.Fatalf("%s: %s kept %d times in %s", body, k, seen[k], kept)
			}
		}
	})
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// A Meta stays within its bounds whatever is merged into it: valid JSON in
// valid UTF-8, no longer than its limit, at most MaxMetaTools names, each
// key it holds with a whole value that was given for it.
func FuzzMetaBounded(f *testing.F) {
	f.Add([]byte(`{"a":"xxxxxxxxxx","tools_used":["t1","t2\u0000"],"b":{"c":[1,2,3]},"a":"y"}`), []byte(`{"structured_result":{"type":"list","items":[1,2]},"prompt_trimmed_to":5}`), uint16(40))
	f.Add([]byte("{\"k\":\"\xff\xfe\",\"tools_used\":[\"\xc3\"]}"), []byte(`{"k":null}`), uint16(12))
	f.Fuzz(func(t *testing.T, a, b []byte, limit uint16) {
		var m Meta
		m.Limit(int(limit%512)+2, nil)
		m.MergeJSON(a)
		m.MergeJSON(b)
		for i := 0; i < 300; i++ {
			m.AddTool("t" + strconv.Itoa(i))
		}
		out := m.JSON()
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("invalid meta %q", out)
		}
		if len(out) > m.MaxBytes() || len(out) > m.Size() {
			t.Fatalf("meta of %d bytes, limit %d, Size %d: %s", len(out), m.MaxBytes(), m.Size(), out)
		}
		if len(m.Tools()) > MaxMetaTools {
			t.Fatalf("%d tools", len(m.Tools()))
		}
		var given map[string][]string
		for _, src := range [][]byte{a, b} {
			if !jsonscan.Valid(string(src)) {
				continue
			}
			gjson.ParseBytes(src).ForEach(func(k, v gjson.Result) bool {
				if given == nil {
					given = map[string][]string{}
				}
				key := strings.ToValidUTF8(k.Str, "\uFFFD")
				given[key] = append(given[key], string(metaValue([]byte(v.Raw))))
				return true
			})
		}
		gjson.ParseBytes(out).ForEach(func(k, v gjson.Result) bool {
			switch k.Str {
			case keyTools, keyTrimmed, KeyStructuredResult:
				return true
			}
			for _, g := range given[k.Str] {
				if g == v.Raw {
					return true
				}
			}
			t.Fatalf("key %q holds %s, which was never given whole (given %q)", k.Str, v.Raw, given[k.Str])
			return false
		})
	})
}
