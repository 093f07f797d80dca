package translate

// GrowBounded returns b with room for at least n more bytes, for a buffer
// that is never to hold more than limit bytes (SPEC 8.1): when it must grow
// it doubles, as append does, but not past limit (nor below len(b)+n), so
// that a buffer read up to a configured limit takes at most that limit, not
// the next power of two above it. limit <= 0 means no limit.
func GrowBounded(b []byte, n, limit int) []byte {
	need := len(b) + n
	if need <= cap(b) {
		return b
	}
	c := max(2*cap(b), need, 512)
	if limit > 0 && c > limit {
		c = max(limit, need)
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	return nb
}

// appendBounded is append(dst, p...) growing as GrowBounded does.
func appendBounded(dst, p []byte, limit int) []byte {
	return append(GrowBounded(dst, len(p), limit), p...)
}
