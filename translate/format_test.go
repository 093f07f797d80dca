package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

// The mode table of SPEC 4: the format from the headers, then, when they
// leave it open, from the start of the body.

func TestDetectHeaders(t *testing.T) {
	const (
		json  = "application/json"
		sse   = "text/event-stream"
		plain = "text/plain"
	)
	cases := []struct {
		h          ReplyHeaders
		on, off    Format // convert_streams on, off
		annotation string
	}{
		{ReplyHeaders{MediaType: json}, FormatJSON, FormatJSON, "json"},
		{ReplyHeaders{MediaType: "application/problem+json"}, FormatJSON, FormatJSON, "+json"},
		{ReplyHeaders{MediaType: json, Header: Header{"X-Vercel-Ai-Data-Stream": {"v1"}}}, FormatJSON, FormatJSON, "json wins over a protocol header"},
		{ReplyHeaders{MediaType: sse}, FormatSniffEvents, FormatSniffEvents, "event stream: its first event decides"},
		{ReplyHeaders{MediaType: sse, Header: Header{"X-Vercel-Ai-Ui-Message-Stream": {"v1"}}}, FormatUIStream, FormatSniffEvents, "ui header"},
		{ReplyHeaders{MediaType: sse, Header: Header{"X-Vercel-Ai-Data-Stream": {"v1"}}}, FormatDataStream, FormatSniffEvents, "data stream header on an event stream"},
		{ReplyHeaders{MediaType: plain, Header: Header{"X-Vercel-Ai-Data-Stream": {"v1"}}}, FormatDataStream, FormatOther, "data stream header"},
		{ReplyHeaders{MediaType: "", Header: Header{"X-Vercel-Ai-Data-Stream": {"v1"}}}, FormatDataStream, FormatOther, "data stream header, no type"},
		{ReplyHeaders{MediaType: plain}, FormatSniffPlain, FormatOther, "text/plain: its first line decides"},
		{ReplyHeaders{MediaType: plain, Header: Header{"X-Vercel-Ai-Ui-Message-Stream": {"v1"}}}, FormatSniffPlain, FormatOther, "ui header on text/plain"},
		{ReplyHeaders{MediaType: sse, Header: Header{"X-Vercel-Ai-Ui-Message-Stream": {"v2"}}}, FormatSniffEvents, FormatSniffEvents, "unknown ui version"},
		{ReplyHeaders{MediaType: "text/html"}, FormatOther, FormatOther, "html"},
		{ReplyHeaders{}, FormatOther, FormatOther, "no type"},
	}
	for _, c := range cases {
		for _, convert := range []bool{true, false} {
			want := c.on
			if !convert {
				want = c.off
			}
			var d Detector
			if a := d.Headers(RequestChat, c.h, convert, detectMax); a.Format != want || a.Lead != 0 {
				t.Errorf("%s, convert %v: %+v, want %v", c.annotation, convert, a, want)
			}
		}
	}
}

// An undecided event stream's headers go at once when no conversion can
// follow and the reply is not held whole; any other reply's wait.
func TestDetectHeadersEarly(t *testing.T) {
	for _, c := range []struct {
		mt            string
		convert, held bool
		early         bool
	}{
		{"text/event-stream", false, false, true},
		{"text/event-stream", true, false, false},
		{"text/event-stream", false, true, false},
		{"text/plain", true, false, false},
		{"application/json", false, false, false},
	} {
		var d Detector
		if a := d.Headers(RequestChat, ReplyHeaders{MediaType: c.mt, Held: c.held}, c.convert, detectMax); a.Early != c.early {
			t.Errorf("%+v: early %v", c, a.Early)
		}
	}
}

// detectStart is what a Detector decides from the start of a body of
// format f shown whole, the events without data at its start counted.
func detectStart(f Format, body []byte, max int, end, convert bool) (Format, bool) {
	d := Detector{f: f, convert: convert, max: max}
	a := d.look(body, end, false)
	return a.Format, a.Decided()
}

const detectMax = 256

