package translate

// Reading a request before it goes upstream: every request is looked at,
// and most need nothing, or, for a chat stream, only to ask for its usage.
// Its top level is read once, by a walk (readRequestTop), whatever is then
// done to it, and a stream's usage is asked for by appending a member, so
// that neither a parse nor gjson stays on the way of a request to its
// first event (BENCHMARKS.md, ninth round); a request that needs nothing
// is told by a scan of its quotes alone. FuzzRequestUnchanged holds the
// answers to gjson's reading of the top level (rewriteRequestRef, in the
// tests), FuzzAppendMember the appended member to sjson's.

import (
	"bytes"
	"slices"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
)

// RequestUnchanged reports that RewriteRequest would forward body
// byte-identical and find no flag in it: prompt trimming is off and none of
// the flags appears as a quoted key anywhere in it (nor could one be spelt
// with \u escapes), and a chat stream that the module would ask for its
// usage already asks for it. The caller then forwards body as it is and
// reads its model with RequestModel only if it ever needs it, which spares
// most requests the validation of their whole body before anything goes
// upstream; a chat stream with stream_options.include_usage (as the AI
// SDK's OpenAI provider sends them) is validated and its top level walked,
// not parsed.
func RequestUnchanged(body []byte, opts RequestOptions) bool {
	if opts.MaxPromptChars > 0 || bytes.Contains(body, unicodeEscape) {
		return false
	}
	flag, stream := requestKeys(body, opts.StreamUsage && opts.Kind.Chat())
	return !flag && (!stream || asksStreamUsage(strView(body)))
}

// requestKeys looks in body, in one pass over its quotes (as jsonscan.Keys:
// most strings start with a letter no flag or "stream" starts with), for
// the flags' keys and, when askUsage, for a "stream" key followed by true
// (a request that says "stream": false, or nothing, need not be looked at
// for stream_usage). It stops at the first flag.
func requestKeys(body []byte, askUsage bool) (flag, stream bool) {
	s := strView(body)
	for k := jsonscan.NextQuoted(body, 0, &requestKeyFirst); k >= 0; k = jsonscan.NextQuoted(body, k, &requestKeyFirst) {
		switch rest := s[k:]; rest[0] {
		case 'r':
			if strings.HasPrefix(rest, `run_once"`) || strings.HasPrefix(rest, `return_final_only"`) {
				return true, stream
			}
		case 'e':
			if strings.HasPrefix(rest, `enable_structured_output"`) {
				return true, stream
			}
		case 's':
			if askUsage && strings.HasPrefix(rest, `stream"`) {
				j := jsonscan.Space(rest, len(`stream"`))
				if j < len(rest) && rest[j] == ':' && strings.HasPrefix(rest[jsonscan.Space(rest, j+1):], "true") {
					stream = true
				}
			}
		}
	}
	return false, stream
}

// requestKeyFirst marks the first letters of the flags and of "stream".
var requestKeyFirst = [256]uint8{'r': 1, 'e': 1, 's': 1}

// asksStreamUsage reports whether the request s is a JSON object that asks
// for its stream's usage itself, as RewriteRequest reads it: its last
// top-level stream_options is an object whose include_usage (the last,
// when repeated) is true. s has no \u escapes (raw keys compare exactly).
func asksStreamUsage(s string) bool {
	// Most streams that do not ask say nothing of stream_options: they go
	// to RewriteRequest without a pass over the body here.
	if !strings.Contains(s, `"stream_options"`) {
		return false
	}
	top, ok := readRequestTop(s)
	if !ok {
		return false
	}
	asked, _ := includeUsage(s, top.streamOptions)
	return asked
}

// appendMember returns s, a valid JSON object that has members, with member
// (`"key":value`) added at its end, as sjson adds a member an object lacks:
// the object from its '{' to its last '}', the white space around it
// dropped, then a comma and the member.
func appendMember(s string, member string) []byte {
	root, end := jsonscan.Space(s, 0), len(s)-1
	for s[end] != '}' {
		end--
	}
	out := make([]byte, 0, end-root+len(member)+2)
	out = append(out, s[root:end]...)
	out = append(out, ',')
	out = append(out, member...)
	return append(out, '}')
}

// RequestModel is the model RewriteRequest would find in body: its
// top-level string "model" (the last copy when repeated), or "" when there
// is none or body is not a JSON object. Every stream whose request went
// upstream unchanged asks for it once (the model of a chunk made up before
// any came).
func RequestModel(body []byte) string {
	top, ok := readRequestTop(strView(body))
	if !ok {
		return ""
	}
	return strings.Clone(top.model) // the body is the caller's buffer
}

// requestTop is the top level of a request as RewriteRequest reads it: a
// repeated key counts by its last copy, as JavaScript's JSON.parse reads
// it (and gjson's ForEach, FuzzRequestUnchanged's reference).
type requestTop struct {
	model               string                  // the last "model" that is a string (a view of the body)
	stream              bool                    // the last "stream" is true
	streamOptions       int                     // where the last "stream_options" value starts; -1: none
	streamOptionsCopies int                     // how many stream_options members there are
	flags               bool                    // a flag is there (requestFlags)
	flagTrue            [len(requestFlags)]bool // each flag's last copy is true
	responseFormat      bool                    // a response_format is there
}

// readRequestTop reads the top level of the request s in the one pass
// that validates it (jsonscan.Scan), where what is nested is only
// validated; ok is false when s is not a JSON object. A reply's record
// reads its request's model with it when the reply has ended
// (Reply.requestModel): validating and then walking the top level, and
// copying the model, was about a fifth of a 2 KB JSON reply's rewrite.
func readRequestTop(s string) (t requestTop, ok bool) {
	r := topReader{s: s, top: requestTop{streamOptions: -1}}
	if !jsonscan.Scan(s, &jsonscan.Hooks{Member: r.member, Open: r.open, String: r.str}) {
		return t, false
	}
	return r.top, s[jsonscan.Space(s, 0)] == '{'
}

// topReader is readRequestTop's pass.
type topReader struct {
	s   string
	top requestTop
}

func (r *topReader) open(depth int, _ byte) jsonscan.Want {
	if depth == 1 {
		return jsonscan.Members
	}
	return jsonscan.Nothing
}

func (r *topReader) member(key string, v, depth int, esc bool) (wantString bool) {
	if depth != 1 {
		return false
	}
	k := key[1 : len(key)-1]
	if esc {
		// Spelt with escapes: compared as its text. An escape spells at
		// least one byte in six, and no key read here is longer than 32
		// bytes: a longer key names none.
		var buf [6 * 32]byte
		if len(k) > len(buf) {
			return false
		}
		k = strView(jsonscan.AppendUnescaped(buf[:0], k))
	}
	v = jsonscan.Space(r.s, v)
	switch k {
	case "model":
		return true
	case "stream":
		r.top.stream = strings.HasPrefix(r.s[v:], "true")
	case "stream_options":
		r.top.streamOptions = v
		r.top.streamOptionsCopies++
	case "response_format":
		r.top.responseFormat = true
	default:
		if i := slices.Index(requestFlags[:], k); i >= 0 {
			r.top.flags = true
			r.top.flagTrue[i] = strings.HasPrefix(r.s[v:], "true")
		}
	}
	return false
}

func (r *topReader) str(raw string, _ int) { r.top.model = jsonStr(raw) }
