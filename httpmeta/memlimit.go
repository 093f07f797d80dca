package httpmeta

import (
	"bytes"

	"github.com/llm-meta/llm_meta/translate"
)

// Memory follows the bytes that arrived (SPEC 8.1): a declared length
// (Content-Length, a client's or an upstream's) is a promise, not bytes.
// A buffer is sized from it only up to firstRoom; past that it grows as
// bytes come, doubling, never past the limit it is read against. A hundred
// requests that each declare 16 MiB and send one byte then hold a hundred
// small buffers, not 1.6 GB.

// firstRoom is the most a buffer is given before its bytes arrive.
const firstRoom = 32 << 10

// firstCap is the capacity to start a buffer with for a body that declares
// declared bytes (< 0: unknown) and is read up to limit.
func firstCap(declared, limit int64) int {
	if declared <= 0 {
		return 0
	}
	return int(min(declared, limit, firstRoom))
}

// growTo returns b with room for at least n more bytes, growing to double
// its capacity but never past limit (nor below len(b)+n).
func growTo(b []byte, n int, limit int64) []byte { return translate.GrowBounded(b, n, int(limit)) }

// growBuffer makes room in buf for n more bytes the same way: bytes.Buffer
// would double its capacity, up to twice the limit.
func growBuffer(buf *bytes.Buffer, n int, limit int64) {
	if buf.Available() >= n {
		return
	}
	*buf = *bytes.NewBuffer(growTo(buf.Bytes(), n, limit))
}
