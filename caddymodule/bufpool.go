package caddymodule

import "sync"

// JSON replies are held whole, then written once; their buffers (the reply
// as it came, and the rewritten one) are used again by later requests
// instead of being left to the garbage collector: they are the largest
// allocations of a JSON request. Only buffers up to maxPooledBuf are kept,
// so a rare huge reply does not stay in memory.
const maxPooledBuf = 64 << 10

// replyBufs holds *[]byte (a pointer, so that Put does not allocate).
var replyBufs sync.Pool

// getReplyBuf returns an empty buffer with room for n bytes, or nil when n
// is larger than the pool keeps.
func getReplyBuf(n int) []byte {
	if n > maxPooledBuf {
		return nil
	}
	if p, ok := replyBufs.Get().(*[]byte); ok {
		if cap(*p) >= n {
			return (*p)[:0]
		}
		replyBufs.Put(p)
	}
	return make([]byte, 0, max(n, 1024))
}

// putReplyBuf gives b back to the pool. The caller must hold no other
// reference to it: http.ResponseWriter.Write does not keep what it is given,
// so a buffer written downstream is free again once Write returned.
func putReplyBuf(b []byte) {
	if cap(b) == 0 || cap(b) > maxPooledBuf {
		return
	}
	b = b[:0]
	replyBufs.Put(&b)
}

// outBuf is a pooled buffer for the rewritten form of a JSON reply body
// (about its size plus a meta), or nil for replies that are not forwarded or
// too large for the pool.
func (rw *responseWriter) outBuf(body []byte) []byte {
	if rw.kind != bufJSON {
		return nil
	}
	return getReplyBuf(len(body) + 256)
}

// sameMemory reports whether a and b start at the same array element.
func sameMemory(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}
