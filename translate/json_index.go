package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// jsonIndex is what the pass that validates a JSON reply (scanJSON) learns
// of it on the way, so that reading the reply needs no second pass over
// it. It knows no protocol: it records what the protocols ask for, each
// as paths in its own file (jsonProtocol's paths and tools, the usage
// names of usage.go), read into a tree of nodes at registration
// (addJSONPath). A path is member names from the top
// level, "*" for each element of an array or value of an object (gjson's
// ForEach), "#" for each element of an array only (gjson's #):
//
//   - every top-level member a path names is recorded (top), and the
//     usage counts of every protocol (usage.go), by their slot;
//   - the members under an element ("*", "#") are recorded for each
//     element: at its close, an element whose first path (its key) led
//     to a string goes into refs, with the value of its second path, in
//     document order (a protocol's tools).
//
// Each is found as gjson's Get and ForEach would find it: a member a path
// ends at, or one that holds a list, is the first of its name (in its
// element); an object a path leads through is read at each copy, as Get
// goes on to the next copy when a path does not lead through one; a
// top-level member is the first of its name. FuzzRewriteJSONReplyEquiv
// holds this to gjson. A key written with escapes is compared as its
// text, as gjson compares it.
type jsonIndex struct {
	// top holds, for each top slot, where the value of the first
	// top-level member of that name starts (just past its colon); 0: none.
	top [maxTopKeys]int
	// vals holds, for each slot of a member below the top level, where
	// its value starts (for an element's, the element being read).
	vals [maxSlots]int
	// done: the nodes found in the element being read (of each node that
	// is the first of its name); seen: the nodes found anywhere.
	done, seen uint64

	// role of each open container by depth (1: the root): its node, 0
	// for one not read (deeper ones have none).
	role [8]uint8
	// key is the node of the member just read, at depth keyDepth.
	key      uint8
	keyDepth int

	// The refs: the first ones in few, without an allocation; every one
	// in more once there are more than few holds.
	few  [24]toolRef
	nfew int
	more []toolRef
}

// toolRef is an element the index found: its node, and where the values
// of its key and of its second path start (0: none).
type toolRef struct {
	node    uint8
	v, name int
}

// refs returns the elements found, in document order.
func (x *jsonIndex) refs() []toolRef {
	if x.more != nil {
		return x.more
	}
	return x.few[:x.nfew]
}

// ref adds an element. Past what few holds, the refs grow with the reply:
// a ref per element whose key is a string, so at most a few times the
// reply's own size, which is bounded, and no second pass over the reply.
func (x *jsonIndex) ref(r toolRef) {
	if x.more == nil && x.nfew < len(x.few) {
		x.few[x.nfew] = r
		x.nfew++
		return
	}
	if x.more == nil {
		x.more = append(make([]toolRef, 0, 4*len(x.few)), x.few[:]...)
	}
	x.more = append(x.more, r)
}

// jsonNode is a node of the tree of paths.
type jsonNode struct {
	// Its member children by name: in kids (their nodes in kid),
	// compared inline, while it has no more than kids holds, as most
	// nodes; then all in names (1 + their node), a table lookup.
	kids      [2]string
	kid       [2]uint8
	names     *jsonscan.Names
	members   bool  // it has member children
	each      uint8 // the node of each element ("*", "#"), 0 when none
	arrayOnly bool  // "#": only an array's elements
	elem      bool  // an element of a list
	first     bool  // only its first member counts (recorded, or a list)
	top       bool  // a top-level member, recorded in top
	keyOf     uint8 // the element whose key it is, 0 when none
	slot      int   // its slot in top or vals; for an element, of its key
	slot2     int   // an element's second path's slot, 0: none
	may       func(raw string) bool
	scope     uint64 // an element's: the nodes found once in it
}

// child returns the node of n's member named k, 0 when none.
func (n *jsonNode) child(k string) uint8 {
	if n.names == nil {
		switch k {
		case n.kids[0]:
			return n.kid[0]
		case n.kids[1]:
			return n.kid[1]
		}
		return 0
	}
	if c, ok := n.names.Get(k); ok {
		return uint8(c - 1)
	}
	return 0
}

// addChild gives n a member child named k and returns its node.
func (n *jsonNode) addChild(k string) uint8 {
	n.members = true
	c := newNode()
	for i, name := range n.kids {
		if name == "" && n.names == nil {
			n.kids[i], n.kid[i] = k, c
			return c
		}
	}
	if n.names == nil {
		n.names = new(jsonscan.Names)
		for i, name := range n.kids {
			n.names.Add(name, int(n.kid[i])+1)
		}
	}
	n.names.Add(k, int(c)+1)
	return c
}

