package translate

import (
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// jsonIndex is what the pass that validates a JSON reply (scanJSON) learns
// of it on the way, so that reading the reply needs no second pass over
// it: where the top-level members that the protocols read begin, where the
// counts of the usage object begin, and the tools the reply names, as a
// chat completion (choices[*].message.tool_calls[*].function.name,
// choices[*].message.function_call.name), and the items of the top-level
// members the protocols name their tools in (jsonProtocol.items: a
// Responses object's output, an Anthropic message's content) would name
// them: which protocol it is shows only at the end (its top level).
//
// Each is found as gjson's Get and ForEach would find it (the first member
// of a name, the first one through which a path leads), as the walks of
// walks of json_walk.go and json_read.go do, which FuzzJSONReplyParts holds them
// to. A key written with escapes is compared as its text, as gjson
// compares it. More tools than refs holds are flagged (idxManyTools): they
// are then found by the walks.
type jsonIndex struct {
	// top holds, for each topKey, where the value of the first top-level
	// member of that name starts (just past its colon); 0: none.
	top   [maxTopKeys]int
	flags uint8

	// role of each open container by depth (1: the root), the deeper ones
	// having none.
	role [8]uint8
	// key is what the value of the member just read is to the reading
	// (a k* constant), at depth keyDepth.
	key      uint8
	keyDepth int
	// topAt is the top slot of the top-level member read last, itemsTop
	// that of the items container being read.
	topAt, itemsTop int

	// The choice being read: its message's tool_calls and function_call
	// found (tcDone, fcDone), where its function_call's name starts; and
	// whether the call being read has its function's name.
	tcDone, fcDone, callFound bool
	fcName                    int
	// The item (output item, content block) being read: where its first
	// type and name start, and whether its type may name a tool.
	itemType, itemName int
	itemTool           bool

	// usage holds where each count of the usage object starts (a
	// usageSlot), 0: none.
	usage [maxUsageSlots]int

	refs  [24]toolRef
	nrefs int
}

// toolRef is a tool the index found: a chat tool name, or an item (the
// start of its type and of its name, 0: none) of a protocol's items.
type toolRef struct {
	kind    uint8 // refChat, or the top slot of the items' container
	v, name int
}

const refChat = 0xff

// The top-level members every JSON reply is read by; the protocols'
// topKeys and items get the slots after these (registerTopKeys).
const (
	topID = iota
	topModel
	topMeta
	topUsage
	topChoices
	topFixed
	maxTopKeys = 16
)

// topNames holds the name of each top slot (the value: 1 + the slot).
var (
	topNames = func() (t jsonscan.Names) {
		for i, k := range [...]string{topID: "id", topModel: "model", topMeta: "meta", topUsage: "usage", topChoices: "choices"} {
			t.Add(k, i+1)
		}
		return t
	}()
	// topRole is the role of the value of each top-level member.
	topRole = [maxTopKeys]uint8{topChoices: inChoices, topUsage: inUsage}
	// itemsMayBeTool is, for an items slot, its protocol's mayBeTool.
	itemsMayBeTool [maxTopKeys]func(rawType string) bool
)

// maxIndexedKey bounds the length of the names the index looks for.
const maxIndexedKey = 40

// indexedName panics, at registration, on a name longer than
// maxIndexedKey.
func indexedName(k string) string {
	if len(k) > maxIndexedKey {
		panic("translate: a key longer than maxIndexedKey: " + k)
	}
	return k
}

// topSlotOf is the top slot named k, or -1.
func topSlotOf(k string) int {
	v, _ := topNames.Get(k)
	return v - 1
}

// addTopKey gives k a top slot, when it has none, and returns it.
func addTopKey(k string) int {
	if i := topSlotOf(k); i >= 0 {
		return i
	}
	if topNames.Len() == maxTopKeys {
		panic("translate: more top-level keys than maxTopKeys")
	}
	return topNames.Add(indexedName(k), topNames.Len()+1) - 1
}

// registerTopKeys gives a JSON protocol's top-level keys their slots, and
// its items their role.
func registerTopKeys(j *jsonProtocol) {
	for _, k := range j.topKeys {
		addTopKey(k)
	}
	if j.items == "" {
		return
	}
	i := addTopKey(j.items)
	if topRole[i] != inNone {
		panic("translate: two protocols name their items " + j.items)
	}
	may := j.mayBeTool
	if may == nil {
		may = func(string) bool { return true }
	}
	j.itemsTop, topRole[i], itemsMayBeTool[i] = i, inItems, may
}

// jsonIndex flags.
const (
	idxNestedMeta = 1 << iota // a choice has a "meta" member (choices[i].meta)
	idxManyTools              // more tools than refs holds
)

// Roles of containers: what reading the reply makes of them.
const (
	inNone         = iota
	inRoot         // the reply
	inChoices      // the first top-level choices
	inChoice       // an object in it
	inMessage      // a message of a choice, read for its tools
	inToolCalls    // the message's first tool_calls
	inCall         // an object in it
	inFunction     // a call's function, read for its name
	inFuncCall     // a message's function_call, read for its name
	inItems        // the first top-level member a protocol names its tools' items in
	inItem         // an object in it
	inUsage        // the first top-level usage
	inDetailsFirst // a usage object's prompt_tokens_details, …: inDetailsFirst + its detail*
)

// What the value of a member is to the reading (jsonIndex.key): the role
// of the container it opens, or a string to look at.
const (
	kNone     = iota
	kToolName = inDetailsFirst + maxDetails + iota // a call's function name
	kItemType                                      // an item's first type
)

// The counts of the usage objects the protocols name (protocol.usage),
// each in a slot of the index's: a count at the usage object's top level
// (usageNamesTop), or a member of a details object there
// (usageNamesDetail), registered by registerUsage.
const (
	maxUsageSlots = 16
	maxDetails    = 6
)

var (
	// usageNamesTop maps a member of a usage object to 1 + its slot, or
	// to -(1 + the details object it is).
	usageNamesTop    jsonscan.Names
	usageNamesDetail [maxDetails]jsonscan.Names // a details object's members: 1 + slot
	usageSlotCount   int
)

// registerUsage gives each count of a protocol's usage names its slot.
func registerUsage(n *usageNames) {
	n.slots = make([]int, len(n.paths))
	for i, path := range n.paths {
		top, member, detail := path, "", false
		if j := strings.IndexByte(path, '.'); j >= 0 {
			top, member, detail = path[:j], indexedName(path[j+1:]), true
		}
		indexedName(top)
		v, ok := usageNamesTop.Get(top)
		if ok && (v < 0) != detail {
			panic("translate: usage member " + top + " is a count and a details object")
		}
		if !detail {
			if !ok {
				v = usageNamesTop.Add(top, newUsageSlot())
			}
			n.slots[i] = v - 1
			continue
		}
		if !ok {
			d := usageDetailCount()
			if d == maxDetails {
				panic("translate: more usage details objects than maxDetails")
			}
			v = usageNamesTop.Add(top, -(d + 1))
		}
		t := &usageNamesDetail[-v-1]
		s, ok := t.Get(member)
		if !ok {
			s = t.Add(member, newUsageSlot())
		}
		n.slots[i] = s - 1
	}
}

// newUsageSlot returns 1 + a new slot.
func newUsageSlot() int {
	if usageSlotCount == maxUsageSlots {
		panic("translate: more usage counts than maxUsageSlots")
	}
	usageSlotCount++
	return usageSlotCount
}

// usageDetailCount is how many details objects are registered.
func usageDetailCount() (n int) {
	for _, v := range usageNamesTop.Values() {
		if v < 0 {
			n++
		}
	}
	return n
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
	x.key = kNone
	k := key[1 : len(key)-1]
	if esc {
		// Spelt with escapes: compared as its text. An escape spells at
		// least one byte in six, and no name looked for is longer than
		// maxIndexedKey: a longer key names none.
		var buf [6 * maxIndexedKey]byte
		if len(k) > len(buf) {
			return
		}
		k = strView(jsonscan.AppendUnescaped(buf[:0], k))
	}
	if depth == 1 {
		t := topSlotOf(k)
		if t < 0 || x.top[t] != 0 {
			return
		}
		x.top[t] = v
		x.key, x.keyDepth, x.topAt = topRole[t], 1, t
		return
	}
	if depth > len(x.role) {
		return
	}
	x.keyDepth = depth
	switch r := x.role[depth-1]; r {
	case inChoice:
		if k == "meta" {
			x.flags |= idxNestedMeta
		}
		if k == "message" { // read while its tool_calls or function_call is not found
			x.key = inMessage
		}
	case inMessage:
		switch {
		case k == "tool_calls" && !x.tcDone:
			x.tcDone = true
			x.key = inToolCalls
		case k == "function_call" && !x.fcDone:
			x.key = inFuncCall
		}
	case inCall:
		if k == "function" && !x.callFound {
			x.key = inFunction
		}
	case inFunction:
		if k == "name" && !x.callFound {
			x.callFound = true
			x.key = kToolName
		}
	case inFuncCall:
		if k == "name" && !x.fcDone {
			x.fcDone, x.fcName = true, v
		}
	case inItem:
		if k == "type" && x.itemType == 0 {
			x.itemType = v
			x.key = kItemType
		} else if k == "name" && x.itemName == 0 {
			x.itemName = v
		}
	case inUsage:
		if n, ok := usageNamesTop.Get(k); ok && n > 0 && x.usage[n-1] == 0 {
			x.usage[n-1] = v
		} else if ok && n < 0 {
			x.key = uint8(inDetailsFirst - n - 1)
		}
	default:
		if r >= inDetailsFirst && r < inDetailsFirst+maxDetails {
			if n, ok := usageNamesDetail[r-inDetailsFirst].Get(k); ok && x.usage[n-1] == 0 {
				x.usage[n-1] = v
			}
		}
	}
	return x.key >= kToolName
}

// push records a container opened at depth d with bracket c: its role,
// from its parent's and the member it is the value of. What a container
// of no role holds is not read, only validated; only a choice's and an
// item's close is read (pop).
func (x *jsonIndex) push(d int, c byte) jsonscan.Want {
	if d > len(x.role) {
		return jsonscan.Nothing
	}
	if d == 1 {
		x.role[0] = inRoot
		return jsonscan.Members
	}
	var r uint8
	switch parent := x.role[d-2]; {
	case parent == inChoices || parent == inToolCalls || parent == inItems:
		// Their elements (or, in an object, its values: gjson's ForEach
		// visits both alike).
		if c == '{' {
			r = elementRole[parent]
		}
	case x.keyDepth == d-1 && x.key != kNone && x.key < kToolName:
		r = x.key
		if wantArray := r == inToolCalls; (c == '[') != wantArray && !(r == inChoices || r == inItems) {
			r = inNone
		}
		if r == inItems {
			x.itemsTop = x.topAt
		}
	}
	x.key = kNone
	x.role[d-1] = r
	switch r {
	case inNone:
		return jsonscan.Nothing
	case inChoice:
		x.tcDone, x.fcDone, x.fcName = false, false, 0
		return jsonscan.WithClose
	case inCall:
		x.callFound = false
	case inItem:
		x.itemType, x.itemName, x.itemTool = 0, 0, false
		return jsonscan.WithClose
	}
	return jsonscan.Members
}

// elementRole is the role of an object element of a container.
var elementRole = [inDetailsFirst]uint8{inChoices: inChoice, inToolCalls: inCall, inItems: inItem}

// pop records the close of a choice or an item at depth d: a choice's
// function_call name, an item that may name a tool, go into refs.
func (x *jsonIndex) pop(d int) {
	switch x.role[d-1] {
	case inChoice:
		if x.fcName != 0 {
			x.ref(refChat, x.fcName, 0)
		}
	case inItem:
		if x.itemTool {
			x.ref(uint8(x.itemsTop), x.itemType, x.itemName)
		}
	}
}

// str looks at the string value raw (quotes included) at v of the member
// just read.
func (x *jsonIndex) str(raw string, v int) {
	switch x.key {
	case kToolName:
		x.ref(refChat, v, 0)
	case kItemType:
		// Whether the item's type may name a tool, by its protocol; one
		// with an escape may spell any.
		x.itemTool = itemsMayBeTool[x.itemsTop](raw) || strings.IndexByte(raw, '\\') >= 0
	}
	x.key = kNone
}

func (x *jsonIndex) ref(kind uint8, v, name int) {
	if x.nrefs == len(x.refs) {
		x.flags |= idxManyTools
		return
	}
	x.refs[x.nrefs] = toolRef{kind, v, name}
	x.nrefs++
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

// str returns the value of top-level member t when it is a string.
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
