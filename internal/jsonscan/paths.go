package jsonscan

import (
	"math/bits"
	"strings"
)

// Paths is the tree of the paths a caller wants recorded of a document in
// the pass that validates it (Paths.Scan, into an Index), built once
// before the first scan (Add). A path is member names from the top level,
// "*" for each element of an array or value of an object (gjson's
// ForEach), "#" for each element of an array only (gjson's #):
//
//   - a top-level member a path names is recorded in a top slot, any
//     other member a path ends at in a slot;
//   - the members under an element ("*", "#") are recorded for each
//     element: at its close, an element whose first path (its key) led
//     to a string becomes a Ref, with the value of its second path, in
//     document order.
//
// Each is found as gjson's Get and ForEach would find it: a member a path
// ends at, or one that holds a list, is the first of its name (in its
// element), for "#" the first that is an array; an object a path leads
// through is read at each copy, as Get goes on to the next copy when a
// path does not lead through one; a top-level member is the first of its
// name. A key written with escapes is compared as its text, as gjson
// compares it.
type Paths struct {
	// LastCopy, set before the first Add, records a top-level member at
	// its last copy instead, as JavaScript's JSON.parse reads a repeated
	// key (a request as its upstream reads it).
	LastCopy bool

	// nodes is the tree, indexed by a Node (no bounds to check); node 0
	// is none.
	nodes    [256]pathNode
	numNodes int
	tops     []string // the top-level names, in the order of their top slots
	slots    int      // the slots taken (0: none)
	// The name of each member node, and the member nodes by the length,
	// the first and the last byte of their names (child).
	name            [MaxNodes]string
	byLen           [MaxKey + 1]uint64 // byLen[0]: none
	byFirst, byLast [256]uint64
}

// Node is a node of a Paths: a member or an element a path names.
type Node uint8

// pathNode is a node of the tree of paths.
type pathNode struct {
	kids      uint64 // its member children, a bit per node (child)
	each      Node   // the node of each element ("*", "#"), 0 when none
	arrayOnly bool   // "#": only an array's elements
	elem      bool   // an element of a list
	first     bool   // only its first member counts (recorded, or a list)
	top       bool   // a top-level member, recorded in a top slot
	keyOf     Node   // the element whose key it is, 0 when none
	slot      int    // its top slot or slot; for an element, its key's
	slot2     int    // an element's second path's slot, 0: none
	may       func(raw string) bool
	scope     uint64 // an element's: the nodes found once in it
}

// The bounds of a Paths.
const (
	MaxNodes = 64 // the bits of Index.done
	MaxTops  = 16 // top slots
	MaxSlots = 32 // slots below the top level (slot 0 is none)
	// MaxKey bounds the length of the names a path holds.
	MaxKey = 40

	rootNode = 1
)

// Add puts path in the tree, when it is not there yet, and returns the
// node it ends at. may, for the key of an element, says which raw string
// values of it (quotes included) make a Ref; one with an escape may spell
// any. It panics on a tree past its bounds: paths are added at a
// program's start.
func (p *Paths) Add(path string, may func(raw string) bool) Node {
	if p.numNodes == 0 {
		p.numNodes, p.slots = rootNode+1, 1
	}
	n, elem := Node(rootNode), Node(0)
	for part := range strings.SplitSeq(path, ".") {
		if part == "*" || part == "#" {
			if p.nodes[n].each == 0 {
				if p.nodes[n].kids != 0 || n == rootNode {
					panic("jsonscan: a path's object is also a list: " + path)
				}
				e := p.newNode()
				p.nodes[n].each, p.nodes[n].arrayOnly, p.nodes[n].first = e, part == "#", true
				p.nodes[e].elem, p.nodes[e].slot = true, -1
			}
			n = p.nodes[n].each
			elem = n
			continue
		}
		if len(part) > MaxKey {
			panic("jsonscan: a key longer than MaxKey: " + part)
		}
		if p.nodes[n].each != 0 {
			panic("jsonscan: a path's list is also an object: " + path)
		}
		c := p.child(n, part)
		if c == 0 {
			c = p.addChild(n, part)
			if n == rootNode {
				p.nodes[c].top, p.nodes[c].first, p.nodes[c].slot = true, true, len(p.tops)
				if p.tops = append(p.tops, part); len(p.tops) > MaxTops {
					panic("jsonscan: more top-level keys than MaxTops")
				}
			}
		}
		n = c
		if elem != 0 {
			p.nodes[elem].scope |= 1 << n
		}
	}
	leaf := &p.nodes[n]
	if leaf.top || leaf.slot != 0 || leaf.each != 0 {
		return n // recorded already
	}
	if p.slots == MaxSlots {
		panic("jsonscan: more paths than MaxSlots")
	}
	leaf.first, leaf.slot = true, p.slots
	p.slots++
	if elem != 0 {
		e := &p.nodes[elem]
		switch {
		case e.slot < 0:
			e.slot, leaf.keyOf, leaf.may = leaf.slot, elem, may
		case e.slot2 == 0:
			e.slot2 = leaf.slot
		default:
			panic("jsonscan: more than two paths in an element: " + path)
		}
	}
	return n
}

