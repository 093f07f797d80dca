// Package translate is the pure logic of llm_meta: bytes in, bytes out. It
// knows nothing of Caddy or net/http, so every rule of the contract can be
// tested with plain table tests.
package translate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// Meta is the meta object being built for one reply, merged by the rule of
// SPEC 4.1: later keys win, except tools_used (union in first-seen order) and
// prompt_trimmed_to (the smaller number wins). Keys keep the position where
// they were first seen, so the output reads like the input.
//
// A Meta is bounded (SPEC 8.1): its JSON never grows past its byte limit
// (Limit) and tools_used holds at most MaxMetaTools names; what would cross
// a bound is dropped whole (a key with its value, a tool name), the first
// drop reported. Values are stored as they go out (metaValue), so that the
// bound is on the bytes sent. Keys and tool names are looked up by map once
// there are more than a few, so that no number of them makes merging
// quadratic.
//
// The zero value is an empty Meta ready to use. A Meta that holds tool
// names must not be copied: the copies would share the memory the names
// are kept in (toolText).
type Meta struct {
	keys []string // first-seen order, tools_used and prompt_trimmed_to included
	vals [][]byte // JSON per key, compact, valid UTF-8; nil for the two special keys
	kidx map[string]int32

	tools      []string
	toolText   []byte // the tool names, comma-joined; tools are read-only views of it
	tidx       map[string]int32
	toolCtl    bool // a tool name holds a control character (ToolsPlaceholder)
	trimmed    int64
	hasTrimmed bool

	valBytes  int // JSON of the members with a value, a comma each
	toolBytes int // JSON of the tool names, a comma each
	nvals     int // members with a value

	max    int          // byte bound; 0: DefaultMaxMetaBytes
	warn   func(string) // told of the first drop
	warned bool
}

// DefaultMaxMetaBytes is max_meta_bytes' default (SPEC 1).
const DefaultMaxMetaBytes = 256 << 10

// MaxMetaTools is the most names tools_used keeps (SPEC 8.1).
const MaxMetaTools = 256

// indexAfter is the number of keys or tool names past which a Meta looks
// them up in a map: below it a scan of a few strings is cheaper.
const indexAfter = 8

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

// Limit sets the bound on m's JSON in bytes (maxBytes <= 0: the default)
// and the function told, once, when something is dropped for crossing it
// (nil: nobody). It applies to what is added from then on.
func (m *Meta) Limit(maxBytes int, warn func(reason string)) {
	m.max = maxBytes
	m.warn = warn
}

// MaxBytes is m's byte bound.
func (m *Meta) MaxBytes() int {
	if m.max <= 0 {
		return DefaultMaxMetaBytes
	}
	return m.max
}

// Empty reports whether m has nothing to say.
func (m *Meta) Empty() bool { return m.nvals == 0 && len(m.tools) == 0 && !m.hasTrimmed }

// Size is the length of m's JSON, or a little more (a comma per member).
func (m *Meta) Size() int {
	n := 2 + m.valBytes
	if len(m.tools) > 0 {
		n += len(`"tools_used":[],`) + m.toolBytes
	}
	if m.hasTrimmed {
		n += len(`"prompt_trimmed_to":,`) + int64Len(m.trimmed)
	}
	return n
}

// fits reports whether m can grow by n bytes of JSON; when it cannot, the
// drop is reported (once).
func (m *Meta) fits(n int) bool {
	if n <= 0 || m.Size()+n <= m.MaxBytes() {
		return true
	}
	m.dropped()
	return false
}

func (m *Meta) dropped() {
	if !m.warned {
		m.warned = true
		if m.warn != nil {
			m.warn(ReasonMetaTooLarge)
		}
	}
}

func (m *Meta) index(key string) int { return find(m.keys, m.kidx, key) }

// find is the position of s in list, or -1: looked up in idx once list
// has one (indexed).
func find(list []string, idx map[string]int32, s string) int {
	if idx == nil {
		return slices.Index(list, s)
	}
	if i, ok := idx[s]; ok {
		return int(i)
	}
	return -1
}

// indexed is idx once a string has been appended to list: that string
// added to it, or, when list has just grown past indexAfter, a map of the
// whole list.
func indexed(list []string, idx map[string]int32) map[string]int32 {
	switch {
	case idx != nil:
		idx[list[len(list)-1]] = int32(len(list) - 1)
	case len(list) > indexAfter:
		idx = make(map[string]int32, 2*len(list))
		for i, t := range list {
			idx[t] = int32(i)
		}
	}
	return idx
}

