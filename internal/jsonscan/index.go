package jsonscan

import (
	"math/bits"
	"strings"
)

// Index is what one scan of a document (Paths.Scan) recorded of it, so
// that reading it needs no second pass over it: where the values of the
// members its paths name start, and its Refs. Its zero value is ready for
// a scan; it stays on its caller's stack.
type Index struct {
	// Top holds, for each top slot, where the value of the first
	// top-level member of that name (the last: Paths.LastCopy) starts
	// (just past its colon); 0: none.
	Top [MaxTops]int
	// Vals holds, for each slot below the top level, where its value
	// starts (for an element's, the element being read); 0: none.
	Vals [MaxSlots]int
	// done: the nodes found in the element being read (of each node that
	// is the first of its name); seen: the nodes found anywhere.
	done, seen uint64

	// role of each open container by depth (1: the root): its node, 0
	// for one not read (deeper ones have none).
	role [8]Node
	// key is the node of the member just read, at depth keyDepth.
	key      Node
	keyDepth int
	// p: the paths of the scan (in x, not an argument of each method:
	// member's arguments then fit in registers).
	p *Paths

	// The refs: the first ones in few, without an allocation; every one
	// in more once there are more than few holds.
	few  [24]Ref
	nfew int
	more []Ref
}

// Ref is an element the index found: the node of the element, and where
// the values of its key and of its second path start (0: none).
type Ref struct {
	Elem      Node
	Key, Name int
}

// Seen reports whether the scan found a member of node n.
func (x *Index) Seen(n Node) bool { return x.seen&(1<<n) != 0 }

// Refs returns the elements found, in document order.
func (x *Index) Refs() []Ref {
	if x.more != nil {
		return x.more
	}
	return x.few[:x.nfew]
}

// ref adds an element. Past what few holds, the refs grow with the
// document: a ref per element whose key is a string, so at most a few
// times the document's own size, and no second pass over it.
func (x *Index) ref(r Ref) {
	if x.more == nil && x.nfew < len(x.few) {
		x.few[x.nfew] = r
		x.nfew++
		return
	}
	if x.more == nil {
		x.more = append(make([]Ref, 0, 4*len(x.few)), x.few[:]...)
	}
	x.more = append(x.more, r)
}

// member records a member's key (quotes included) at depth (1: the top
// level) whose value starts at s[v] or after white space, m being the member
// children of its container that may be named key (scan, which calls
// member only when there are some, or esc), and returns whether its value
// is to be looked at (str) if a string. A container deeper than role
// holds is not read (open): depth is at most len(role).
func (x *Index) member(s, key string, m uint64, v, depth int, esc bool) (wantString bool) {
	p := x.p
	x.key = 0
	var c Node
	if l := len(key) - 2; esc {
		c = p.escapedChild(x.role[depth-1], key[1:len(key)-1])
	} else if m&(m-1) == 0 && l >= 4 && l <= 16 {
		// One candidate of four to sixteen bytes (an item's "type", a
		// count's name), compared here, a word at each end: the call to
		// named would cost more than the comparison.
		i := bits.TrailingZeros64(m)
		name := p.name[i]
		if l <= 8 && load32(key, 1) == load32(name, 0) && load32(key, l-3) == load32(name, l-4) ||
			l > 8 && load64(key, 1) == load64(name, 0) && load64(key, l-7) == load64(name, l-8) {
			c = Node(i)
		}
	} else {
		c = p.named(m, key[1:len(key)-1])
	}
	if c == 0 {
		return false
	}
	cn := &p.nodes[c]
	if cn.first {
		// gjson's "#" goes on to the next copy that is an array. The
		// document is not yet known valid: it may end here.
		if cn.arrayOnly {
			if j := Space(s, v); j >= len(s) || s[j] != '[' {
				return false
			}
		}
		// c & 63, as a Node is below MaxNodes: no bounds test.
		bit := uint64(1) << (c & 63)
		if x.done&bit != 0 && !(cn.top && p.LastCopy) {
			return false
		}
		x.done |= bit
		x.seen |= bit
		switch {
		case cn.top:
			x.Top[cn.slot] = v
		case cn.keyOf != 0:
			x.key, x.keyDepth = c, depth
			return true // recorded when a string (str)
		case cn.slot > 0:
			x.Vals[cn.slot] = v
		}
	}
	x.key, x.keyDepth = c, depth
	return false
}

// open records a container opened at depth d with bracket c: its node,
// from its parent's and the member it is the value of. What a container of
// no node holds is not read, only validated; only an element's close is
// read (close).
func (x *Index) open(d int, c byte) wanted {
	p := x.p
	if d > len(x.role) {
		return wantNothing
	}
	if d == 1 {
		x.role[0] = rootNode
		return wantMembers
	}
	var r Node
	switch parent := &p.nodes[x.role[d-2]]; {
	case parent.each != 0:
		// A list: its elements (or, in an object, its values: gjson's
		// ForEach visits both alike) that are objects.
		if c == '{' {
			r = parent.each
		}
	case x.keyDepth == d-1 && x.key != 0:
		r = x.key
		switch n := &p.nodes[r]; {
		case n.each != 0:
			if c == '{' && n.arrayOnly {
				r = 0
			}
		case c == '[' || n.kids == 0:
			r = 0
		}
	}
	x.key = 0
	x.role[d-1] = r
	if r == 0 {
		return wantNothing
	}
	if e := &p.nodes[r]; e.elem {
		// An element: what is found in it starts anew; its close is read
		// when it has a key and a second path (str refs one without).
		x.done &^= e.scope
		if e.slot2 > 0 {
			return wantClose
		}
	}
	return wantMembers
}

// close records the close of an element at depth d: when its key was
// found, it becomes a Ref. Its values are taken, for the next element of
// its node to start without them.
func (x *Index) close(d int) {
	p := x.p
	r := x.role[d-1]
	e := &p.nodes[r]
	if x.Vals[e.slot] != 0 {
		x.ref(Ref{r, x.Vals[e.slot], x.Vals[e.slot2]})
		x.Vals[e.slot] = 0
	}
	x.Vals[e.slot2] = 0
}

// str records the string value raw (quotes included) at v of an element's
// key, just read: the element becomes a Ref now when its key is all it
// has, else at its close.
func (x *Index) str(raw string, v int) {
	p := x.p
	n := &p.nodes[x.key]
	if n.may == nil || n.may(raw) || strings.IndexByte(raw, '\\') >= 0 {
		if p.nodes[n.keyOf].slot2 == 0 {
			x.ref(Ref{Elem: n.keyOf, Key: v})
		} else {
			x.Vals[n.slot] = v
		}
	}
	x.key = 0
}
