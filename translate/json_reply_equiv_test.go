package translate

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// RewriteJSONReply reads a reply by the index of the pass that validates it
// and plans cuts of it; it must answer exactly as the version that always
// parsed and edited with sjson (kept here as the reference), record
// included.
func rewriteJSONReplyRef(body []byte, extra *Meta, opts JSONOptions) (out []byte, meta *Meta, ok bool) {
	s := strView(body)
	if !gjson.Valid(s) {
		return body, nil, false
	}
	root := gjson.Parse(s)
	if !root.IsObject() {
		return body, nil, false
	}
	rep := opts.newReply()
	rep.Terminal = true
	if p := jsonProtocolOf(s, gjsonTop(s)); p != nil {
		return rewriteTopLevelMetaRef(body, root, rep, extra, p, opts), &rep.Meta, true
	}
	meta = &rep.Meta
	choices := root.Get("choices")
	var choiceMeta []int
	i := 0
	choices.ForEach(func(_, c gjson.Result) bool {
		if m := c.Get("meta"); m.Exists() {
			choiceMeta = append(choiceMeta, i)
			if m.IsObject() {
				meta.mergeResult(m)
			}
		}
		i++
		return true
	})
	top := root.Get("meta")
	if top.IsObject() {
		meta.mergeResult(top) // a scalar would come back as one value with key ""
	}
	choices.ForEach(func(_, c gjson.Result) bool {
		c.Get("message.tool_calls.#.function.name").ForEach(func(_, n gjson.Result) bool {
			if n.Type == gjson.String {
				meta.AddTool(n.Str)
			}
			return true
		})
		if n := c.Get("message.function_call.name"); n.Type == gjson.String {
			meta.AddTool(n.Str)
		}
		return true
	})
	if u := root.Get("usage"); u.IsObject() {
		rep.Usage.read(u, &chatUsage)
		rep.setCostFrom(u)
	}
	if opts.BeforeEnd != nil {
		rep.setID(root.Get("id").Str)
	}
	if len(rep.Prices) > 0 {
		rep.setModel(root.Get("model").Str)
	}
	if opts.BeforeEnd != nil {
		opts.BeforeEnd(rep)
	}
	if extra != nil {
		meta.Merge(extra)
	}

	out = body
	changed := len(choiceMeta) > 0
	if opts.Structured {
		path := "choices.0.message.content"
		c := root.Get(path)
		if c.Type != gjson.String {
			path = "content"
			c = root.Get(path)
		}
		if c.Type == gjson.String {
			if reply, md, split := SplitStructuredReply(c.Str); split {
				if next, err := sjson.SetBytes(copyBytes(out), path, reply); err == nil {
					out = next
					meta.Set(KeyStructuredMetadata, md)
					changed = true
				}
			} else if opts.Warn != nil {
				opts.Warn(ReasonStructuredUnparsed)
			}
		}
	}

	rep.Seal()
	var metaJSON []byte
	if !meta.Empty() {
		metaJSON = meta.JSON()
	}
	switch {
	case metaJSON == nil:
		changed = changed || (top.Exists() && !(top.IsObject() && len(top.Map()) == 0))
	case !top.Exists():
		changed = true
	default:
		c := compactJSON([]byte(top.Raw))
		changed = changed || !(len(c) <= 4*len(metaJSON)+4096 && jsonscan.Equal(c, metaJSON))
	}
	if !changed {
		return body, meta, true
	}
	if &out[0] == &body[0] {
		out = copyBytes(body)
	}
	for j := len(choiceMeta) - 1; j >= 0; j-- {
		if next, err := sjson.DeleteBytes(out, "choices."+strconv.Itoa(choiceMeta[j])+".meta"); err == nil {
			out = next
		}
	}
	var err error
	if metaJSON != nil {
		out, err = sjson.SetRawBytes(out, "meta", metaJSON)
	} else if top.Exists() {
		out, err = sjson.DeleteBytes(out, "meta")
	}
	if err != nil {
		return body, meta, true
	}
	return out, meta, true
}

// gjsonTop is the top level of the valid reply s as gjson's Get finds its
// members: the reference the index's top level is held to.
func gjsonTop(s string) *[jsonscan.MaxTops]int {
	var top [jsonscan.MaxTops]int
	for i, k := range replyPaths.TopNames() {
		if r := gjson.Get(s, k); r.Exists() {
			top[i] = r.Index
		}
	}
	return &top
}