func (m *Meta) touch(key string) int {
	if i := m.index(key); i >= 0 {
		return i
	}
	if m.keys == nil {
		// No key yet, so no tool either: all of the first storage at once.
		m.useStore(new(metaStore))
	}
	// A key is often a view of a caller's buffer (strView), which m outlives.
	m.keys = append(m.keys, ownKey(key))
	m.vals = append(m.vals, nil)
	m.kidx = indexed(m.keys, m.kidx)
	return len(m.keys) - 1
}

// useStore gives m, when it has no storage yet, its first storage in st:
// memory its owner keeps (a Reply's), so that none is allocated. m must
// then not outlive st.
func (m *Meta) useStore(st *metaStore) {
	if m.keys == nil {
		m.keys, m.vals, m.tools, m.toolText = st.keys[:0], st.vals[:0], st.tools[:0], st.text[:0]
	}
}

// moduleKeys are the keys the module writes itself, usage first: nearly
// every reply writes it, and the look-up stops at the first match.
var moduleKeys = [...]string{KeyUsage, KeyCost, KeyToolCalls, KeyTiming, KeyHustle,
	keyTools, keyTrimmed, KeyStructuredResult, KeyStructuredMetadata}

// ownKey returns key in memory of its own: the constant for moduleKeys,
// else a copy.
func ownKey(key string) string {
	if i := slices.Index(moduleKeys[:], key); i >= 0 {
		return moduleKeys[i]
	}
	return strings.Clone(key)
}

// AddTool adds one tool name to tools_used, once, ignoring empty names. A
// name past MaxMetaTools, or one that would take m past its byte bound, is
// dropped. name is copied.
func (m *Meta) AddTool(name string) {
	if name == "" || find(m.tools, m.tidx, name) >= 0 {
		return
	}
	if len(m.tools) >= MaxMetaTools {
		m.dropped()
		return
	}
	n := jsonscan.StringLen(name) + 1 // the name and its comma
	grow := n
	if len(m.tools) == 0 {
		grow += len(`"tools_used":[],`)
	}
	if !m.fits(grow) {
		return
	}
	m.touch(keyTools)
	// The names are kept as one comma-joined text (what the tools_used
	// placeholder shows), each a view of its part: one copy for all of
	// them. Bytes below len(toolText) are never written again (append
	// moves to new memory when it grows), so the views stay as they were
	// made.
	start := len(m.toolText)
	if start > 0 {
		m.toolText = append(m.toolText, ',')
		start++
	}
	m.toolText = append(m.toolText, name...)
	t := strView(m.toolText[start:])
	m.tools = append(m.tools, t)
	m.toolBytes += n
	m.toolCtl = m.toolCtl || hasControl(name)
	m.tidx = indexed(m.tools, m.tidx)
}

// Tools returns tools_used in first-seen order. The slice is m's own.
func (m *Meta) Tools() []string { return m.tools }

// ToolsPlaceholder is tools_used comma-joined, as strings.Join would,
// without building it anew, made safe for a header or a log field (SPEC
// 8.1): control characters replaced by a space.
func (m *Meta) ToolsPlaceholder() string {
	if !m.toolCtl {
		return strView(m.toolText)
	}
	return string(appendClean(nil, strView(m.toolText)))
}

// SetTrimmed records prompt_trimmed_to; the smaller of two values wins.
func (m *Meta) SetTrimmed(n int64) {
	if m.hasTrimmed && m.trimmed <= n {
		return
	}
	if !m.hasTrimmed && !m.fits(len(`"prompt_trimmed_to":,`)+int64Len(n)) {
		return
	}
	m.touch(keyTrimmed)
	m.trimmed, m.hasTrimmed = n, true
}

// Set stores raw JSON under key (later wins). The two special keys are merged
// by their own rule instead. raw is copied. A value that would take m past
// its byte bound is dropped (an earlier value of the key stays).
func (m *Meta) Set(key string, raw []byte) {
	switch key {
	case keyTools:
		gjson.Parse(strView(raw)).ForEach(func(_, v gjson.Result) bool {
			if v.Type == gjson.String {
				m.AddTool(v.Str)
			}
			return true
		})
		return
	case keyTrimmed:
		if v := gjson.Parse(strView(raw)); v.Type == gjson.Number {
			m.SetTrimmed(int64(v.Num))
		}
		return
	}
	if !utf8.ValidString(key) {
		// Written out in valid UTF-8, the key is the same key as the one
		// spelt that way: one member, not two that read alike.
		key = strings.ToValidUTF8(key, "\uFFFD")
	}
	out := metaValue(raw)
	m.setValue(key, out, !sameMemory(out, raw))
}