func (p *Paths) newNode() Node {
	if p.numNodes == MaxNodes {
		panic("jsonscan: more paths than MaxNodes allows")
	}
	p.numNodes++
	return Node(p.numNodes - 1)
}

// addChild gives n a member child named k and returns its node.
func (p *Paths) addChild(n Node, k string) Node {
	c := p.newNode()
	p.name[c] = k
	p.nodes[n].kids |= 1 << c
	p.byLen[len(k)] |= 1 << c
	p.byFirst[k[0]] |= 1 << c
	p.byLast[k[len(k)-1]] |= 1 << c
	return c
}

// Slot returns the slot where an Index records the value of node n (Top
// when top, else Vals).
func (p *Paths) Slot(n Node) (slot int, top bool) { return p.nodes[n].slot, p.nodes[n].top }

// ElementOf returns the element whose key n is (the node of its Refs), 0
// when none.
func (p *Paths) ElementOf(n Node) Node { return p.nodes[n].keyOf }

// TopSlot returns the top slot of the top-level member named k, -1 when
// no path names it.
func (p *Paths) TopSlot(k string) int {
	if c := p.child(rootNode, k); c != 0 {
		return p.nodes[c].slot
	}
	return -1
}

// TopNames returns the names of the top-level members, in the order of
// their top slots.
func (p *Paths) TopNames() []string { return p.tops }

// child returns the node of n's member named k, 0 when none.
func (p *Paths) child(n Node, k string) Node { return p.named(p.candidates(n, k, 0, len(k)), k) }

// candidates returns the member children of n that may be named
// s[i:i+l]: a member node has one name, and those of that length, first
// and last byte (a bit per node in each table) are the few left, so that
// most keys of a document, named by none, are told apart without a
// comparison or a call.
func (p *Paths) candidates(n Node, s string, i, l int) uint64 {
	if l <= 0 || l >= len(p.byLen) {
		return 0
	}
	return p.nodes[n].kids & p.byLen[l] & p.byFirst[s[i]] & p.byLast[s[i+l-1]]
}

// named returns the node among the candidates m that is named k, 0 when
// none. A candidate has k's length, first and last byte: the rest is
// compared by its middle byte or a word at a time (four bytes, or eight, at
// both ends and between), cheaper than a call to the runtime's comparison.
func (p *Paths) named(m uint64, k string) Node {
next:
	for ; m != 0; m &= m - 1 {
		c := bits.TrailingZeros64(m)
		switch name, n := p.name[c], len(k); {
		case n < 4:
			if n < 3 || k[1] == name[1] {
				return Node(c)
			}
		case n <= 8:
			if load32(k, 0) == load32(name, 0) && load32(k, n-4) == load32(name, n-4) {
				return Node(c)
			}
		default:
			for i := 0; i < n-8; i += 8 {
				if load64(k, i) != load64(name, i) {
					continue next
				}
			}
			if load64(k, n-8) == load64(name, n-8) {
				return Node(c)
			}
		}
	}
	return 0
}

// escapedChild is child of a key spelt with escapes: compared as its
// text (string(b) == name: a comparison, no copy). An escape spells at
// least one byte in six, and no name looked for is longer than MaxKey: a
// longer key names none.
func (p *Paths) escapedChild(n Node, k string) Node {
	var buf [6 * MaxKey]byte
	if len(k) > len(buf) {
		return 0
	}
	b := AppendUnescaped(buf[:0], k)
	if len(b) == 0 || len(b) > MaxKey {
		return 0
	}
	for m := p.nodes[n].kids & p.byLen[len(b)] & p.byFirst[b[0]] & p.byLast[b[len(b)-1]]; m != 0; m &= m - 1 {
		if c := bits.TrailingZeros64(m); string(b) == p.name[c] {
			return Node(c)
		}
	}
	return 0
}
