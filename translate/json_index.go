package translate

import (
	"math/bits"
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
	kids      uint64 // its member children, a bit per node (child)
	each      uint8  // the node of each element ("*", "#"), 0 when none
	arrayOnly bool   // "#": only an array's elements
	elem      bool   // an element of a list
	first     bool   // only its first member counts (recorded, or a list)
	top       bool   // a top-level member, recorded in top
	keyOf     uint8  // the element whose key it is, 0 when none
	slot      int    // its slot in top or vals; for an element, of its key
	slot2     int    // an element's second path's slot, 0: none
	may       func(raw string) bool
	scope     uint64 // an element's: the nodes found once in it
}

// child returns the node of n's member named k, 0 when none.
func (n *jsonNode) child(k string) uint8 { return named(n.candidates(k, 0, len(k)), k) }

// candidates returns the member children of n that may be named
// s[i:i+l]: a member node has one name, and those of that length, first
// and last byte (a bit per node in each table) are the few left, so that
// most keys of a reply, named by none, are told apart without a
// comparison or a call.
func (n *jsonNode) candidates(s string, i, l int) uint64 {
	if l <= 0 || l >= len(byLen) {
		return 0
	}
	return n.kids & byLen[l] & byFirst[s[i]] & byLast[s[i+l-1]]
}

// named returns the node among the candidates m that is named k, 0 when
// none. A candidate has k's length, first and last byte: the rest is
// compared by its middle byte or a word at a time (four bytes, or eight, at
// both ends and between), cheaper than a call to the runtime's comparison.
func named(m uint64, k string) uint8 {
next:
	for ; m != 0; m &= m - 1 {
		c := bits.TrailingZeros64(m)
		switch name, n := nodeName[c], len(k); {
		case n < 4:
			if n < 3 || k[1] == name[1] {
				return uint8(c)
			}
		case n <= 8:
			if jsonscan.Load32(k, 0) == jsonscan.Load32(name, 0) && jsonscan.Load32(k, n-4) == jsonscan.Load32(name, n-4) {
				return uint8(c)
			}
		default:
			for i := 0; i < n-8; i += 8 {
				if jsonscan.Load64(k, i) != jsonscan.Load64(name, i) {
					continue next
				}
			}
			if jsonscan.Load64(k, n-8) == jsonscan.Load64(name, n-8) {
				return uint8(c)
			}
		}
	}
	return 0
}

// escapedChild is child of a key spelt with escapes: compared as its
// text. An escape spells at least one byte in six, and no name looked for
// is longer than maxIndexedKey: a longer key names none.
func (n *jsonNode) escapedChild(k string) uint8 {
	var buf [6 * maxIndexedKey]byte
	if len(k) > len(buf) {
		return 0
	}
	return n.child(strView(jsonscan.AppendUnescaped(buf[:0], k)))
}

// addChild gives n a member child named k and returns its node.
func (n *jsonNode) addChild(k string) uint8 {
	c := newNode()
	nodeName[c] = k
	n.kids |= 1 << c
	byLen[len(k)] |= 1 << c
	byFirst[k[0]] |= 1 << c
	byLast[k[len(k)-1]] |= 1 << c
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
	// The name of each member node, and the member nodes by the length,
	// the first and the last byte of their names (child).
	nodeName        [maxNodes]string
	byLen           [maxIndexedKey + 1]uint64 // byLen[0]: none
	byFirst, byLast [256]uint64
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
				if nodes[n].kids != 0 || n == rootNode {
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
// Its hooks are closures over x, not x's method values, which the compiler
// calls through a wrapper of its own (JSONReply2K/chat: 550 instructions).
func scanJSON(s string, x *jsonIndex) bool {
	return jsonscan.Scan(s, &jsonscan.Hooks{
		// A member's key (quotes included) at depth (1: the top level)
		// whose value starts at v or after white space: whether its value
		// is to be looked at (String) if a string.
		Member: func(key string, v, depth int, esc bool) (wantString bool) {
			x.key = 0
			if depth > len(x.role) {
				return false
			}
			// A list's members are its elements (Open): it has no member
			// children.
			n := &nodes[x.role[depth-1]]
			var c uint8
			if l := len(key) - 2; esc {
				c = n.escapedChild(key[1 : len(key)-1])
			} else if m := n.candidates(key, 1, l); m != 0 && m&(m-1) == 0 && l >= 4 && l <= 8 {
				// One candidate of four to eight bytes (an item's "type",
				// say), compared here: the call to named would cost more
				// than the comparison (Hostile/anthropic_json/text_blocks).
				i := bits.TrailingZeros64(m)
				if name := nodeName[i]; jsonscan.Load32(key, 1) == jsonscan.Load32(name, 0) && jsonscan.Load32(key, l-3) == jsonscan.Load32(name, l-4) {
					c = uint8(i)
				}
			} else if m != 0 {
				c = named(m, key[1:len(key)-1])
			}
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
					return true // recorded when a string (String)
				case cn.slot > 0:
					x.vals[cn.slot] = v
				}
			}
			x.key, x.keyDepth = c, depth
			return false
		},
		// A container opened at depth d with bracket c: its node, from its
		// parent's and the member it is the value of. What a container of
		// no node holds is not read, only validated; only an element's
		// close is read (Close).
		Open: func(d int, c byte) jsonscan.Want {
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
				// A list: its elements (or, in an object, its values:
				// gjson's ForEach visits both alike) that are objects.
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
				case c == '[' || n.kids == 0:
					r = 0
				}
			}
			x.key = 0
			x.role[d-1] = r
			if r == 0 {
				return jsonscan.Nothing
			}
			if e := &nodes[r]; e.elem {
				// An element: what is found in it starts anew; its close is
				// read when it has a key and a second path (String refs one
				// without).
				x.done &^= e.scope
				if e.slot2 > 0 {
					return jsonscan.WithClose
				}
			}
			return jsonscan.Members
		},
		// The close of an element at depth d: when its key was found, it
		// goes into refs. Its values are taken, for the next element of
		// its node to start without them.
		Close: func(d int) {
			r := x.role[d-1]
			e := &nodes[r]
			if x.vals[e.slot] != 0 {
				x.ref(toolRef{r, x.vals[e.slot], x.vals[e.slot2]})
				x.vals[e.slot] = 0
			}
			x.vals[e.slot2] = 0
		},
		// The string value raw (quotes included) at v of an element's key,
		// just read: the element goes into refs now when its key is all it
		// has, else at its close.
		String: func(raw string, v int) {
			n := &nodes[x.key]
			if n.may == nil || n.may(raw) || strings.IndexByte(raw, '\\') >= 0 {
				if nodes[n.keyOf].slot2 == 0 {
					x.ref(toolRef{node: n.keyOf, v: v})
				} else {
					x.vals[n.slot] = v
				}
			}
			x.key = 0
		},
	})
}

// value returns the bounds of the value of top-level member t.
func (x *jsonIndex) value(s string, t int) (v, end int, ok bool) {
	if x.top[t] == 0 {
		return 0, 0, false
	}
	v = jsonscan.Space(s, x.top[t])
	return v, jsonscan.SkipValue(s, v), true
}

// topStr returns the value of top-level member t when it is a string.
func (x *jsonIndex) topStr(s string, t int) (string, bool) {
	if x.top[t] == 0 {
		return "", false
	}
	return strAt(s, x.top[t])
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