// setValue stores val, compact and valid UTF-8 (metaValue), under key,
// a structured_result made text-safe: val itself when owned (m's own
// memory), else a copy, made only once it fits.
func (m *Meta) setValue(key string, val []byte, owned bool) {
	if len(val) == 0 {
		return // not a JSON value
	}
	if key == KeyStructuredResult {
		if sr, changed := appendStructuredResult(nil, val); changed {
			val, owned = sr, true
		}
	}
	member := jsonscan.StringLen(key) + 2 + len(val) // "key":val,
	i := m.index(key)
	old := m.memberLen(i)
	if !m.fits(member - old) {
		return
	}
	if i < 0 {
		i = m.touch(key)
	}
	if m.vals[i] == nil {
		m.nvals++
	}
	switch {
	case owned:
	case cap(m.vals[i]) >= len(val):
		// A key set again (one key repeated a million times): its
		// memory is used again rather than a copy made per value.
		val = append(m.vals[i][:0], val...)
	default:
		val = append([]byte(nil), val...)
	}
	m.vals[i] = val
	m.valBytes += member - old
}

// room is how many bytes the member key may take (its name, colon, value
// and comma): what is left of m's bound, its current member counted free.
func (m *Meta) room(key string) int {
	return m.MaxBytes() - m.Size() + m.memberLen(m.index(key))
}

// unset removes the value of key (not one of the two special keys); the
// key keeps its place, should it be set again.
func (m *Meta) unset(key string) {
	if i := m.index(key); i >= 0 && m.vals[i] != nil {
		m.valBytes -= m.memberLen(i)
		m.vals[i] = nil
		m.nvals--
	}
}

// memberLen is the written length of the member of key i ("key":value
// and its comma), 0 when it has no value (or i < 0).
func (m *Meta) memberLen(i int) int {
	if i < 0 || m.vals[i] == nil {
		return 0
	}
	return jsonscan.StringLen(m.keys[i]) + 2 + len(m.vals[i])
}

// metaValue is raw as it is stored: compact (compactJSON), invalid UTF-8
// as U+FFFD; raw itself when nothing changes. (A structured_result is made
// text-safe by setValue, SPEC 4.1.)
func metaValue(raw []byte) []byte {
	v := compactJSON(raw)
	if !utf8.Valid(v) {
		v = bytes.ToValidUTF8(v, []byte("\uFFFD"))
	}
	return v
}

// sameMemory reports whether a and b start at the same byte.
func sameMemory(a, b []byte) bool {
	return len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// Has reports whether key holds a value, the two special keys included.
func (m *Meta) Has(key string) bool {
	i := m.index(key)
	return i >= 0 && m.holds(i)
}

// holds reports whether key i holds a value.
func (m *Meta) holds(i int) bool {
	switch m.keys[i] {
	case keyTools:
		return len(m.tools) > 0
	case keyTrimmed:
		return m.hasTrimmed
	}
	return m.vals[i] != nil
}

// MergeJSON merges a JSON object into m. It reports false, merging nothing,
// when raw is not an object.
func (m *Meta) MergeJSON(raw []byte) bool {
	v, ok := jsonObject(strView(raw))
	if ok {
		m.mergeResult(v)
	}
	return ok
}

// mergeResult is MergeJSON for an already parsed value: a value that is
// not an object merges nothing.
func (m *Meta) mergeResult(v gjson.Result) {
	if !v.IsObject() {
		return
	}
	v.ForEach(func(k, val gjson.Result) bool {
		m.Set(k.Str, bytesView(val.Raw))
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
			m.setValue(k, o.vals[i], false) // already in its stored form; nil: none
		}
	}
}

// AppendJSON appends m as a compact JSON object.
func (m *Meta) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	for i, k := range m.keys {
		if !m.holds(i) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonscan.AppendString(dst, k)
		dst = append(dst, ':')
		switch k {
		case keyTools:
			dst = append(dst, '[')
			for j, t := range m.tools {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = jsonscan.AppendString(dst, t)
			}
			dst = append(dst, ']')
		case keyTrimmed:
			dst = strconv.AppendInt(dst, m.trimmed, 10)
		default:
			dst = append(dst, m.vals[i]...)
		}
	}
	return append(dst, '}')
}

// JSON returns m as a compact JSON object, allocated once (Size).
func (m *Meta) JSON() []byte { return m.AppendJSON(make([]byte, 0, m.Size())) }

// int64Len is the number of bytes strconv writes for n.
func int64Len(n int64) int {
	var b [20]byte
	return len(strconv.AppendInt(b[:0], n, 10))
}

// compactJSON removes insignificant white space, so that meta events stay
// one line. It is raw itself when raw has none between tokens.
func compactJSON(raw []byte) []byte {
	s := strView(raw)
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			i = jsonscan.SkipString(s, i) - 1
		} else if jsonscan.IsSpace(s[i]) {
			var b bytes.Buffer
			b.Grow(len(raw))
			if err := json.Compact(&b, raw); err != nil {
				return raw
			}
			return b.Bytes()
		}
	}
	return raw
}
