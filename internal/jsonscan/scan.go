// Package jsonscan reads JSON the way a gateway on the hot path needs to:
// one pass that validates a document and, on the way, records the members
// its caller's paths name (Paths.Scan, into an Index); walks over a
// document already known valid that find a key or pass over a value with
// no parsing (Iter, FindMember, SkipValue); the keys a stream's event holds,
// found without parsing it (Keys, KeyScanner); JSON strings written and
// read.
//
// Every function is linear in its input, keeps nesting on a stack of its
// own rather than the goroutine's (a body of a million '[' is answered, not
// a crash), and allocates nothing on documents of ordinary depth. It knows
// no protocol: the keys it looks for are its callers'.
package jsonscan

import "math/bits"

// Valid reports whether s is one JSON value with nothing but white space
// around it: exactly what gjson.Valid accepts (FuzzValidJSON holds the two
// to the same answers).
//
// It differs from gjson.Valid in how, not what: strings, most of the bytes
// of an LLM reply, are passed over eight bytes at a time; and nesting is
// kept on a stack of its own instead of recursion, so a body of a few
// million '[' costs that many bytes rather than that many stack frames.
func Valid(s string) bool { return scan(s, nil) }

// wanted is what an Index wants of a container (Index.open).
type wanted uint8

const (
	wantMembers wanted = iota // its members, not its close
	wantClose                 // its members and its close
	wantNothing               // nothing inside it, nor its close: it is only validated
)

// withClose marks, on scan's stack of open containers, one whose close is
// wanted.
const withClose = 0x80

// Scan is Valid, which records in x what p's paths name: x, zero before,
// is then read without a second pass over s.
func (p *Paths) Scan(s string, x *Index) bool {
	x.p = p
	return scan(s, x)
}

// scan is Valid, which records in x what its paths name, when x is not
// nil. The keys no path names are told apart here (candidates), without a
// call: most keys of a document.
func scan(s string, x *Index) bool {
	var stackBuf [32]byte
	open := stackBuf[:0] // '{' or '[' for each container not yet closed (| withClose)
	i := 0
	var ok, want bool
	// quiet is the depth of the container that wants nothing; 0: none;
	// -1 when nothing is recorded (Valid).
	quiet := 0
	if x == nil {
		quiet = -1
	}
value: // a value must start here
	i = Space(s, i)
	if i >= len(s) {
		return false
	}
	switch c := s[i]; c {
	case '{', '[':
		// Each closes with the byte two above it: '}' and ']'.
		want = false
		i = Space(s, i+1)
		if i < len(s) && s[i] == c+2 {
			i++
			goto after
		}
		open = append(open, c)
		if quiet == 0 {
			switch x.open(len(open), c) {
			case wantClose:
				open[len(open)-1] |= withClose
			case wantNothing:
				quiet = len(open)
			}
		}
		if c == '{' {
			goto member
		}
		goto value
	case '"':
		start := i
		if i, _, ok = ValidString(s, i+1); !ok {
			return false
		}
		if want {
			want = false
			x.str(s[start:i], start)
		}
	case 't':
		if i+4 > len(s) || s[i+1:i+4] != "rue" {
			return false
		}
		i += 4
	case 'f':
		if i+5 > len(s) || s[i+1:i+5] != "alse" {
			return false
		}
		i += 5
	case 'n':
		if i+4 > len(s) || s[i+1:i+4] != "ull" {
			return false
		}
		i += 4
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if i, ok = validNumber(s, i); !ok {
			return false
		}
	default:
		return false
	}
	want = false
after: // a value ended just before i
	i = Space(s, i)
	if len(open) == 0 {
		return i == len(s)
	}
	if i >= len(s) {
		return false
	}
	switch top := open[len(open)-1]; {
	case s[i] == ',':
		i++
		if top&^withClose == '{' {
			goto member
		}
		goto value
	case s[i] == top&^withClose+2:
		switch {
		case quiet == len(open):
			quiet = 0
		case top&withClose != 0:
			x.close(len(open))
		}
		open = open[:len(open)-1]
		i++
		goto after
	}
	return false
member: // a key, its colon, then its value
	i = Space(s, i)
	if i >= len(s) || s[i] != '"' {
		return false
	}
	{
		start := i
		var esc bool
		if i, esc, ok = ValidString(s, i+1); !ok {
			return false
		}
		key := s[start:i]
		i = Space(s, i)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		i++
		if quiet == 0 {
			if m := x.p.candidates(x.role[len(open)-1], key, 1, len(key)-2); m != 0 || esc {
				want = x.member(s, key, m, i, len(open), esc)
			} else {
				x.key = 0
			}
		}
	}
	goto value
}

// ValidString checks the string whose content starts at s[i] (just past its
// opening quote) and returns the index just past its closing quote, and
// whether the string holds an escape: no control character, only JSON's
// escapes. Bytes of 0x80 and above pass as they are, as in gjson.
func ValidString(s string, i int) (end int, esc, ok bool) {
	for {
		// Eight bytes at a time while none is a quote, a backslash or below
		// 0x20 (stringStops).
		for i+8 <= len(s) {
			if m := stringStops(load64(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			return i, esc, false
		}
		switch c := s[i]; {
		case c == '"':
			return i + 1, esc, true
		case c == '\\':
			esc = true
			if i+1 >= len(s) {
				return i, esc, false
			}
			// A switch and isHex, not Unescape and hex4: a call here would
			// cost ValidString a stack frame on every string.
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(s) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) || !isHex(s[i+5]) {
					return i, esc, false
				}
				i += 6
			default:
				return i, esc, false
			}
		case c < 0x20:
			return i, esc, false
		default:
			i++
		}
	}
}

// load64 reads s[i:i+8] as a little-endian word (the compiler makes it one
// load): the scan's word-at-a-time tests, and the comparison of the names
// an Index looks for.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads s[i:i+4] as a little-endian word, as load64.
func load32(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// stringStops flags (the high bit of each byte) the bytes of x, eight
// bytes of a JSON string's content, that end a plain run: a quote, a
// backslash, a byte below 0x20. With bit 1 of each byte flipped, the bytes
// below 0x21 are exactly those that were below 0x20 or a quote (0x22): one
// test for both. Each test flags its lowest matching byte exactly (a
// borrow can only flag bytes above it), so the lowest flag is the first
// byte to look at.
func stringStops(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	c := x ^ (lo * 0x02)
	b := x ^ (lo * '\\')
	// A byte of 0x80 or above has its high bit set in c and b alike, as in
	// x: one mask clears both tests' flags there.
	return ((c - lo*0x21) | (b - lo)) &^ x & hi
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber checks the number that starts at s[i] and returns the index
// just past it: an optional minus, 0 or digits not starting with 0, then an
// optional fraction and exponent, each with at least one digit.
func validNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i >= len(s) || s[i] < '0' || s[i] > '9':
		return i, false
	case s[i] == '0':
		i++
	default:
		i = skipDigits(s, i)
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = skipDigits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, false
		}
		i = skipDigits(s, i)
	}
	return i, true
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