// rewriteTopLevelMetaRef is the reference for a Responses object or an
// Anthropic message: read with gjson, the meta set with sjson.
func rewriteTopLevelMetaRef(body []byte, root gjson.Result, rep *Reply, extra *Meta, p *jsonProtocol, opts JSONOptions) []byte {
	p.read(root, rep, rep.WantContent)
	if opts.BeforeEnd != nil {
		opts.BeforeEnd(rep)
	}
	if extra != nil {
		rep.Meta.Merge(extra)
	}
	rep.Seal()
	top := root.Get("meta")
	var out []byte
	var err error
	switch meta := rep.Meta.JSON(); {
	case rep.Meta.Empty():
		if !top.Exists() || (top.IsObject() && len(top.Map()) == 0) {
			return body
		}
		out, err = sjson.DeleteBytes(copyBytes(body), "meta")
	case top.Exists() && len(top.Raw) <= 4*len(meta)+4096 && jsonscan.Equal([]byte(top.Raw), meta):
		// A top-level meta far larger than the merged one is not decoded
		// (sameTopMeta): it is replaced.
		return body
	default:
		out, err = sjson.SetRawBytes(copyBytes(body), "meta", meta)
	}
	if err != nil {
		return body
	}
	return out
}

var jsonReplySeeds = []string{
	`{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[{"id":"c","type":"function","function":{"name":"launcher","arguments":"{}"}}]},"meta":{"tools_used":["x"]}}],"meta":{"prompt_trimmed_to":5}}`,
	`{"choices":[{"message":{"function_call":{"name":"legacy"}}}]}`,
	`{"choices":[{"message":{"tool_calls":{"function":{"name":"notarray"}}}}]}`,
	`{"choices":[{"message":{"tool_calls":[1,{"function":[{"name":"x"}]},{"function":{"name":7}},{"function":{"name":"ok"}}]}}]}`,
	`{"\u006deta":{"a":1},"choices":[{"message":{"tool\u005fcalls":[{"function":{"name":"esc"}}]}}]}`,
	`{"choices":{"a":{"meta":{"k":1},"message":{"tool_calls":[{"function":{"name":"obj"}}]}}}}`,
	`{"id":"x","choices":[{"message":{"content":"no keys here"}}]}`,
	" \n{\"choices\":[{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"ws\"}}]}}]} \n\t",
	`{ }`, `{"a":1 }`, "{\"a\":1}\n}", `{"choices":[]}`,
	`{"meta":{}}`, `{"meta":null}`, `{"meta":[1]}`, `{}`, `[1]`, `{"content":"\"meta\""}`,
	// The walks (jsonscan.Iter): duplicate keys (the first counts, as in
	// gjson), escaped quotes and brackets inside strings, names with
	// escapes, white space everywhere, scalars where objects are expected.
	`{"choices":[{"message":{"tool_calls":[{"function":{"name":"first"}}]},"message":{"tool_calls":[{"function":{"name":"second"}}]}}]}`,
	`{"choices":[{"message":{"content":"a \"}]{[ \\","tool_calls":[{"function":{"arguments":"{\"name\":\"no\"}","name":"t\"q\\\/n"}}]}}]}`,
	" { \"choices\" : [ { \"message\" : { \"tool_calls\" : [ { \"function\" : { \"name\" : \"sp\" } } ] , \"function_call\" : { \"name\" : \"fc\" } } } ] } ",
	`{"choices":[null,true,1.5e3,"s",[],{"message":null},{"message":{"tool_calls":null,"function_call":"x"}},{"message":{"function_call":{"name":null}}}]}`,
	`{"choices":"tool_calls","x":{"choices":[{"message":{"tool_calls":[{"function":{"name":"nested"}}]}}]}}`,
	`{"choices":[{"message":{"tool_calls":[{"function":{"name":"a"}},{"function":{"name":"a"}},{"function":{"name":""}}]}},{"message":{"function_call":{"name":"b"}}}],"choices":[{"message":{"function_call":{"name":"dup"}}}]}`,
	// gjson's "#" reads the first tool_calls that is an array.
	`{"choices":[{"message":{"tool_calls":{"x":{"function":{"name":"no"}}},"tool_calls":[{"function":{"name":"yes"}}],"tool_calls":[{"function":{"name":"no"}}]}}]}`,
	`{"choices":[{"message":{"tool_calls":1,"tool_calls":[],"tool_calls":[{"function":{"name":"no"}}]}},{"message":{"tool_calls":"s","tool_calls":[{"function":{"name":"yes"}}]}}]}`,
	`{"choices":[{"message":{"tool_calls":[{"function":{"name":"x"}}]}}]`, `{"choices":[{"message":{"tool_calls":[{"function":{"name":"x"}}]}}]} x`,
	// Usage (SPEC 9.1) and an upstream's cost (9.2).
	`{"choices":[{"message":{"content":"u"}}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":1},"cost":0.5}}`,
	`{"choices":[],"usage":{"prompt_tokens":"x"},"meta":{"usage":"upstream's"}}`,
	// Keys spelt with escapes are read as their text, as gjson reads them.
	`{"us\u0061ge":{"prompt\u005ftokens":2,"completion_tokens":1},"usage":{"prompt_tokens":9},"choices":[{"message":{"tool_calls":[{"function":{"n\u0061me":"esc"}}]},"m\u0065ta":{"k":1}}]}`,
	`{"choices":[{"message":{"function\u005fcall":{"name":"fc"}}}],"\u0069d":"x","model":"m\u00e9"}`,
	`{"\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073\u0063\u0068\u006f\u0069\u0063\u0065\u0073":1,"choices":[]}`,
	`{"object":"response","output":[{"t\u0079pe":"function_call","name":"f"},{"type":"function_call","n\u0061me":"g"}],"usage":{"input_tokens":1}}`,
	// A protocol's string spelt with escapes, before or after its first
	// difference (jsonTop.strIs).
	`{"object":"respons\u0065","output":[{"type":"function_call","name":"f"}]}`,
	`{"type":"\u006dessage","content":[{"type":"tool_use","name":"t"}]}`, `{"type":"message\u0020","content":[]}`,
	`{"type":"messages","content":[]}`, `{"type":"messag","content":[]}`, `{"object":"x\u0072esponse"}`,
	// The test's own protocol (protocol_fake_test.go): its tools' paths.
	`{"tally":{"calls":[{"kind":"tool","name":"a","kind":"x"},{"kind":"t\u006fol","name":"b"},{"kind":"web_tool"},{"kind":"text","name":"c"},[{"kind":"tool","name":"d"}]],"calls":[{"kind":"tool","name":"e"}]}}`,
	`{"tally":{"calls":{"a":{"kind":"tool","name":"x"}}},"tally":{"calls":[{"kind":"tool","name":"y"}]}}`,
}