// TestDetectStart: each body decides the format at its end; and no
// shorter start of it decides anything else (it may wait for more).
func TestDetectStart(t *testing.T) {
	responses := "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\"}}\n\n"
	anthropic := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n"
	ui := "data: {\"type\":\"start\",\"messageId\":\"m\"}\n\n"
	chat := contentEv("Hi")
	long := "data: {\"choices\":[{\"delta\":{\"content\":\"" + strings.Repeat("x", detectMax) + "\"}}]}\n\n"
	cases := []struct {
		name    string
		f       Format
		body    string
		on, off Format
	}{
		{"chat chunk", FormatSniffEvents, chat, FormatSSE, FormatSSE},
		{"ui start", FormatSniffEvents, ui, FormatUIStream, FormatSSE},
		{"ui v7 part first", FormatSniffEvents, "data: {\"type\":\"tool-input-error\",\"toolName\":\"t\"}\n\n", FormatUIStream, FormatSSE},
		{"responses", FormatSniffEvents, responses, FormatResponses, FormatResponses},
		{"anthropic", FormatSniffEvents, anthropic, FormatAnthropic, FormatAnthropic},
		{"anthropic ping first is not recognised", FormatSniffEvents, "data: {\"type\":\"ping\"}\n\n" + anthropic, FormatSSE, FormatSSE},
		{"comments before the first data event", FormatSniffEvents, ": ping\n\nretry: 1000\n\n: more\n\n" + responses, FormatResponses, FormatResponses},
		{"event without data before", FormatSniffEvents, "event: keepalive\n\n" + anthropic, FormatAnthropic, FormatAnthropic},
		{"bom", FormatSniffEvents, "\ufeff" + responses, FormatResponses, FormatResponses},
		{"crlf", FormatSniffEvents, "data: {\"type\":\"message_start\"}\r\n\r\n", FormatAnthropic, FormatAnthropic},
		{"error first: chat shape", FormatSniffEvents, "data: {\"error\":{\"message\":\"boom\"}}\n\n" + chat, FormatSSE, FormatSSE},
		{"error first: anthropic", FormatSniffEvents, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", FormatSSE, FormatSSE},
		{"error first: responses", FormatSniffEvents, "data: {\"type\":\"error\",\"sequence_number\":0,\"error\":{\"message\":\"quota\"}}\n\n" + responses, FormatSSE, FormatSSE},
		{"error first: ui", FormatSniffEvents, "data: {\"type\":\"error\",\"errorText\":\"bad\"}\n\n" + ui, FormatSSE, FormatSSE},
		{"done first", FormatSniffEvents, doneEv, FormatSSE, FormatSSE},
		{"not json", FormatSniffEvents, "data: hello\n\n", FormatSSE, FormatSSE},
		{"type not a string", FormatSniffEvents, "data: {\"type\":1}\n\n", FormatSSE, FormatSSE},
		{"unknown type", FormatSniffEvents, "data: {\"type\":\"thread.run.created\"}\n\n", FormatSSE, FormatSSE},
		{"data stream first line", FormatSniffEvents, "0:\"Hi\"\nd:{\"finishReason\":\"stop\"}\n", FormatDataStream, FormatSSE},
		{"unterminated responses event at the end", FormatSniffEvents, "data: {\"type\":\"response.created\"}", FormatResponses, FormatResponses},
		{"event longer than max", FormatSniffEvents, long, FormatSSE, FormatSSE},
		{"responses event longer than max", FormatSniffEvents, "data: {\"type\":\"response.created\",\"pad\":\"" + strings.Repeat("x", detectMax) + "\"}\n\n", FormatSSE, FormatSSE},
		{"comments past max", FormatSniffEvents, strings.Repeat(": ping\n\n", detectMax/8+1) + responses, FormatSSE, FormatSSE},
		{"empty event stream", FormatSniffEvents, "", FormatSSE, FormatSSE},

		{"plain: data stream", FormatSniffPlain, "0:\"Hi\"\n", FormatDataStream, FormatOther},
		{"plain: data stream after blank lines and bom", FormatSniffPlain, "\ufeff\r\n\n0:\"Hi\"\r\n", FormatDataStream, FormatOther},
		{"plain: start step", FormatSniffPlain, "f:{\"messageId\":\"m\"}\n0:\"x\"\n", FormatDataStream, FormatOther},
		{"plain: error part", FormatSniffPlain, "3:\"boom\"\n", FormatDataStream, FormatOther},
		{"plain: text", FormatSniffPlain, "Hello world\n", FormatOther, FormatOther},
		{"plain: code then not json", FormatSniffPlain, "0:Hello\n", FormatOther, FormatOther},
		{"plain: upper-case code", FormatSniffPlain, "A:\"x\"\n", FormatOther, FormatOther},
		{"plain: unterminated part at the end", FormatSniffPlain, "0:\"Hi\"", FormatDataStream, FormatOther},
		{"plain: empty", FormatSniffPlain, "", FormatOther, FormatOther},
		{"plain: longer than max", FormatSniffPlain, "0:\"" + strings.Repeat("x", detectMax) + "\"\n", FormatOther, FormatOther},
	}
	for _, c := range cases {
		for _, convert := range []bool{true, false} {
			want := c.on
			if !convert {
				want = c.off
			}
			if c.f == FormatSniffPlain && !convert {
				continue // the headers never leave text/plain open without convert_streams
			}
			if got, ok := detectStart(c.f, []byte(c.body), detectMax, true, convert); !ok || got != want {
				t.Errorf("%s (convert %v): %v %v, want %v", c.name, convert, got, ok, want)
				continue
			}
			for n := 0; n < len(c.body); n++ {
				if got, ok := detectStart(c.f, []byte(c.body[:n]), detectMax, false, convert); ok && got != want {
					t.Errorf("%s (convert %v): its first %d bytes decide %v, want %v", c.name, convert, n, got, want)
					break
				}
			}
		}
	}
}

// A text/plain body that cannot be a data stream is decided at once, not
// held until its first line ends; one that can be waits.
func TestDetectStartPlainEarly(t *testing.T) {
	for body, decided := range map[string]bool{"Hel": true, "{\"a\"": true, "0": false, "0:": false, "0:\"Hi": false, "\ufeff": false, "\n\n": false, "ab": true} {
		got, ok := detectStart(FormatSniffPlain, []byte(body), detectMax, false, true)
		if ok != decided || (ok && got != FormatOther) {
			t.Errorf("%q: %v %v, want decided %v", body, got, ok, decided)
		}
	}
	// An event stream waits for its first event with data.
	for _, body := range []string{"", ": ping\n\n", "data: {\"type\":\"response.created\"}", "data: {\"type\":\"response.created\"}\n"} {
		if got, ok := detectStart(FormatSniffEvents, []byte(body), detectMax, false, true); ok {
			t.Errorf("%q: decided %v before its first event with data", body, got)
		}
	}
}

// leadOf is the length of the events without data at the start of an
// undecided body b of format f that go out at once.
func leadOf(f Format, b []byte, held bool) int {
	d := Detector{f: f, held: held, max: len(b) + 1}
	return d.look(b, false, true).Lead
}

func TestLeadingEventsWithoutData(t *testing.T) {
	for body, want := range map[string]int{
		"":                                   0,
		"data: x\n\n":                        0,
		": ping\n\n":                         len(": ping\n\n"),
		": ping\n\nretry: 10\n\ndata: x\n\n": len(": ping\n\nretry: 10\n\n"),
		": a\r\n\r\n: b":                     len(": a\r\n\r\n"),
		"event: x\nid: 1\n\ndata: y\n\n":     len("event: x\nid: 1\n\n"),
		": a\n\nevent: e\ndata: y\n\n":       len(": a\n\n"),
		": unfinished":                       0,
	} {
		if got := leadOf(FormatSniffEvents, []byte(body), false); got != want {
			t.Errorf("%q: %d, want %d", body, got, want)
		}
	}
	// Many of them, as a hostile upstream may send in one write (a scan
	// per event would take seconds here; see the benchmark).
	comments := strings.Repeat(": keep-alive\r\n\r\n", 20000)
	if got := leadOf(FormatSniffEvents, []byte(comments+"data: x\n\n: after\n\n"), false); got != len(comments) {
		t.Errorf("20000 comments: %d, want %d", got, len(comments))
	}
	// Only an undecided event stream has events to pass before deciding,
	// and only when the reply is not held whole.
	if got := leadOf(FormatSniffPlain, []byte(": ping\n\n"), false); got != 0 {
		t.Errorf("text/plain: %d, want 0", got)
	}
	if got := leadOf(FormatSniffEvents, []byte(": ping\n\n"), true); got != 0 {
		t.Errorf("held: %d, want 0", got)
	}
}

// The first event with data ends the grab's work: what follows it in the
// write (a loaded upstream's first write holds hundreds of events) is
// neither split nor kept, and the first event is the same whatever follows.
func TestEventGrabHalts(t *testing.T) {
	for _, tail := range []string{"", "data: b\n\n", "data: b\n\ndata: unfinished", "data: unfinished", "\r"} {
		body := ": ping\r\n\r\ndata: a\n\n" + tail
		g := eventGrab{split: SSESplitter{Max: len(body) + 1}}
		g.split.Feed([]byte(body), &g)
		if !g.done || string(g.data) != "a" || g.lead != len(": ping\r\n\r\n") || g.end != len(": ping\r\n\r\ndata: a\n\n") {
			t.Errorf("%q: data %q (done %v), lead %d, end %d", body, g.data, g.done, g.lead, g.end)
		}
		if len(g.split.buf) > 0 {
			t.Errorf("%q: the splitter kept the bytes after the first event", body)
		}
	}
}

func TestIsResponsesAndAnthropicEvent(t *testing.T) {
	for data, want := range map[string][2]bool{
		`{"type":"response.created"}`:                  {true, false},
		` {"sequence_number":0,"type":"response.x"} `:  {true, false},
		`{"type":"response"}`:                          {false, false},
		`{"type":"message_start","message":{}}`:        {false, true},
		`{"type":"message_delta"}`:                     {false, false},
		`{"type":"message_start"`:                      {false, false},
		`["response.created"]`:                         {false, false},
		`{"type":{"response.created":1}}`:              {false, false},
		`{"object":"response","type":"message_start"}`: {false, true},
	} {
		if got := [2]bool{IsResponsesEvent([]byte(data)), IsAnthropicEvent([]byte(data))}; got != want {
			t.Errorf("%s: responses %v, anthropic %v; want %v", data, got[0], got[1], want)
		}
	}
}

// isErrorEventGJSON is the reference of readFirstEvent's isErr on the
// valid JSON object s: an error that is an object or a string, or a type
// or object of "error", each the first of its key as gjson reads it.
func isErrorEventGJSON(s string) bool {
	isStr := func(v gjson.Result, want string) bool { return v.Type == gjson.String && v.Str == want }
	e := gjson.Get(s, "error")
	return e.IsObject() || e.Type == gjson.String || isStr(gjson.Get(s, "type"), "error") || isStr(gjson.Get(s, "object"), "error")
}

// typeOfGJSON is typeOf as gjson reads it, which readFirstEvent's walk
// must agree with.
func typeOfGJSON(data []byte) (string, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || !jsonscan.Valid(string(data)) {
		return "", false
	}
	t := gjson.GetBytes(data, "type")
	return t.Str, t.Type == gjson.String
}

var firstEventSeeds = []string{
	`{"type":"response.created","response":{}}`, `{"type":"message_start"}`, `{"type":"text-delta","delta":"x"}`,
	`{"id":"c","choices":[]}`, ` {"a":1,"type" : "t"} `, `{"type":1}`, `{"type":"a","type":"b"}`,
	`{"ty\u0070e":"escaped key"}`, `{"type":"escaped \u00e9 value"}`, `{"x":{"type":"nested"}}`, `["type"]`,
	`{"error":{"message":"m"}}`, `{"error":"s"}`, `{"error":null,"type":"error"}`, `{"error":1}`,
	`{"type":"error"}`, `{"error":[],"type":"error"}`, `{"error":null,"error":"second"}`, `{"type":"x","type":"error"}`,
	`{"err\u006fr":"escaped"}`, `{"error":"unterminated"`, `"error"`, ``, `{}`,
	"\v{\"error\":\"x\"}", " {\"error\":\"x\"}\n", "\u00a0{\"type\":\"error\"}",
}

func TestFirstEventWalks(t *testing.T) {
	for _, s := range firstEventSeeds {
		checkFirstEventWalks(t, []byte(s))
	}
}

func FuzzFirstEventWalks(f *testing.F) {
	for _, s := range firstEventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFirstEventWalks)
}

