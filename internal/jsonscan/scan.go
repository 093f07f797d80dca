// Package jsonscan reads JSON the way a gateway on the hot path needs to:
// one pass that validates a document and, on the way, tells its caller of
// the members and containers it asked about (Scanner); walks over a
// document already known valid that find a key or pass over a value with
// no parsing (Iter, Path, SkipValue); the keys an event holds, without
// parsing it (Keys); JSON strings written and read.
//
// Every function is linear in its input, keeps nesting on a stack of its
// own rather than the goroutine's (a body of a million '[' is answered, not
// a crash), and allocates nothing on documents of ordinary depth. It knows
// no protocol: the keys it looks for are its callers'.
package jsonscan

import "math/bits"

// Valid reports whether s is one JSON value with nothing but white space
// around it: exactly what gjson.Valid accepts (FuzzValid holds the two to
// the same answers).
//
// It differs from gjson.Valid in how, not what: strings, most of the bytes
// of an LLM reply, are passed over eight bytes at a time; and nesting is
// kept on a stack of its own instead of recursion, so a body of a few
// million '[' costs that many bytes rather than that many stack frames.
func Valid(s string) bool {
	sc := NewScanner(s, 0)
	for sc.Next() != End {
	}
	return sc.OK()
}

// Event is what Scanner.Next stopped at.
type Event uint8

const (
	// End: the scan is over; OK says whether the document was valid.
	End Event = iota
	// Member: a member's key (Raw, quotes included; Escaped when it holds
	// an escape) and its colon were read; its value starts at At or after
	// white space; Depth is the depth of its object (1: the root).
	Member
	// Open: a container that is not empty opened (Bracket '{' or '['), at
	// Depth (1: the root). An empty one is read as a value, like a string.
	Open
	// Close: the container at Depth closed.
	Close
	// String: the value of the member just reported is a string (Raw,
	// quotes included, starting at At): only when the caller set
	// WantString after that Member.
	String
)

// Events selects the events Next stops at.
type Events uint8

const (
	Members    Events = 1 << iota // Member (and String, when wanted)
	Containers                    // Open and Close
)

// Scanner validates a document in one pass, stopping at the events its
// caller asked for, as a pull parser: the caller reads each event's fields
// and calls Next again. It holds no pointer to anything of the caller's,
// so it lives on the caller's stack.
type Scanner struct {
	s      string
	i      int
	state  uint8
	events Events
	ok     bool

	// WantString, set by the caller after a Member event, asks for a
	// String event if that member's value is a string.
	WantString bool
	wantNext   bool // the value about to be read is the member's

	depth int
	stack [32]byte // '{' or '[' for each container not yet closed
	deep  []byte   // those past the stack's room

	// The event's fields (see Event).
	Raw     string
	At      int
	Depth   int
	Escaped bool
	Bracket byte
}

// Where Next resumes.
const (
	atValue = iota
	atAfter
	atMember
	atEnd
)

// NewScanner is a Scanner of s that stops at events.
func NewScanner(s string, events Events) Scanner {
	return Scanner{s: s, events: events}
}

// OK reports, once Next returned End, whether the document was valid.
func (sc *Scanner) OK() bool { return sc.ok }

func (sc *Scanner) push(c byte) {
	if sc.depth < len(sc.stack) {
		sc.stack[sc.depth] = c
	} else {
		sc.deep = append(sc.deep[:sc.depth-len(sc.stack)], c)
	}
	sc.depth++
}

func (sc *Scanner) top() byte {
	if sc.depth <= len(sc.stack) {
		return sc.stack[sc.depth-1]
	}
	return sc.deep[sc.depth-1-len(sc.stack)]
}

// stop records where to resume and returns ev.
func (sc *Scanner) stop(i int, state uint8, ev Event) Event {
	sc.i, sc.state = i, state
	return ev
}

// end ends the scan.
func (sc *Scanner) end(ok bool) Event {
	sc.ok, sc.state = ok, atEnd
	return End
}

// Next reads on to the next event asked for, or to the end.
func (sc *Scanner) Next() Event {
	s, i := sc.s, sc.i
	var ok, want bool
	switch sc.state {
	case atAfter:
		goto after
	case atMember:
		goto member
	case atEnd:
		return End
	}
value: // a value must start here
	want, sc.wantNext = sc.wantNext, false
	i = Space(s, i)
	if i >= len(s) {
		return sc.end(false)
	}
	switch c := s[i]; c {
	case '{', '[':
		// Each closes with the byte two above it: '}' and ']'.
		i = Space(s, i+1)
		if i < len(s) && s[i] == c+2 {
			i++
			goto after
		}
		sc.push(c)
		state := uint8(atValue)
		if c == '{' {
			state = atMember
		}
		if sc.events&Containers != 0 {
			sc.Depth, sc.Bracket = sc.depth, c
			return sc.stop(i, state, Open)
		}
		if c == '{' {
			goto member
		}
		goto value
	case '"':
		start := i
		if i, _, ok = ValidString(s, i+1); !ok {
			return sc.end(false)
		}
		if want && sc.WantString {
			sc.Raw, sc.At = s[start:i], start
			return sc.stop(i, atAfter, String)
		}
	case 't':
		if i+4 > len(s) || s[i+1:i+4] != "rue" {
			return sc.end(false)
		}
		i += 4
	case 'f':
		if i+5 > len(s) || s[i+1:i+5] != "alse" {
			return sc.end(false)
		}
		i += 5
	case 'n':
		if i+4 > len(s) || s[i+1:i+4] != "ull" {
			return sc.end(false)
		}
		i += 4
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if i, ok = validNumber(s, i); !ok {
			return sc.end(false)
		}
	default:
		return sc.end(false)
	}
after: // a value ended just before i
	i = Space(s, i)
	if sc.depth == 0 {
		return sc.end(i == len(s))
	}
	if i >= len(s) {
		return sc.end(false)
	}
	switch top := sc.top(); {
	case s[i] == ',':
		i++
		if top == '{' {
			goto member
		}
		goto value
	case s[i] == top+2:
		i++
		sc.depth--
		if sc.events&Containers != 0 {
			sc.Depth = sc.depth + 1
			return sc.stop(i, atAfter, Close)
		}
		goto after
	}
	return sc.end(false)
member: // a key, its colon, then its value
	i = Space(s, i)
	if i >= len(s) || s[i] != '"' {
		return sc.end(false)
	}
	{
		start := i
		var esc bool
		if i, esc, ok = ValidString(s, i+1); !ok {
			return sc.end(false)
		}
		key := s[start:i]
		i = Space(s, i)
		if i >= len(s) || s[i] != ':' {
			return sc.end(false)
		}
		i++
		if sc.events&Members != 0 {
			sc.Raw, sc.At, sc.Depth, sc.Escaped = key, i, sc.depth, esc
			sc.WantString, sc.wantNext = false, true
			return sc.stop(i, atValue, Member)
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
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(s, i+2); !ok {
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
// load).
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
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
