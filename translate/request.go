package translate

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Reading a request before it goes upstream: every request is looked at,
// and most need nothing, or, for a chat stream, only to ask for its usage.
// Its top level is read once, in the pass that validates it
// (readRequestTop), whatever is then done to it, and a stream's usage is
// asked for by appending a member, so that neither a parse nor gjson stays
// on the way of a request to its first event (bench/HISTORY.md, "gjson off
// the way to the first event"); a request that needs nothing is told by a
// scan of its quotes alone. FuzzRequestUnchanged holds the answers to gjson's reading of the
// top level (rewriteRequestRef, in the tests), FuzzAppendMember the
// appended member to sjson's.

// Flags a client may set on a chat request; they are never sent upstream
// (SPEC 3).
var requestFlags = [...]string{"run_once", "return_final_only", "enable_structured_output"}

// RequestOptions configure RewriteRequest.
type RequestOptions struct {
	// StructuredModels are path.Match globs of models allowed structured mode.
	StructuredModels []string
	// Instruction replaces the built-in structured instruction when not "".
	Instruction string
	// MaxPromptChars turns prompt trimming on when > 0 (SPEC 3.1).
	MaxPromptChars int
	// Kind is the request's protocol (SPEC 4.5, end): structured mode,
	// trimming and stream usage apply to chat completions only.
	Kind RequestKind
	// StreamUsage asks a chat stream for its usage (stream_usage, SPEC 9.1).
	StreamUsage bool
}

// RequestResult is what RewriteRequest made of a chat request.
type RequestResult struct {
	// Body is the body to send upstream; the input itself when unchanged.
	Body []byte
	// Changed reports whether Body differs from the input.
	Changed bool
	// RunOnce: the client asked for a run-once reply (SPEC 6.1).
	RunOnce bool
	// Structured: structured mode is on for this request (SPEC 7).
	Structured bool
	// Model is the request's model ("" when none).
	Model string
	// Meta holds what the reply's meta must gain (prompt_trimmed_to).
	Meta Meta
	// WithholdUsage: the module asked a chat stream for its usage, which
	// the client did not ask for; the usage chunk is not the client's.
	WithholdUsage bool
}

// RewriteRequest applies SPEC 3 to a chat request body. ok is false when the
// body is not a JSON object; it is then to be forwarded untouched.
// Its top level is read once (readRequestTop), then each change made.
func RewriteRequest(body []byte, opts RequestOptions) (res RequestResult, ok bool) {
	top, isObj := readRequestTop(strView(body))
	if !isObj {
		return RequestResult{Body: body}, false
	}
	return rewriteRequestTop(body, &top, opts), true
}

// rewriteRequestTop is RewriteRequest of a JSON object whose top level
// reads top.
func rewriteRequestTop(body []byte, top *requestTop, opts RequestOptions) (res RequestResult) {
	s := strView(body)
	res.Body = body
	res.Model = strings.Clone(top.model) // s is the caller's buffer
	res.RunOnce = top.flagTrue[0] || top.flagTrue[1]
	if top.flags {
		// Every copy of every flag, in one pass (deleting them one at a
		// time would copy the body once per copy).
		if next, removed := removeMembers(s, isRequestFlag); removed {
			res.Body, res.Changed = next, true
		}
	}
	if !opts.Kind.Chat() {
		return res // the flags removed, nothing else changes
	}
	if opts.StreamUsage && top.stream {
		if asked, usageCopies := includeUsage(s, top.streamOptions); !asked {
			so, repeated := "", usageCopies > 1
			if top.streamOptions >= 0 {
				so = s[top.streamOptions:jsonscan.SkipValue(s, top.streamOptions)]
				// Repeated when gjson (sjson) finds another copy first.
				repeated = repeated || gjson.Get(s, "stream_options").Index != top.streamOptions
			}
			if next, err := askStreamUsage(res.Body, so, repeated); err == nil {
				res.Body, res.Changed, res.WithholdUsage = next, true, true
			}
		}
	}
	if top.flagTrue[2] && !top.responseFormat && modelMatches(opts.StructuredModels, res.Model) {
		if next, err := ApplyStructuredRequest(res.Body, opts.Instruction); err == nil {
			res.Body, res.Changed, res.Structured = next, true, true
		}
	}
	if opts.MaxPromptChars > 0 {
		if next, size, trimmed := TrimPrompt(res.Body, opts.MaxPromptChars); trimmed {
			res.Body, res.Changed = next, true
			res.Meta.SetTrimmed(size)
		}
	}
	return res
}