func checkFirstEventWalks(t *testing.T, data []byte) {
	got, ok := typeOf(data)
	if want, wok := typeOfGJSON(data); got != want || ok != wok {
		t.Fatalf("typeOf(%q) = %q, %v; gjson reads %q, %v", data, got, ok, want, wok)
	}
	// The trimmed data a valid object, the data as it came valid JSON.
	trimmed := bytes.TrimSpace(data)
	isErr := len(trimmed) > 0 && trimmed[0] == '{' && jsonscan.Valid(string(trimmed)) && isErrorEventGJSON(string(trimmed))
	if got, want := readFirstEvent(data).isErr, isErr && jsonscan.Valid(string(data)); got != want {
		t.Fatalf("readFirstEvent(%q).isErr = %v; gjson reads %v", data, got, want)
	}
}

// FuzzDetectorPieces: a body shown to a Detector in pieces, as the handler
// shows it (the first write alone, then everything held with each next
// one), is decided as the whole body is, once the first piece that decides
// comes or at the end; the leads it passes are complete events without
// data, and passed and held bytes add up to the body.
func FuzzDetectorPieces(f *testing.F) {
	for _, s := range []string{": ping\n\ndata: {\"type\":\"response.created\"}\n\n", "0:\"Hi\"\n", "\ufeff\r\n\n0:\"x\"", "data: {\"type\":\"start\"}\r\n\r\n", "Hello\n", "retry: 1\n\n: a\r\n\r\ndata: x"} {
		f.Add([]byte(s), []byte{1, 3, 2}, false, true)
	}
	f.Fuzz(func(t *testing.T, body, cuts []byte, plain, convert bool) {
		fm := FormatSniffEvents
		if plain {
			fm = FormatSniffPlain
		}
		const max = 1 << 20
		whole := (&Detector{f: fm, convert: convert, held: true, max: max}).look(body, true, false).Format
		for _, held := range []bool{true, false} {
			d := Detector{f: fm, convert: convert, held: held, max: max}
			var kept, passed []byte
			a := Answer{Format: fm}
			for at, i := 0, 0; at < len(body) && !a.Decided(); i++ {
				n := len(body) - at
				if i < len(cuts) {
					n = min(n, 1+int(cuts[i])%16)
				}
				p := body[at : at+n]
				at += n
				show := append(kept, p...)
				if len(kept) == 0 {
					show = p
				}
				a = d.Body(show, len(p), false)
				if a.Lead > 0 && (held || !a.Early) {
					t.Fatalf("held %v: %+v", held, a)
				}
				passed = append(passed, show[:a.Lead]...)
				kept = append([]byte(nil), show[a.Lead:]...)
				if a.Decided() && held && a.Format != whole {
					t.Fatalf("%q in pieces %v: %v, whole %v", body, cuts, a.Format, whole)
				}
				if a.Decided() {
					kept = append(kept, body[at:]...)
				}
			}
			if !a.Decided() {
				a = d.Body(kept, 0, true)
				passed = append(passed, kept[:a.Lead]...)
				kept = kept[a.Lead:]
				if held && a.Format != whole {
					t.Fatalf("%q in pieces %v, at the end: %v, whole %v", body, cuts, a.Format, whole)
				}
			}
			if string(passed)+string(kept) != string(body) {
				t.Fatalf("%q: passed %q and kept %q", body, passed, kept)
			}
			if len(passed) > 0 {
				if lead := (&Detector{f: FormatSniffEvents, max: max}).look(passed, false, true).Lead; lead != len(passed) {
					t.Fatalf("%q: passed %q, which is not all events without data", body, passed)
				}
			}
		}
	})
}
