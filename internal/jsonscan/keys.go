package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// KeySet flags keys of a Keys table: bit i for its i-th key.
type KeySet uint32

// MaxKeys is how many keys a Keys table holds.
const MaxKeys = 32

// Keys is what the key scan looks for: the keys (each with its closing
// quote) by first byte, in order, and the length of the longest, quotes
// included.
type Keys struct {
	at   [256]uint8 // 1 + the index in keys of the first key starting with the byte; 0: none
	keys []scanKey  // grouped by first byte
	span int
}

// scanKey is a key the scan looks for, with its closing quote, and its flag.
type scanKey struct {
	quoted string
	flag   KeySet
}

// NewKeys is the table of keys: key i is flagged by bit i.
func NewKeys(keys ...string) *Keys {
	if len(keys) > MaxKeys {
		panic("jsonscan: more than MaxKeys keys")
	}
	t := new(Keys)
	for c := 0; c < 256; c++ { // grouped by first byte, in order
		for i, k := range keys {
			if k[0] == byte(c) {
				if t.at[c] == 0 {
					t.at[c] = uint8(len(t.keys) + 1)
				}
				t.keys = append(t.keys, scanKey{k + `"`, 1 << i})
				t.span = max(t.span, len(k)+2)
			}
		}
	}
	return t
}

// NextQuoted returns the index of the first byte after a '"' at or past
// data[i] that first marks, or -1: the quotes are found eight bytes at a
// time (SWAR), and a string whose first byte is not marked costs no call.
// The result is exact: a byte the test takes for a quote that is none
// (a '#' right after one, by the borrow) is passed over.
func NextQuoted(data []byte, i int, first *[256]uint8) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:]) ^ (lo * '"')
		for m := (x - lo) &^ x & hi; m != 0; m &= m - 1 { // high bit set in each byte that was '"'
			// A '#' right after a quote can be taken for one (the borrow of
			// the test): the byte before k is checked.
			if k := i + bits.TrailingZeros64(m)>>3 + 1; k < len(data) && first[data[k]] != 0 && data[k-1] == '"' {
				return k
			}
		}
	}
	for ; i < len(data); i++ {
		if data[i] == '"' && i+1 < len(data) && first[data[i+1]] != 0 {
			return i + 1
		}
	}
	return -1
}

// keyAt tells which keys, with their closing quote, r starts with.
func (t *Keys) keyAt(r []byte) (set KeySet) {
	if len(r) == 0 {
		return 0
	}
	c := r[0]
	for i := int(t.at[c]) - 1; i >= 0 && i < len(t.keys) && t.keys[i].quoted[0] == c; i++ {
		if k := &t.keys[i]; len(r) >= len(k.quoted) && string(r[:len(k.quoted)]) == k.quoted {
			set |= k.flag
		}
	}
	return set
}

// KeyScanner is the key scan over the events of one stream, which may
// begin with the bytes an earlier one began with (a stream's events often
// repeat an id, a type, a model, an index: most of a small event). Holding
// a copy of such an earlier event (Hold), it does not look again at the
// part of an event that repeats it, up to where that one held its first
// key: that part cannot hold one.
type KeyScanner struct {
	Table     *Keys
	held      []byte // the event held (Hold): later ones are compared with it
	heldFirst int    // where held's first key begins (its quote); len(held): none
	first     int    // where the last scanned event's first key begins; len: none
	shared    int    // how many bytes the last scanned event shares with held
}

// Scan reports which of the keys of k.Table occur as quoted strings in
// data, exactly as bytes.Contains would for each, in one pass: it visits
// every '"' (NextQuoted) and looks at what follows. Most events of a
// stream have none of them, so this is what keeps them from being parsed.
func (k *KeyScanner) Scan(data []byte) (set KeySet) {
	// A key that lies wholly in the bytes data shares with held lies in
	// held too, at the same place, and held has none before heldFirst: so
	// none begins before from.
	k.shared = CommonPrefix(data, k.held)
	t := k.Table
	from := min(k.heldFirst, max(0, k.shared-t.span+1))
	k.first = len(data)
	for i := NextQuoted(data, from, &t.at); i >= 0; i = NextQuoted(data, i, &t.at) {
		if key := t.keyAt(data[i:]); key != 0 {
			set |= key
			k.first = min(k.first, i-1)
		}
	}
	return set
}

// Hold keeps a copy of data, the event Scan was last given, for later
// events to be compared with, and returns it; it stays as it is until the
// next Hold. Only what data does not share with the copy before is
// written.
func (k *KeyScanner) Hold(data []byte) []byte {
	k.held = append(k.held[:k.shared], data[k.shared:]...)
	k.heldFirst = k.first
	return k.held
}

// Offer is Hold for a caller that needs no copy of its own, except that
// an event larger than maxOffer (a terminal event with a whole reply, say)
// is not copied: the event held before stays, and what it says of its keys
// stays true.
func (k *KeyScanner) Offer(data []byte) {
	if len(data) <= maxOffer {
		k.Hold(data)
	}
}

// maxOffer bounds the copy Offer keeps: the events that repeat one
// another are a few hundred bytes.
const maxOffer = 4 << 10

// CommonPrefix returns the length of the longest common prefix of a and b,
// comparing eight bytes at a time. (Written so that the compiler drops
// most bounds checks: half the time of a[i:] and b[i:].)
func CommonPrefix(a, b []byte) int {
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

// Held is the event held (Hold).
func (k *KeyScanner) Held() []byte { return k.held }

// First is where the first key of the event last scanned begins (its
// quote), or the event's length when it has none.
func (k *KeyScanner) First() int { return k.first }
