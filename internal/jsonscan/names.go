package jsonscan

import "math/bits"

// Names is a small set of names, each with a value, looked up by the
// name's first byte (a bit per name) and then compared: a handful of
// comparisons for a member's key, where a map would hash it.
type Names struct {
	names   [32]string
	vals    [32]int
	n       int
	byFirst [256]uint32
}

// Get returns the value of name k.
func (t *Names) Get(k string) (int, bool) {
	if len(k) == 0 {
		return 0, false
	}
	for m := t.byFirst[k[0]]; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros32(m); t.names[i] == k {
			return t.vals[i], true
		}
	}
	return 0, false
}

// Add adds name k with value v (not 0) and returns v.
func (t *Names) Add(k string, v int) int {
	if t.n == len(t.names) {
		panic("jsonscan: a name table is full")
	}
	t.names[t.n], t.vals[t.n] = k, v
	t.byFirst[k[0]] |= 1 << t.n
	t.n++
	return v
}

// Len is how many names t holds.
func (t *Names) Len() int { return t.n }

// Values returns the values of t's names, in the order they were added.
func (t *Names) Values() []int { return t.vals[:t.n] }
