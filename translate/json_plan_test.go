package translate

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// deleteChoiceMetasRef is what RewriteJSONReply did before deleteChoiceMetas:
// one sjson deletion per choice, the last first.
func deleteChoiceMetasRef(doc []byte, idx []int) []byte {
	out := copyBytes(doc)
	for j := len(idx) - 1; j >= 0; j-- {
		if next, err := sjson.DeleteBytes(out, "choices."+strconv.Itoa(idx[j])+".meta"); err == nil {
			out = next
		}
	}
	return out
}

// deleteChoiceMetas is doc with the cuts of cutChoiceMetas made.
func deleteChoiceMetas(doc []byte, idx []int) []byte {
	p := jsonPlan{body: doc}
	p.cutChoiceMetas(idx)
	if len(p.cuts()) == 0 {
		return doc
	}
	return p.appendTo(make([]byte, 0, len(doc)), nil)
}

// choiceMetaIndices lists the choices with a meta, as RewriteJSONReply does.
func choiceMetaIndices(doc []byte) []int {
	var idx []int
	i := 0
	gjson.GetBytes(doc, "choices").ForEach(func(_, c gjson.Result) bool {
		if c.Get("meta").Exists() {
			idx = append(idx, i)
		}
		i++
		return true
	})
	return idx
}

var choiceMetaSeeds = []string{
	`{"choices":[{"index":0,"meta":{"a":1}},{"meta":1,"index":1},{"x":2}]}`,
	" { \"choices\" : [ { \"meta\" : {} , \"b\" : 1 } , { \"a\" : 1 ,\n \"meta\" :\t[1] } , { \"meta\" : null } ] } ",
	`{"choices":[{"me\u0074a":{"a":1},"meta":2}],"ch\u006fices":[{"meta":3}]}`,
	`{"choices":{"a":{"meta":{"k":1}},"0":{"meta":1},"00":{"meta":2},"1":{"x":1},"1":{"meta":3}}}`,
	`{"choices":{"\u0030":{"meta":1},"x":{"meta":2}}}`,
	`{"a\"b":1,"choices":[{"k\\":1,"meta":{"\"":"}"}},"s",[{"meta":1}],{"meta":"\\"}]}`,
	`{"choices":[]}`, `{"choices":"x"}`, `{"meta":1}`, `{}`,
}

func checkDeleteChoiceMetas(t *testing.T, doc []byte) {
	if !jsonscan.Valid(strView(doc)) || !gjson.ParseBytes(doc).IsObject() {
		return
	}
	idx := choiceMetaIndices(doc)
	got := deleteChoiceMetas(doc, idx)
	if want := deleteChoiceMetasRef(doc, idx); !bytes.Equal(got, want) {
		t.Fatalf("%s (choices %v):\n got %s\nwant %s", doc, idx, got, want)
	}
}

func TestDeleteChoiceMetasAsSJSON(t *testing.T) {
	for _, s := range append(choiceMetaSeeds, jsonReplySeeds...) {
		checkDeleteChoiceMetas(t, []byte(s))
	}
}

func FuzzDeleteChoiceMetas(f *testing.F) {
	for _, s := range choiceMetaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { checkDeleteChoiceMetas(t, doc) })
}

// A reply of many choices, each with its own meta, is read and written in
// one pass: what the deletion copies grows with the reply, not with its
// square.
func TestDeleteChoiceMetasManyChoices(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"choices":[`)
	const n = 20000
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"index":` + strconv.Itoa(i) + `,"meta":{"k` + strconv.Itoa(i) + `":1},"message":{"content":"x"}}`)
	}
	b.WriteString(`]}`)
	doc := []byte(b.String())
	idx := choiceMetaIndices(doc)
	if len(idx) != n {
		t.Fatalf("%d choices with meta", len(idx))
	}
	var out []byte
	allocated := testing.AllocsPerRun(1, func() { out = deleteChoiceMetas(doc, idx) })
	if bytes.Contains(out, []byte(`"meta"`)) || !jsonscan.Valid(strView(out)) {
		t.Fatalf("meta left, or invalid JSON: %.200s", out)
	}
	if allocated > 4 {
		t.Fatalf("%v allocations for one pass", allocated)
	}
}

// A reply whose top-level meta is megabytes (one key repeated a million
// times) is not decoded into maps to be compared with the merged meta:
// what the rewrite allocates stays a small multiple of the reply, for a
// chat completion and for the protocols that compare metas as values.
func TestLargeTopMetaNotDecoded(t *testing.T) {
	meta := `"meta":{` + strings.Repeat(`"a":1,`, 1<<20) + `"a":1}}`
	for name, head := range map[string]string{
		"chat":      `{"choices":[],`,
		"responses": `{"object":"response","output":[],`,
		"anthropic": `{"type":"message","content":[],`,
	} {
		body := []byte(head + meta)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		out, meta, ok := RewriteJSONReply(body, nil, JSONOptions{})
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 3*uint64(len(body)) {
			t.Fatalf("%s: %d MiB allocated for a %d MiB reply", name, got>>20, len(body)>>20)
		}
		// The meta says its key once.
		if !ok || string(meta.JSON()) != `{"a":1}` || !bytes.HasSuffix(out, []byte(`"meta":{"a":1}}`)) {
			t.Fatalf("%s: ok %v, meta %s, out ends %q", name, ok, meta.JSON(), out[max(0, len(out)-40):])
		}
	}
}
