package translate

import (
	"strings"
	"unsafe"
)

// The one place the module lets a string and a byte slice share memory.
// It earns its place on the hot path: reading a body or an event with
// gjson and the jsonscan walks takes a string, and a copy of each would be
// an allocation per event and per reply, where BenchmarkProtocolPassthrough
// and BenchmarkJSONReply2K (TestJSONReplyNoAllocs) show none; the tool
// names and the model a record keeps would be one more per reply.
//
// The invariant every caller keeps (TestViews, FuzzViews): the bytes under
// a view are never written while the view is in use. A view of a caller's
// buffer (a body, an event) is used before the call that made it returns,
// or copied (Meta copies the keys and names it keeps); a view of the
// module's own memory (Meta's tool names, the record's model) is of bytes
// that are only appended to, never written again: append moves to new
// memory when it grows, and a reset drops the memory instead of reusing
// it.

// strView is b as a string, without a copy.
func strView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// StringIn is s copied into buf and viewed there, or a copy of its own when
// it does not fit: for a caller that keeps a short string past the memory
// it came from, in memory of its own it allocates anyway (httpmeta's View
// keeps an ended exchange's model so: TestReplyModelCostsNoAllocation).
// buf must not be written while the string is in use.
func StringIn(buf []byte, s string) string {
	if len(s) > len(buf) {
		return strings.Clone(s)
	}
	return strView(buf[:copy(buf, s)])
}

// bytesView is s as bytes, without a copy: they must not be written.
func bytesView(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