// includeUsage reads the stream_options value at s[so] (so < 0: none):
// whether it asks for the usage chunk (its include_usage is true, the last
// copy when the key is repeated, as JSON.parse and most upstreams read
// it), and how many include_usage members it has.
func includeUsage(s string, so int) (asked bool, copies int) {
	if so < 0 || s[so] != '{' {
		return false, 0
	}
	it := jsonscan.IterAt(s, so)
	for k, v, more := it.Next(); more; k, v, more = it.Next() {
		if jsonscan.KeyIs(k, "include_usage") {
			asked, copies = strings.HasPrefix(s[v:], "true"), copies+1
		}
	}
	return asked, copies
}

// askStreamUsage sets stream_options.include_usage to true, keeping the
// other stream_options keys (SPEC 9.1). so is the body's last top-level
// stream_options ("": none); repeated, that the body repeats it or
// include_usage in it.
func askStreamUsage(body []byte, so string, repeated bool) ([]byte, error) {
	if so == "" {
		// The usual stream (it has a "stream" member): stream_options
		// added at its end, with no parse.
		return appendMember(strView(body), `"stream_options":{"include_usage":true}`), nil
	}
	opts := []byte(`{"include_usage":true}`)
	if strings.HasPrefix(so, "{") {
		kept := []byte(so) // sjson sets a single include_usage where it is
		if repeated {
			if k, removed := removeMembers(so, func(k string) bool { return k == "include_usage" }); removed {
				kept = k
			}
		}
		var err error
		if opts, err = sjson.SetBytes(kept, "include_usage", true); err != nil {
			return nil, fmt.Errorf("asking for the stream's usage: %w", err)
		}
	}
	if !repeated {
		return sjson.SetRawBytes(body, "stream_options", opts)
	}
	// sjson would set the first copy, which an upstream reading the last
	// never sees, and the module would then wait for a usage chunk that
	// never comes. Every copy goes, and one stream_options is added: the
	// last copy's keys, with one include_usage, true, so that an upstream
	// reading either copy asks for the usage.
	return sjson.SetRawBytes(RemoveKeys(body, []string{"stream_options"}), "stream_options", opts)
}

func isRequestFlag(k string) bool { return slices.Contains(requestFlags[:], k) }

// removeMembers returns the JSON object s (valid) without the top-level
// members whose key drop names, every other byte kept, in one pass over s
// whatever the number of members removed. A member goes with the comma
// before it (or, when it comes first, the one after it). removed is false,
// and out nil, when there was none.
func removeMembers(s string, drop func(key string) bool) (out []byte, removed bool) {
	i := jsonscan.Space(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	last := 0  // s[:last] is settled: in out, or cut
	kept := -1 // end of the last member kept, -1 before any
	it := jsonscan.IterAt(s, i)
	for k, v, ok := it.Next(); ok; k, v, ok = it.Next() {
		ks, ve := it.KeyAt(), jsonscan.SkipValue(s, v)
		it.SkipTo(ve)
		if strings.IndexByte(k, '\\') >= 0 {
			k = decodeJSONString(s[ks : ks+len(k)+2])
		}
		if !drop(k) {
			kept = ve
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(s))
		}
		removed = true
		if kept >= 0 {
			// Cut from the end of the last member kept: the comma goes.
			if last < kept {
				out = append(out, s[last:kept]...)
			}
			last = ve
			continue
		}
		// The first member so far: cut up to the next one's key.
		out = append(out, s[last:ks]...)
		j := jsonscan.Space(s, ve)
		if j < len(s) && s[j] == ',' {
			ve = jsonscan.Space(s, j+1)
		}
		last = ve
		it.SkipTo(ve)
	}
	if !removed {
		return nil, false
	}
	return append(out, s[last:]...), true
}

// RemoveKeys returns body (a valid JSON object) without the top-level
// members named by keys, every copy of each, in one pass; body itself when
// there is none.
func RemoveKeys(body []byte, keys []string) []byte {
	if out, removed := removeMembers(strView(body), func(k string) bool { return slices.Contains(keys, k) }); removed {
		return out
	}
	return body
}

