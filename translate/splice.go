package translate

import "github.com/llm-meta/llm_meta/internal/jsonscan"

// ReasonNoTerminalEvent is the fallback of a stream whose meta goes into
// its terminal unit that ended without one: it gets no meta (SPEC 4.4 to
// 4.7).
const ReasonNoTerminalEvent = "no_terminal_event"

// spliced is b, whose bytes from cut on are the JSON object data, in the
// pieces it goes out in with "meta": meta set in the object at path of data
// ("" data itself); b as it came when data has no such object (see
// splicePoint).
func spliced(b []byte, cut int, data []byte, path string, meta []byte) [4][]byte {
	at, skip, prefix, ok := splicePoint(data, path)
	if !ok {
		return [4][]byte{b}
	}
	at += cut
	return [4][]byte{b[:at], prefix, meta, b[at+skip:]}
}

var (
	metaMember      = []byte(`"meta":`)
	metaAfterMember = []byte(`,"meta":`)
)

// splicePoint says where "meta" goes in the JSON object data, in the object
// at path ("" data itself): the meta's value goes at data[at], after
// prefix, in place of the skip bytes there (an existing meta's value is
// replaced; else the member is added at the object's end). ok is false when
// data is not valid JSON or has no object there: not ours to mend.
func splicePoint(data []byte, path string) (at, skip int, prefix []byte, ok bool) {
	s := strView(data)
	obj := jsonscan.Space(s, 0)
	if !jsonscan.Valid(s) || s[obj] != '{' {
		return 0, 0, nil, false
	}
	if path != "" {
		v, _, found := jsonscan.FindMember(s, obj, path)
		if !found || s[v] != '{' {
			return 0, 0, nil, false
		}
		obj = v
	}
	if v, end, found := jsonscan.FindMember(s, obj, "meta"); found {
		return v, end - v, nil, true
	}
	end := jsonscan.SkipValue(s, obj) - 1 // its closing '}'
	if jsonscan.Space(s, obj+1) < end {
		return end, 0, metaAfterMember, true
	}
	return end, 0, metaMember, true
}
