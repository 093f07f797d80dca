// Package translate is the pure logic of llm_meta: bytes in, bytes out. It
// knows nothing of Caddy or net/http, so every rule of the contract can be
// tested with plain table tests.
package translate

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Meta is the meta object being built for one reply, merged by the rule of
// SPEC 4.1: later keys win, except tools_used (union in first-seen order) and
// prompt_trimmed_to (the smaller number wins). Keys keep the position where
// they were first seen, so the output reads like the input.
//
// The zero value is an empty Meta ready to use. A Meta that holds tool
// names must not be copied: the copies would share the memory the names
// are kept in (toolText).
type Meta struct {
	keys []string // first-seen order, tools_used and prompt_trimmed_to included
	vals [][]byte // raw JSON per key; nil for the two special keys

	tools      []string
	toolText   []byte // the tool names, comma-joined; tools are read-only views of it
	trimmed    int64
	hasTrimmed bool
}

// metaStore is the first storage of a Meta, taken in one allocation: room
// for the usual few keys, tool names and their text, rather than three
// slices and a copy per name.
type metaStore struct {
	keys  [4]string
	vals  [4][]byte
	tools [4]string
	text  [64]byte
}

const (
	keyTools   = "tools_used"
	keyTrimmed = "prompt_trimmed_to"
	// KeyStructuredResult is the meta key a UI renders as a list, table or key/value view.
	KeyStructuredResult = "structured_result"
	// KeyStructuredMetadata carries the split-off fields of a structured reply (SPEC 7).
	KeyStructuredMetadata = "structured_metadata"
	// KeyHustle carries Agent Hustle's reasoning and cost data (SPEC 5.1).
	KeyHustle = "hustle"
)

// Reset empties m, keeping its storage.
func (m *Meta) Reset() {
	m.keys = m.keys[:0]
	m.vals = m.vals[:0]
	m.tools = m.tools[:0]
	m.toolText = nil // strings handed out (Tools, ToolsJoined) still read it
	m.trimmed, m.hasTrimmed = 0, false
}

// Empty reports whether m has nothing to say.
func (m *Meta) Empty() bool {
	return len(m.vals) == 0 || (len(m.tools) == 0 && !m.hasTrimmed && m.onlySpecialKeys())
}

func (m *Meta) onlySpecialKeys() bool {
	for _, v := range m.vals {
		if v != nil {
			return false
		}
	}
	return true
}

func (m *Meta) index(key string) int {
	for i, k := range m.keys {
		if k == key {
			return i
		}
	}
	return -1
}

func (m *Meta) touch(key string) int {
	if i := m.index(key); i >= 0 {
		return i
	}
	if m.keys == nil {
		// No key yet, so no tool either: all of the first storage at once.
		st := new(metaStore)
		m.keys, m.vals, m.tools, m.toolText = st.keys[:0], st.vals[:0], st.tools[:0], st.text[:0]
	}
	// Keys and names often come from gjson look-ups on a caller's buffer
	// (unsafeString): copy them, since m outlives that buffer (the module's
	// own keys are constants and need no copy).
	m.keys = append(m.keys, ownKey(key))
	m.vals = append(m.vals, nil)
	return len(m.keys) - 1
}

// ownKey returns key in memory of its own: the constant for the keys the
// module writes itself, else a copy.
func ownKey(key string) string {
	switch key {
	case keyTools:
		return keyTools
	case keyTrimmed:
		return keyTrimmed
	case KeyStructuredResult:
		return KeyStructuredResult
	case KeyStructuredMetadata:
		return KeyStructuredMetadata
	case KeyHustle:
		return KeyHustle
	}
	return strings.Clone(key)
}

// AddTool adds one tool name to tools_used, once, ignoring empty names.
func (m *Meta) AddTool(name string) {
	if name == "" {
		return
	}
	for _, t := range m.tools {
		if t == name {
			return
		}
	}
	m.touch(keyTools)
	// The names are kept as one comma-joined text (what the tools_used
	// placeholder shows), each a view of its part: one copy for all of
	// them. Bytes below len(toolText) are never written again (Reset drops
	// the text, and append moves to new memory when it grows), so the
	// views stay as they were made.
	start := len(m.toolText)
	if start > 0 {
		m.toolText = append(m.toolText, ',')
		start++
	}
	m.toolText = append(m.toolText, name...)
	m.tools = append(m.tools, unsafe.String(&m.toolText[start], len(name)))
}

// Tools returns tools_used in first-seen order. The slice is m's own.
func (m *Meta) Tools() []string { return m.tools }

// ToolsJoined returns tools_used comma-joined, as strings.Join would, without
// building it anew.
func (m *Meta) ToolsJoined() string {
	if len(m.tools) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(m.toolText), len(m.toolText))
}

// SetTrimmed records prompt_trimmed_to; the smaller of two values wins.
func (m *Meta) SetTrimmed(n int64) {
	if m.hasTrimmed && m.trimmed <= n {
		return
	}
	m.touch(keyTrimmed)
	m.trimmed, m.hasTrimmed = n, true
}

