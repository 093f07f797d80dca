package translate

import (
	"encoding/binary"
	"math/bits"
)

// Keys an event's JSON is looked up for, found by scanKeys.
const (
	hasMeta     = 1 << iota // "meta"
	hasToolCall             // "tool_calls"
	hasFuncCall             // "function_call"
	hasError                // "error"
	hasName                 // "name"
	hasUsage                // "usage"
)

// scanKeys reports which of the quoted strings "meta", "tool_calls",
// "function_call", "error", "name" and "usage" occur in data, exactly as
// bytes.Contains would for each, in one pass: it visits every '"' (eight
// bytes at a time, SWAR) and looks at what follows. Most events of a
// stream have none of them, so this is what keeps them off gjson's path.
func scanKeys(data []byte) (set uint8) {
	for k := nextQuoted(data, 0, &keyFirst); k >= 0; k = nextQuoted(data, k, &keyFirst) {
		set |= keyAt(data[k:])
	}
	return set
}

// nextQuoted returns the index of the first byte after a '"' at or past
// data[i] that first marks, or -1: the quotes are found eight bytes at a
// time (SWAR), and a string whose first byte is not marked costs no call.
// A '#' right after a quote can be taken for one (the borrow of the test),
// which only ever adds a candidate.
func nextQuoted(data []byte, i int, first *[256]bool) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:]) ^ (lo * '"')
		for m := (x - lo) &^ x & hi; m != 0; m &= m - 1 { // high bit set in each byte that was '"'
			if k := i + bits.TrailingZeros64(m)>>3 + 1; k < len(data) && first[data[k]] {
				return k
			}
		}
	}
	for ; i < len(data); i++ {
		if data[i] == '"' && i+1 < len(data) && first[data[i+1]] {
			return i + 1
		}
	}
	return -1
}

// scanKey is a key scanKeys looks for, with its closing quote, and its
// flag, listed once by first letter: no two may share one (the literal
// would not compile), so the first letter tells which one a string can be.
type scanKey struct {
	quoted string
	flag   uint8
}

var scanKeyOf = [256]scanKey{
	'm': {`meta"`, hasMeta},
	't': {`tool_calls"`, hasToolCall},
	'f': {`function_call"`, hasFuncCall},
	'e': {`error"`, hasError},
	'n': {`name"`, hasName},
	'u': {`usage"`, hasUsage},
}

// keyFirst marks the first letters of the keys scanKeys looks for: most
// strings start with another one and are passed over without a call.
var keyFirst = func() (first [256]bool) {
	for c, k := range scanKeyOf {
		first[c] = k.quoted != ""
	}
	return first
}()

// keyAt tells which key, with its closing quote, r starts with.
func keyAt(r []byte) uint8 {
	if len(r) == 0 {
		return 0
	}
	if k := &scanKeyOf[r[0]]; k.quoted != "" && len(r) >= len(k.quoted) && string(r[:len(k.quoted)]) == k.quoted {
		return k.flag
	}
	return 0
}

// keyScanner is scanKeys over the events of one stream, which may begin
// with the bytes an earlier one began with (chat chunks repeat their id,
// object, created and model: about 100 of their 170 bytes; Anthropic
// deltas their type and index; Responses deltas their type). Holding a copy
// of such an earlier event (hold), it does not look again at the part of
// an event that repeats it, up to where that one held its first key: that
// part cannot hold one.
type keyScanner struct {
	held      []byte // the event held (hold): later ones are compared with it
	heldFirst int    // where held's first key begins (its quote); len(held): none
	first     int    // where the last scanned event's first key begins; len: none
	shared    int    // how many bytes the last scanned event shares with held
}

// scan is scanKeys(data).
func (k *keyScanner) scan(data []byte) (set uint8) {
	// A key that lies wholly in the bytes data shares with held lies in
	// held too, at the same place, and held has none before heldFirst: so
	// none begins before from.
	k.shared = commonPrefix(data, k.held)
	from := min(k.heldFirst, max(0, k.shared-maxKeySpan+1))
	k.first = len(data)
	for i := nextQuoted(data, from, &keyFirst); i >= 0; i = nextQuoted(data, i, &keyFirst) {
		if key := keyAt(data[i:]); key != 0 {
			set |= key
			k.first = min(k.first, i-1)
		}
	}
	return set
}

// hold keeps a copy of data, the event scan was last given, for later
// events to be compared with, and returns it; it stays as it is until the
// next hold. Only what data does not share with the copy before is
// written.
func (k *keyScanner) hold(data []byte) []byte {
	k.held = append(k.held[:k.shared], data[k.shared:]...)
	k.heldFirst = k.first
	return k.held
}

// offer is hold for a protocol that needs no copy of its own (Responses,
// Anthropic: their deltas repeat a type and an index), except that an
// event larger than maxOffer, such as a terminal event with the whole
// reply, is not copied: the event held before stays, and what it says of
// its keys stays true.
func (k *keyScanner) offer(data []byte) {
	if len(data) <= maxOffer {
		k.hold(data)
	}
}

// maxOffer bounds the copy offer keeps: deltas are a few hundred bytes.
const maxOffer = 4 << 10

// maxKeySpan is the length of the longest key looked for, with its quotes.
const maxKeySpan = len(`"function_call"`)

// commonPrefix returns the length of the longest common prefix of a and b,
// comparing eight bytes at a time. (Written so that the compiler drops
// most bounds checks: half the time of a[i:] and b[i:].)
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	i := 0
	for ; len(a)-i >= 8; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:i+8:i+8]) ^ binary.LittleEndian.Uint64(b[i:i+8:i+8]); x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