const (
	rootNode   = 1
	maxNodes   = 64 // the bits of jsonIndex.done
	maxTopKeys = 16
	maxSlots   = 32
	// maxIndexedKey bounds the length of the names the index looks for.
	maxIndexedKey = 40
)

var (
	// nodes is the tree, indexed by a uint8 (no bounds to check); node 0
	// is none.
	nodes    [256]jsonNode
	numNodes = rootNode + 1
	topKeys  []string // the top-level names, in their order
	slots    = 1      // vals' slots taken (0: none)
)

// The top-level members every JSON reply is read by (SPEC 4.1, 9.1, 9.2).
var topID, topModel, topMeta, topUsage = addTopKey("id"), addTopKey("model"), addTopKey("meta"), addTopKey("usage")

// addTopKey gives k a top slot, when it has none, and returns it.
func addTopKey(k string) int { return nodes[addJSONPath(k, nil)].slot }

// topSlotOf is the top slot named k, or -1.
func topSlotOf(k string) int {
	c := nodes[rootNode].child(k)
	if c == 0 {
		return -1
	}
	return nodes[c].slot
}

// addJSONPath puts path (dotted, see jsonIndex) in the tree and returns
// the node it ends at. may, for the key of an element, says which raw
// string values of it (quotes included) make a ref; one with an escape
// may spell any. It panics, at registration, on a tree past its bounds.
func addJSONPath(path string, may func(raw string) bool) uint8 {
	n, elem := uint8(rootNode), uint8(0)
	for part := range strings.SplitSeq(path, ".") {
		if part == "*" || part == "#" {
			if nodes[n].each == 0 {
				if nodes[n].members || n == rootNode {
					panic("translate: a path's object is also a list: " + path)
				}
				e := newNode()
				nodes[n].each, nodes[n].arrayOnly, nodes[n].first = e, part == "#", true
				nodes[e].elem, nodes[e].slot = true, -1
			}
			n = nodes[n].each
			elem = n
			continue
		}
		if len(part) > maxIndexedKey {
			panic("translate: a key longer than maxIndexedKey: " + part)
		}
		if nodes[n].each != 0 {
			panic("translate: a path's list is also an object: " + path)
		}
		c := nodes[n].child(part)
		if c == 0 {
			c = nodes[n].addChild(part)
			if n == rootNode {
				nodes[c].top, nodes[c].first, nodes[c].slot = true, true, len(topKeys)
				if topKeys = append(topKeys, part); len(topKeys) > maxTopKeys {
					panic("translate: more top-level keys than maxTopKeys")
				}
			}
		}
		n = c
		if elem != 0 {
			nodes[elem].scope |= 1 << n
		}
	}
	leaf := &nodes[n]
	if leaf.top || leaf.slot != 0 || leaf.each != 0 {
		return n // recorded already
	}
	if slots == maxSlots {
		panic("translate: more paths than maxSlots")
	}
	leaf.first, leaf.slot = true, slots
	slots++
	if elem != 0 {
		e := &nodes[elem]
		switch {
		case e.slot < 0:
			e.slot, leaf.keyOf, leaf.may = leaf.slot, elem, may
		case e.slot2 == 0:
			e.slot2 = leaf.slot
		default:
			panic("translate: more than two paths in an element: " + path)
		}
	}
	return n
}

func newNode() uint8 {
	if numNodes == maxNodes {
		panic("translate: more JSON paths than maxNodes allows")
	}
	numNodes++
	return uint8(numNodes - 1)
}

// scanJSON is jsonscan.Valid of a JSON reply that fills in x in the same
// pass: the reply is then read without a second pass over the whole of it.
func scanJSON(s string, x *jsonIndex) bool {
	return jsonscan.Scan(s, &jsonscan.Hooks{Member: x.member, Open: x.push, Close: x.pop, String: x.str})
}