// Trimmed returns prompt_trimmed_to and whether it is set.
func (m *Meta) Trimmed() (int64, bool) { return m.trimmed, m.hasTrimmed }

// Set stores raw JSON under key (later wins). The two special keys are merged
// by their own rule instead. raw is copied.
func (m *Meta) Set(key string, raw []byte) {
	switch key {
	case keyTools:
		gjson.ParseBytes(raw).ForEach(func(_, v gjson.Result) bool {
			if v.Type == gjson.String {
				m.AddTool(v.Str)
			}
			return true
		})
		return
	case keyTrimmed:
		if v := gjson.ParseBytes(raw); v.Type == gjson.Number {
			m.SetTrimmed(int64(v.Num))
		}
		return
	}
	i := m.touch(key)
	m.vals[i] = append([]byte(nil), raw...)
}

// Get returns the raw JSON stored under key, or nil. It does not answer for
// tools_used and prompt_trimmed_to; use Tools and Trimmed.
func (m *Meta) Get(key string) []byte {
	if i := m.index(key); i >= 0 {
		return m.vals[i]
	}
	return nil
}

// Has reports whether key holds a value, the two special keys included.
func (m *Meta) Has(key string) bool {
	switch key {
	case keyTools:
		return len(m.tools) > 0
	case keyTrimmed:
		return m.hasTrimmed
	}
	return m.Get(key) != nil
}

// MergeJSON merges a JSON object into m. It reports false, merging nothing,
// when raw is not an object.
func (m *Meta) MergeJSON(raw []byte) bool {
	v := gjson.ParseBytes(raw)
	if !v.IsObject() || !ValidJSON(unsafeString(raw)) {
		return false
	}
	m.mergeResult(v)
	return true
}

// MergeResult is MergeJSON for an already parsed value.
func (m *Meta) mergeResult(v gjson.Result) {
	v.ForEach(func(k, val gjson.Result) bool {
		m.Set(k.Str, []byte(val.Raw))
		return true
	})
}

// Merge merges another Meta into m by the same rule.
func (m *Meta) Merge(o *Meta) {
	for i, k := range o.keys {
		switch k {
		case keyTools:
			for _, t := range o.tools {
				m.AddTool(t)
			}
		case keyTrimmed:
			if o.hasTrimmed {
				m.SetTrimmed(o.trimmed)
			}
		default:
			if o.vals[i] != nil {
				m.Set(k, o.vals[i])
			}
		}
	}
}

// AppendJSON appends m as a compact JSON object, with structured_result made
// safe for text rendering (SPEC 4.1).
func (m *Meta) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	for i, k := range m.keys {
		var val []byte
		switch k {
		case keyTools:
			if len(m.tools) == 0 {
				continue
			}
		case keyTrimmed:
			if !m.hasTrimmed {
				continue
			}
		default:
			if m.vals[i] == nil {
				continue
			}
			val = m.vals[i]
			if k == KeyStructuredResult {
				val = StringifyStructuredResult(val)
			}
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		switch k {
		case keyTools:
			dst = append(dst, '[')
			for j, t := range m.tools {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONString(dst, t)
			}
			dst = append(dst, ']')
		case keyTrimmed:
			dst = strconv.AppendInt(dst, m.trimmed, 10)
		default:
			dst = appendValidUTF8(dst, compactJSON(val))
		}
	}
	return append(dst, '}')
}

// appendValidUTF8 appends a JSON value that came from upstream with any
// invalid UTF-8 in it (which can only sit inside its strings) replaced by
// U+FFFD, as appendJSONString does for the module's own strings: the meta
// goes into events and answers the module writes itself.
func appendValidUTF8(dst, raw []byte) []byte {
	if utf8.Valid(raw) {
		return append(dst, raw...)
	}
	return append(dst, bytes.ToValidUTF8(raw, []byte("\uFFFD"))...)
}

// JSON returns m as a compact JSON object.
func (m *Meta) JSON() []byte { return m.AppendJSON(make([]byte, 0, m.sizeHint())) }

// sizeHint is about the length of m's JSON (escapes and the rewriting of
// structured_result aside), so that JSON allocates once.
func (m *Meta) sizeHint() int {
	n := 2
	for i, k := range m.keys {
		n += len(k) + 4
		switch k {
		case keyTools:
			for _, t := range m.tools {
				n += len(t) + 3
			}
		case keyTrimmed:
			n += 20
		default:
			n += len(m.vals[i])
		}
	}
	return n
}

// compactJSON removes insignificant white space, so that meta events stay one line.
func compactJSON(raw []byte) []byte {
	if !hasSpaceOutsideStrings(raw) {
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := jsonCompact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// hasSpaceOutsideStrings reports whether raw has white space between tokens.
func hasSpaceOutsideStrings(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && isJSONSpace(c):
			return true
		}
	}
	return false
}
