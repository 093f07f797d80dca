package translate

import (
	"bytes"
	"io"
	"strings"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// Google's Gemini API (SPEC 4.6): its requests (…/models/{model}:generateContent
// and :streamGenerateContent), its events and its JSON reply, read into a
// Reply, with the meta carried as a top-level key of the reply (JSON) or of
// the terminal event (stream). Its usage is SPEC 9.1's Gemini row.

// FormatGemini is a Gemini event stream (numbered at registration).
var FormatGemini Format

// RequestGemini is a Gemini request.
var RequestGemini = RequestKind{&geminiProtocol}

const (
	geminiGenerate = ":generateContent"
	geminiStream   = ":streamGenerateContent"
)

var geminiProtocol = protocol{
	name:   "gemini",
	format: &FormatGemini,
	// A request whose path ends in :generateContent or :streamGenerateContent.
	request: func(path string, _ Header) bool {
		return strings.HasSuffix(path, geminiGenerate) || strings.HasSuffix(path, geminiStream)
	},
	requestModel: geminiModel,
	// Without alt=sse, :streamGenerateContent streams one JSON array: it
	// passes untouched and unheld, unless the reply is held anyway
	// (run-once), which reads the array's elements as the stream's events.
	replyFormat: func(h ReplyHeaders) (Format, bool) {
		if !strings.HasSuffix(h.Path, geminiStream) || h.MediaType == "text/event-stream" {
			return 0, false
		}
		if h.Held {
			return formatGeminiArray, true
		}
		return FormatOther, true
	},
	// A stream whose first event has a top-level candidates array or
	// promptFeedback object, and no choices.
	startsEvents: func(ev *firstEvent) bool {
		obj := gjson.Parse(ev.obj)
		return (obj.Get("candidates").IsArray() || obj.Get("promptFeedback").IsObject()) && !obj.Get("choices").Exists()
	},
	stream: &streamReading{
		framing: newSSEFraming,
		reader:  func(*StreamOptions) unitReader { return geminiReader{} },
		keys:    geminiKeys[:],
		usage:   func(s string, rep *Reply) { readGeminiUsage(gjson.Get(s, "usageMetadata"), rep) },
	},
	json: &jsonProtocol{
		paths: []string{"candidates", "promptFeedback", "choices"},
		is: func(t jsonTop) bool {
			return t.kind("choices") == 0 && (t.kind("candidates") == '[' || t.kind("promptFeedback") == '{')
		},
		read: readGemini,
	},
}

// geminiModel is the model a request's path names: its last segment up to
// the colon (gemini-2.5-flash in …/models/gemini-2.5-flash:generateContent).
func geminiModel(path string) string {
	m := path[strings.LastIndexByte(path, '/')+1:]
	if i := strings.LastIndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	return m
}

// geminiKeys are the keys an event is scanned for (keyProtocol<<i, in this
// order): a tool, the end of the reply, its usage. An event that has none
// passes with nothing read. They are few, with first letters rare in
// Gemini's events, because the scan stops at every quoted string that
// starts like one of them.
var geminiKeys = [...]string{"functionCall", "executableCode", "finishReason", "blockReason", "usageMetadata"}

const (
	geminiKeyCall keySet = keyProtocol << iota
	geminiKeyCode
	geminiKeyFinish
	geminiKeyBlock
	geminiKeyUsage
)

// geminiReader reads a Gemini event stream. Every event passes as it came
// except the terminal one, which gains the meta as a top-level key. Gemini
// has no [DONE]; a stray one passes.
type geminiReader struct{}

func (geminiReader) read(u *unit) {
	s, keys, rep := u.str(), u.keys, u.rep
	if keys&(geminiKeyCall|geminiKeyCode) != 0 || rep.WantContent || rep.WaitsForText() {
		geminiParts(gjson.Get(s, "candidates"), rep, true, rep.ToolArguments && keys&geminiKeyCall != 0 && jsonscan.Valid(s))
	}
	// Only a JSON object ends the reply (gjson reads invalid JSON too).
	if keys&(geminiKeyFinish|geminiKeyBlock) != 0 && jsonscan.Valid(s) {
		u.terminal, u.errMsg = geminiTerminal(gjson.Parse(s))
	}
	if (u.terminal || rep.WantContent) && u.needModel() {
		u.model = gjson.Get(s, "modelVersion").Str
	}
	// An event with a usageMetadata may carry a token count: the count keys
	// all end in TokenCount (Vertex sends usageMetadata with only
	// trafficType on most events). A stray match only costs a copy: the
	// count is read, and checked, at the end. (The search starts at the T,
	// which JSON text seldom holds: one starting at a quote would stop at
	// every string.)
	u.usage = keys&geminiKeyUsage != 0 && bytes.Contains(u.data, []byte(`TokenCount"`))
}

// appendInterrupted is Gemini's error event for a stream cut short (SPEC
// 11.1), with the meta no terminal event carried.
func (geminiReader) appendInterrupted(dst, meta []byte) []byte {
	dst = append(dst, `data: {"error":{"code":502,"message":"`+InterruptedMessage+`","status":"UNAVAILABLE"}`...)
	return appendMetaEnd(dst, meta)
}

// geminiTerminal reports whether a reply or event ends the reply: it has at
// least one candidate and a non-null finishReason on every one, or its
// promptFeedback has a blockReason. A blocked prompt without a candidate is
// the reply's error, "Blocked: <blockReason>" (errMsg).
func geminiTerminal(obj gjson.Result) (terminal bool, errMsg string) {
	n, finished := 0, true
	obj.Get("candidates").ForEach(func(_, c gjson.Result) bool {
		n++
		if c.Get("finishReason").Type == gjson.Null {
			finished = false
		}
		return true
	})
	if n > 0 && finished {
		return true, ""
	}
	br := obj.Get("promptFeedback.blockReason")
	if br.Type == gjson.Null {
		return false, ""
	}
	if n == 0 {
		reason := br.Str
		if br.Type != gjson.String {
			reason = br.Raw
		}
		return true, "Blocked: " + reason
	}
	return true, ""
}

// geminiParts reads every candidate's parts: their tools (a functionCall
// part its name, an executableCode part code_execution); with calls, each
// named functionCall as a call (SPEC 11.3), its args value's text as it
// came its arguments; with text, the text of the candidate whose index is
// 0 (an absent index is 0), its text parts that are not thoughts
// concatenated. A functionCall without a name (Gemini 3 streams a call's
// arguments as partialArgs in such parts) adds nothing, and partialArgs are
// not assembled: a call whose arguments came only so has "".
func geminiParts(cands gjson.Result, rep *Reply, text, calls bool) {
	cands.ForEach(func(_, c gjson.Result) bool {
		i := c.Get("index")
		zero := text && (!i.Exists() || i.Type == gjson.Number && i.Num == 0)
		text = text && !zero // the first such candidate only
		c.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
			if fc := p.Get("functionCall"); fc.IsObject() {
				if name := fc.Get("name"); name.Type == gjson.String {
					rep.Meta.AddTool(name.Str)
					if calls {
						rep.calls.addArgs(rep.beginCall(name.Str, callKey{}, false), jsonscan.ObjectValue(fc.Raw, "args"))
					}
				}
			}
			if p.Get("executableCode").Type != gjson.Null {
				rep.Meta.AddTool("code_execution")
			}
			if t := p.Get("text"); zero && t.Type == gjson.String && t.Str != "" && p.Get("thought").Type != gjson.True {
				rep.SawText()
				rep.AddText(t.Str)
			}
			return true
		})
		return true
	})
}