// member records the key (quotes included) of a member at depth (1: the
// top level) whose value starts at v or after white space, and returns
// whether its value is to be looked at (str) if a string.
func (x *jsonIndex) member(key string, v, depth int, esc bool) (wantString bool) {
	x.key = 0
	if depth > len(x.role) {
		return false
	}
	n := &nodes[x.role[depth-1]]
	if !n.members {
		return false // a list's members are its elements (push)
	}
	k := key[1 : len(key)-1]
	if esc {
		// Spelt with escapes: compared as its text. An escape spells at
		// least one byte in six, and no name looked for is longer than
		// maxIndexedKey: a longer key names none.
		var buf [6 * maxIndexedKey]byte
		if len(k) > len(buf) {
			return false
		}
		k = strView(jsonscan.AppendUnescaped(buf[:0], k))
	}
	c := n.child(k)
	if c == 0 {
		return false
	}
	cn := &nodes[c]
	if cn.first {
		bit := uint64(1) << c
		if x.done&bit != 0 {
			return false
		}
		x.done |= bit
		x.seen |= bit
		switch {
		case cn.top:
			x.top[cn.slot] = v
		case cn.keyOf != 0:
			x.key, x.keyDepth = c, depth
			return true // recorded when a string (str)
		case cn.slot > 0:
			x.vals[cn.slot] = v
		}
	}
	x.key, x.keyDepth = c, depth
	return false
}

// push records a container opened at depth d with bracket c: its node,
// from its parent's and the member it is the value of. What a container
// of no node holds is not read, only validated; only an element's close is
// read (pop).
func (x *jsonIndex) push(d int, c byte) jsonscan.Want {
	if d > len(x.role) {
		return jsonscan.Nothing
	}
	if d == 1 {
		x.role[0] = rootNode
		return jsonscan.Members
	}
	var r uint8
	switch parent := &nodes[x.role[d-2]]; {
	case parent.each != 0:
		// A list: its elements (or, in an object, its values: gjson's
		// ForEach visits both alike) that are objects.
		if c == '{' {
			r = parent.each
		}
	case x.keyDepth == d-1 && x.key != 0:
		r = x.key
		switch n := &nodes[r]; {
		case n.each != 0:
			if c == '{' && n.arrayOnly {
				r = 0
			}
		case c == '[' || !n.members:
			r = 0
		}
	}
	x.key = 0
	x.role[d-1] = r
	if r == 0 {
		return jsonscan.Nothing
	}
	if e := &nodes[r]; e.elem {
		// An element: what is found in it starts anew; its close is read
		// when it has a key.
		x.done &^= e.scope
		if e.slot > 0 {
			x.vals[e.slot], x.vals[e.slot2] = 0, 0
			return jsonscan.WithClose
		}
	}
	return jsonscan.Members
}

// pop records the close of an element at depth d: when its key was found,
// it goes into refs.
func (x *jsonIndex) pop(d int) {
	r := x.role[d-1]
	if e := &nodes[r]; x.vals[e.slot] != 0 {
		x.ref(toolRef{r, x.vals[e.slot], x.vals[e.slot2]})
	}
}

// str looks at the string value raw (quotes included) at v of an
// element's key, just read.
func (x *jsonIndex) str(raw string, v int) {
	n := &nodes[x.key]
	if n.may == nil || n.may(raw) || strings.IndexByte(raw, '\\') >= 0 {
		x.vals[n.slot] = v
	}
	x.key = 0
}

// at returns where the value of top-level member t starts, ok false when
// there is none.
func (x *jsonIndex) at(s string, t int) (v int, ok bool) {
	if x.top[t] == 0 {
		return 0, false
	}
	return jsonscan.Space(s, x.top[t]), true
}

// value returns the bounds of the value of top-level member t.
func (x *jsonIndex) value(s string, t int) (v, end int, ok bool) {
	if v, ok = x.at(s, t); !ok {
		return 0, 0, false
	}
	return v, jsonscan.SkipValue(s, v), true
}

// span returns the bounds of the value recorded in slot i of vals, end 0
// when none.
func (x *jsonIndex) span(s string, i int) (v, end int) {
	if x.vals[i] == 0 {
		return 0, 0
	}
	v = jsonscan.Space(s, x.vals[i])
	return v, jsonscan.SkipValue(s, v)
}

// topStr returns the value of top-level member t when it is a string.
func (x *jsonIndex) topStr(s string, t int) (string, bool) {
	v, ok := x.at(s, t)
	if !ok {
		return "", false
	}
	return strAt(s, v)
}

// strAt returns the string whose value starts at or after v (white space
// before it), ok false when the value there is not a string.
func strAt(s string, v int) (string, bool) {
	v = jsonscan.Space(s, v)
	if v >= len(s) || s[v] != '"' {
		return "", false
	}
	return jsonStr(s[v:jsonscan.SkipString(s, v)]), true
}

// jsonStr is the text of a JSON string literal of a valid document
// (quotes included): its inside as it is, decoded only when it holds an
// escape.
func jsonStr(raw string) string {
	in := raw[1 : len(raw)-1]
	if strings.IndexByte(in, '\\') < 0 {
		return in
	}
	return decodeJSONString(raw)
}