func checkJSONReplyEquiv(t *testing.T, body []byte, extra *Meta) {
	out, meta, ok := RewriteJSONReply(body, extra, JSONOptions{})
	rout, rmeta, rok := rewriteJSONReplyRef(body, extra, JSONOptions{})
	if ok != rok || !bytes.Equal(out, rout) {
		t.Fatalf("%s:\n got %v %s\nwant %v %s", body, ok, out, rok, rout)
	}
	if (meta == nil) != (rmeta == nil) || meta != nil && !bytes.Equal(meta.JSON(), rmeta.JSON()) {
		t.Fatalf("%s: meta differs:\n got %s\nwant %s", body, meta.JSON(), rmeta.JSON())
	}
	// The call as a caller that keeps its own record and buffer makes it:
	// the same bytes, the meta built in the caller's Meta.
	into := new(Reply)
	fout, fmeta, fok := RewriteJSONReply(body, extra, JSONOptions{Reply: into, Buf: make([]byte, 0, len(body)+64)})
	if !bytes.Equal(fout, rout) {
		t.Fatalf("%s: own record:\n got %s\nwant %s", body, fout, rout)
	}
	if fok && fmeta != &into.Meta {
		t.Fatalf("%s: the meta was not built in the caller's Meta", body)
	}
	if fok && rok && !bytes.Equal(fmeta.JSON(), rmeta.JSON()) {
		t.Fatalf("%s: own record: meta differs", body)
	}
	if fok != rok && (rok || !fmeta.Empty()) {
		t.Fatalf("%s: own record: ok %v for an invalid body with meta %s", body, fok, fmeta.JSON())
	}
}

// manyToolsSeeds are replies with more tools than the index's refs hold
// without growing, in each protocol that names them.
func manyToolsSeeds() (seeds []string) {
	each := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(f(i))
		}
		return b.String()
	}
	for _, n := range []int{23, 24, 25, 100} {
		seeds = append(seeds,
			`{"choices":[{"message":{"tool_calls":[`+each(n, func(i int) string { return `{"function":{"name":"t` + strconv.Itoa(i) + `"}}` })+`],"function_call":{"name":"fc"}}},{"message":{"function_call":{"name":"last"}}}]}`,
			`{"object":"response","output":[`+each(n, func(i int) string {
				return `{"type":"function_call","name":"f` + strconv.Itoa(i) + `"},{"type":"web_search_call"},{"type":"message"}`
			})+`]}`,
			`{"tally":{"calls":[`+each(n, func(i int) string { return `{"kind":"tool","name":"k` + strconv.Itoa(i) + `"}` })+`]}}`)
	}
	return seeds
}

func TestRewriteJSONReplyEquiv(t *testing.T) {
	RegisterTally()
	var trimmed Meta
	trimmed.SetTrimmed(3)
	for i, s := range append(jsonReplySeeds, manyToolsSeeds()...) {
		for _, extra := range []*Meta{nil, {}, &trimmed} {
			t.Run(strconv.Itoa(i), func(t *testing.T) { checkJSONReplyEquiv(t, []byte(s), extra) })
		}
	}
}

func FuzzRewriteJSONReplyEquiv(f *testing.F) {
	RegisterTally()
	for _, s := range jsonReplySeeds {
		f.Add([]byte(s))
	}
	var trimmed Meta
	trimmed.SetTrimmed(3)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkJSONReplyEquiv(t, body, nil)
		checkJSONReplyEquiv(t, body, &trimmed)
	})
}