// readGeminiUsage replaces the record's usage with a usageMetadata that
// has a token count (SPEC 9.1): input is the prompt and the tool-use
// prompt, output the candidates and the thoughts (a count not given is 0),
// reasoning the thoughts, cached the cached content, total Gemini's own.
// It reports whether u had a count.
func readGeminiUsage(u gjson.Result, rep *Reply) bool {
	if !u.IsObject() {
		return false
	}
	var c [6]usageCount // prompt, tool-use prompt, candidates, thoughts, total, cached
	some := false
	for i, key := range [...]string{"promptTokenCount", "toolUsePromptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "totalTokenCount", "cachedContentTokenCount"} {
		c[i].n, c[i].ok = count(u.Get(key))
		some = some || c[i].ok
	}
	if !some {
		return false
	}
	rep.Usage.apply([]usageCount{{c[0].n + c[1].n, true}, {c[2].n + c[3].n, true}, c[4], c[5], c[3]})
	rep.setCostFrom(u)
	return true
}

// readGemini reads a generateContent reply (a JSON reply): id, model,
// usage, its own meta, the tools of every candidate (and, with
// tool_arguments, its calls), a blocked prompt, and, with text, the text of
// candidate 0.
func readGemini(root gjson.Result, rep *Reply, text bool) {
	rep.setID(root.Get("responseId").Str)
	rep.setModel(root.Get("modelVersion").Str)
	readGeminiUsage(root.Get("usageMetadata"), rep)
	rep.Meta.mergeResult(root.Get("meta"))
	geminiParts(root.Get("candidates"), rep, text, rep.ToolArguments) // a JSON reply is valid JSON
	if _, msg := geminiTerminal(root); msg != "" {
		rep.SetError(msg)
	}
}

// formatGeminiArray is a :streamGenerateContent reply sent as one JSON
// array (no alt=sse) in a reply held whole (run-once): its elements are
// read as the events of a Gemini stream (SPEC 4.6).
var formatGeminiArray Format

var geminiArrayProtocol = protocol{
	name:    "gemini_array",
	format:  &formatGeminiArray,
	convert: func(w *Rewriter, _ ConvertOptions) io.WriteCloser { return &geminiArray{w: w} },
	into:    &FormatGemini,
}

// geminiArray writes each element of a JSON array, as soon as it is whole,
// to the Gemini rewriter as the event `data: <element>` (its line breaks,
// white space outside strings in valid JSON, made spaces). One pass over
// the bytes; it holds one element at most. A top-level object is one
// element (an error reply).
type geminiArray struct {
	w      *Rewriter
	el     []byte  // "data: " and the element so far
	nest   nesting // where in the current element
	opened bool    // the array's '[' was read
	err    error
}

func (a *geminiArray) Write(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	for _, c := range p {
		if a.nest.depth == 0 && !a.nest.inStr {
			switch {
			case c == '[' && !a.opened:
				a.opened = true
				continue
			case c == '{' || c == '[':
				a.el = append(a.el[:0], "data: "...)
			default:
				continue // white space, commas, the closing ']'
			}
		}
		if c == '\n' || c == '\r' {
			c = ' '
		}
		a.el = append(a.el, c)
		if a.nest.step(c) {
			a.el = append(a.el, "\r\n\r\n"...)
			if _, a.err = a.w.Write(a.el); a.err != nil {
				return 0, a.err
			}
		}
	}
	return len(p), nil
}

// Close ends the stream (an element cut short is dropped).
func (a *geminiArray) Close() error {
	if a.err != nil {
		return a.err
	}
	return a.w.Close()
}
