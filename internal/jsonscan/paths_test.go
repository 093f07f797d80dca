package jsonscan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestPathsScan: a scan records what the paths name as gjson's Get and
// ForEach find it: the first top-level member of a name, below it a member
// read through every copy of the object that leads to it, the elements of
// a list ("*": an array's or an object's values, of the first member of
// its name; "#": the elements of the first member of its name that is an
// array) as Refs in document order with their key and second path, a key
// spelt with escapes as its text. (translate's FuzzRewriteJSONReplyEquiv
// holds the same to gjson on replies.)
func TestPathsScan(t *testing.T) {
	var p Paths
	top := p.Add("t", nil)
	deep := p.Add("o.in.v", nil)
	key := p.Add("l.*.k", func(raw string) bool { return strings.HasSuffix(raw, `tool"`) })
	name := p.Add("l.*.n", nil)
	arr := p.Add("o.h.#.k", nil)
	obj := p.Add("m.*.k", nil)
	topSlot, isTop := p.Slot(top)
	deepSlot, _ := p.Slot(deep)
	if !isTop || p.TopSlot("t") != topSlot || p.TopSlot("x") != -1 || p.ElementOf(key) == 0 || p.ElementOf(deep) != 0 {
		t.Fatalf("registration: top %v slot %d, elements %d %d", isTop, topSlot, p.ElementOf(key), p.ElementOf(deep))
	}
	doc := `{"o":{"in":1,"h":{"x":{"k":"no"}},"in":{"v":7},"h":[{"k":"yes"}],"h":[{"k":"no"}]},"t":"first","\u0074":"second",` +
		`"l":[{"k":"a_tool","n":"x","k":"b_tool"},{"n":"y"},{"k":"text","n":"z"},{"k":"c_t\u006fol"},{"k":"d_tool","n":"w"}],` +
		`"m":{"a":{"k":"objval"}},"o":{"in":{"v":8}}}`
	var x Index
	if !p.Scan(doc, &x) {
		t.Fatal("not valid")
	}
	at := func(v int) string { return doc[v : v+SkipValue(doc, Space(doc, v))-v] }
	if got, ref := at(x.Top[topSlot]), gjson.Get(doc, "t").Raw; got != ref {
		t.Errorf("t: %s, gjson %s", got, ref)
	}
	if got, ref := at(x.Vals[deepSlot]), gjson.Get(doc, "o.in.v").Raw; got != ref {
		t.Errorf("o.in.v: %s, gjson %s", got, ref)
	}
	if ref := gjson.Get(doc, "o.h.#.k").Raw; ref != `["yes"]` {
		t.Errorf("gjson reads o.h.#.k as %s", ref)
	}
	var refs []string
	for _, r := range x.Refs() {
		s := fmt.Sprintf("%d:%s", r.Elem, at(r.Key))
		if r.Name != 0 {
			s += "/" + at(r.Name)
		}
		refs = append(refs, s)
	}
	e := p.ElementOf(key)
	want := []string{
		fmt.Sprintf(`%d:"yes"`, p.ElementOf(arr)),
		fmt.Sprintf(`%d:"a_tool"/"x"`, e), fmt.Sprintf(`%d:"c_t\u006fol"`, e), fmt.Sprintf(`%d:"d_tool"/"w"`, e),
		fmt.Sprintf(`%d:"objval"`, p.ElementOf(obj)),
	}
	if strings.Join(refs, " ") != strings.Join(want, " ") {
		t.Errorf("refs %v, want %v", refs, want)
	}
	if !x.Seen(key) || !x.Seen(name) || !x.Seen(arr) || (&Index{}).Seen(key) {
		t.Error("Seen")
	}
	if p.Scan(`{"t":1`, &Index{}) || p.Scan(`{"t":1} x`, &Index{}) {
		t.Error("an invalid document is valid")
	}
}

// TestPathsBounds: a tree past its bounds is refused when it is built,
// not by an index out of range at a scan.
func TestPathsBounds(t *testing.T) {
	for name, add := range map[string]func(p *Paths){
		"list and object": func(p *Paths) { p.Add("a.*.b", nil); p.Add("a.c", nil) },
		"three in one":    func(p *Paths) { p.Add("a.*.b", nil); p.Add("a.*.c", nil); p.Add("a.*.d", nil) },
		"long key":        func(p *Paths) { p.Add(strings.Repeat("k", MaxKey+1), nil) },
		"top keys": func(p *Paths) {
			for i := range MaxTops + 1 {
				p.Add(fmt.Sprint("k", i), nil)
			}
		},
		"slots": func(p *Paths) {
			for i := range MaxSlots {
				p.Add(fmt.Sprint("a.k", i), nil)
			}
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			add(new(Paths))
		}()
	}
}

// TestPathsLastCopy: with LastCopy, a top-level member is recorded at its
// last copy, one spelt with escapes among them, and a member of the same
// name below the top level is none.
func TestPathsLastCopy(t *testing.T) {
	p := Paths{LastCopy: true}
	slot, _ := p.Slot(p.Add("t", nil))
	doc := `{"t":1,"o":{"t":2},"\u0074": 3,"x":{"t":4}}`
	var x Index
	if !p.Scan(doc, &x) {
		t.Fatal("not valid")
	}
	if v := Space(doc, x.Top[slot]); doc[v] != '3' {
		t.Errorf("t recorded at %q, want its last copy, 3", doc[v:])
	}
}
