package httpmeta

import "sync"

// JSON replies are held whole, then written out in pieces of that one
// buffer around their meta; the buffer is used again by later requests
// instead of being left to the garbage collector: it is the largest
// allocation of a JSON request. Only buffers up to maxPooledBuf are kept,
// so a rare huge reply does not stay in memory.
const maxPooledBuf = 64 << 10

// replyBuf holds a pooled buffer. The pool keeps these holders rather than
// slices: putting a slice into a sync.Pool would allocate a box for it each
// time.
type replyBuf struct{ b []byte }

var replyBufs = sync.Pool{New: func() any { return new(replyBuf) }}

// getReplyBuf returns a holder whose buffer is empty with room for n bytes,
// or nil when n is larger than the pool keeps.
func getReplyBuf(n int) *replyBuf {
	if n > maxPooledBuf {
		return nil
	}
	rb := replyBufs.Get().(*replyBuf)
	if cap(rb.b) < n {
		rb.b = make([]byte, 0, max(n, 1024))
	}
	rb.b = rb.b[:0]
	return rb
}

// putReplyBuf gives rb back to the pool, holding b (its own buffer, or one
// that replaced it). The caller must hold no other reference to either:
// http.ResponseWriter.Write does not keep what it is given, so a buffer
// written downstream is free again once Write returned. Each holder must go
// back at most once.
func putReplyBuf(rb *replyBuf, b []byte) {
	if rb == nil {
		return
	}
	if cap(b) > maxPooledBuf {
		b = nil
	}
	rb.b = b[:0]
	replyBufs.Put(rb)
}