// KeepLastCopies returns body (a valid JSON object) where each of keys that
// is given more than once at the top level keeps only its last copy, as
// JavaScript's JSON.parse reads it; body itself when none is repeated. One
// pass to count, one to remove, whatever the number of copies.
func KeepLastCopies(body []byte, keys []string) []byte {
	s := strView(body)
	count := make(map[string]int, len(keys))
	repeated := false
	removeMembers(s, func(k string) bool {
		if slices.Contains(keys, k) {
			count[k]++
			repeated = repeated || count[k] > 1
		}
		return false // counted, not removed
	})
	if !repeated {
		return body
	}
	out, _ := removeMembers(s, func(k string) bool {
		if count[k] <= 1 {
			return false
		}
		count[k]-- // drop every copy but the last
		return true
	})
	return out
}

// modelMatches reports whether model matches one of the globs.
func modelMatches(globs []string, model string) bool {
	return slices.ContainsFunc(globs, func(g string) bool { return MatchModel(g, model) })
}

// MatchModel reports whether a model glob (SPEC 1) matches the whole model
// name: path.Match's syntax, except that * and ? match / too, so that * and
// openai/* match routed names such as openai/gpt-4o.
func MatchModel(glob, model string) bool {
	// path.Match stops * at a /: make / an ordinary character on both sides
	// (ReplaceAll returns a string without / as it is).
	ok, _ := path.Match(strings.ReplaceAll(glob, "/", slashStandIn), strings.ReplaceAll(model, "/", slashStandIn))
	return ok
}

// slashStandIn takes the place of / in a model glob match: a control
// character no model name holds.
const slashStandIn = "\x1f"

// ValidGlob reports whether g is a well-formed model glob.
func ValidGlob(g string) bool {
	_, err := path.Match(g, "")
	return err == nil
}

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
	model          string                  // the last "model" that is a string (a view of the body)
	stream         bool                    // the last "stream" is true
	streamOptions  int                     // where the last "stream_options" value starts; -1: none
	flags          bool                    // a flag is there (requestFlags)
	flagTrue       [len(requestFlags)]bool // each flag's last copy is true
	responseFormat bool                    // a response_format is there
}

// requestPaths are the top-level members of a request that requestTop
// holds, each recorded at its last copy: the flags first, in the top
// slots of their order in requestFlags, then those of the constants below.
var requestPaths = func() *jsonscan.Paths {
	p := &jsonscan.Paths{LastCopy: true}
	for _, k := range append(requestFlags[:], "model", "stream", "stream_options", "response_format") {
		p.Add(k, nil)
	}
	return p
}()

const (
	reqModel = len(requestFlags) + iota
	reqStream
	reqStreamOptions
	reqResponseFormat
)

// readRequestTop reads the top level of the request s in the one pass
// that validates it (requestPaths.Scan), where what is nested is only
// validated; ok is false when s is not a JSON object. A reply's record
// reads its request's model with it when the reply has ended
// (Reply.requestModel): in one pass and without a copy, since a second
// walk and a copy would weigh on every small JSON reply's rewrite.
func readRequestTop(s string) (t requestTop, ok bool) {
	var x jsonscan.Index
	if !requestPaths.Scan(s, &x) || s[jsonscan.Space(s, 0)] != '{' {
		return t, false
	}
	for i := range requestFlags {
		t.flags = t.flags || x.Top[i] != 0
		t.flagTrue[i] = isTrue(s, x.Top[i])
	}
	t.stream = isTrue(s, x.Top[reqStream])
	t.streamOptions = -1
	if v := x.Top[reqStreamOptions]; v != 0 {
		t.streamOptions = jsonscan.Space(s, v)
	}
	t.responseFormat = x.Top[reqResponseFormat] != 0
	if v := x.Top[reqModel]; v != 0 {
		var isStr bool
		if t.model, isStr = strAt(s, v); !isStr {
			// The last copy is no string; an earlier one may be.
			it := jsonscan.IterAt(s, jsonscan.Space(s, 0))
			for k, v, more := it.Next(); more; k, v, more = it.Next() {
				if jsonscan.KeyIs(k, "model") {
					if m, isStr := strAt(s, v); isStr {
						t.model = m
					}
				}
			}
		}
	}
	return t, true
}

// isTrue reports whether the value at s[v] (after white space) is true; v
// 0: none.
func isTrue(s string, v int) bool {
	return v != 0 && strings.HasPrefix(s[jsonscan.Space(s, v):], "true")
}
