package translate

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/casefile"
	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
)

func TestIsDataStreamLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`0:"Hello"`, true},
		{`0:"Hello"` + "\r", true},
		{"\xEF\xBB\xBF" + `0:"Hello"`, true},
		{`2:[{"type":"reasoning"}]`, true},
		{`9:{"toolCallId":"c","toolName":"t","args":{}}`, true},
		{`d:{"finishReason":"stop"}`, true},
		{`z:1`, true},       // unknown code, valid JSON: still a data stream part
		{`0:{"a":1}`, true}, // wrong type for the code: detection only asks for JSON
		{`0: "spaced"`, true},
		{`0:`, false},
		{`0:"unterminated`, false},
		{`0:nope`, false},
		{`A:"upper"`, false},
		{` 0:"lead"`, false},
		{`00:"two"`, false},
		{`data: {"type":"start"}`, false},
		{`{"choices":[]}`, false},
		{`Hello: world`, false},
		{``, false},
		{`:`, false},
	} {
		if got := IsDataStreamLine([]byte(tc.line)); got != tc.want {
			t.Errorf("IsDataStreamLine(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestIsUIStreamEvent(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{`{"type":"start","messageId":"m"}`, true},
		{`{"type":"start"}`, true},
		{`{"type":"start-step"}`, true},
		{`{"type":"text-start","id":"1"}`, true},
		{`{"type":"text-delta","id":"1","delta":"x"}`, true},
		{`{"type":"text-end","id":"1"}`, true},
		{`{"type":"reasoning-start","id":"r"}`, true},
		{`{"type":"reasoning-delta","id":"r","delta":"x"}`, true},
		{`{"type":"tool-input-start","toolCallId":"c","toolName":"t"}`, true},
		{`{"type":"tool-output-available","toolCallId":"c","output":1}`, true},
		{`{"type":"tool-call","toolCallId":"c","toolName":"t"}`, true},
		{`{"type":"data-custom","data":[1]}`, true},
		{`{"type":"source-url","sourceId":"s","url":"u"}`, true},
		{`{"type":"file","url":"u","mediaType":"m"}`, true},
		{`{"type":"error","errorText":"e"}`, true},
		{`{"type":"finish"}`, true},
		{`{"type":"finish-step"}`, true},
		{`{"type":"abort"}`, true},
		{`{"type":"message-metadata","messageMetadata":{}}`, true},
		{` {"type":"finish"} `, true},
		{`{"type":"data-"}`, false},
		{`{"type":"tool-"}`, false},
		{`{"type":"message_start"}`, false},
		{`{"type":"response.created"}`, false},
		{`{"type":"content_block_delta"}`, false},
		{`{"type":1}`, false},
		{`{"id":"chatcmpl-1","choices":[]}`, false},
		{`["type","start"]`, false},
		{`{"type":"start"`, false},
		{`[DONE]`, false},
		{``, false},
	} {
		if got := IsUIStreamEvent([]byte(tc.data)); got != tc.want {
			t.Errorf("IsUIStreamEvent(%q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

// The conformance cases of the two conversions are run here through the
// converters and a stand-in for the SSE rewriter that reads their output
// (SPEC 4.3: the meta-only event is withheld and becomes the final meta
// chunk before [DONE]). The real run, through Caddy, is the lead's
// TestConformance; this one keeps the cases and the converters honest on
// their own, whole and in pieces of 1 to 7 bytes.

type txtarCase struct {
	comment string
	files   map[string]string
}

func parseTxtar(data string) txtarCase {
	c := txtarCase{files: map[string]string{}}
	name := ""
	var cur strings.Builder
	flush := func() {
		if name == "" {
			c.comment = cur.String()
		} else {
			c.files[name] = cur.String()
		}
		cur.Reset()
	}
	for len(data) > 0 {
		line := data
		if i := strings.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = ""
		}
		trimmed := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			name = strings.TrimSpace(trimmed[3 : len(trimmed)-3])
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return c
}

// conversionCaseDirs are the folders whose datastream-* and uistream-* cases
// this test runs: the project's own, and the shared ones when present.
func conversionCaseDirs() []string {
	dirs := []string{filepath.Join("..", "testdata", "conformance")}
	// Relative folders in LLM_META_CONFORMANCE are relative to the module
	// root, one level above this package.
	for _, d := range strings.Split(os.Getenv("LLM_META_CONFORMANCE"), ":") {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join("..", d)
		}
		dirs = append(dirs, d)
	}
	return dirs
}

func TestConversionConformanceCases(t *testing.T) {
	pending, err := casefile.LoadPending(filepath.Join("..", "testdata", "conformance", "PENDING"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, dir := range conversionCaseDirs() {
		for _, pat := range []string{"datastream-*.txtar", "uistream-*.txtar"} {
			files, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				seen++
				t.Run(filepath.Base(dir)+"/"+filepath.Base(f), func(t *testing.T) {
					reason, isPending := pending[filepath.Base(f)]
					if !isPending {
						runConversionCase(t, parseTxtar(string(data)))
						return
					}
					// Listed in PENDING: it must still fail (see casefile).
					rec := casefile.Recorder{TB: t}
					rec.Run(func() { runConversionCase(&rec, parseTxtar(string(data))) })
					if len(rec.Failures) == 0 {
						t.Errorf("%s passes now: remove it from testdata/conformance/PENDING (listed for: %s)", filepath.Base(f), reason)
					}
				})
			}
		}
	}
	if seen == 0 {
		t.Skip("no conversion conformance cases found")
	}
}

func runConversionCase(t testing.TB, c txtarCase) {
	up, ok := c.files["upstream.http"]
	if !ok {
		t.Fatal("no upstream.http")
	}
	hdrEnd := strings.Index(up, "\n\n")
	if hdrEnd < 0 {
		t.Fatal("upstream.http has no blank line")
	}
	head, body := up[:hdrEnd], up[hdrEnd+2:]
	header := textproto.MIMEHeader{}
	for _, l := range strings.Split(head, "\n")[1:] {
		k, v, _ := strings.Cut(l, ":")
		header.Add(textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k)), strings.TrimSpace(v))
	}
	model := "gpt-4o-mini"
	if req, ok := c.files["request.http"]; ok {
		if i := strings.Index(req, "\n\n"); i >= 0 {
			model = gjson.Get(strings.TrimSuffix(req[i+2:], "\n"), "model").Str
		}
	}
	opts := ConvertOptions{Model: model, HustleSummary: true, MaxLine: 1 << 20, Created: 1733000000}
	bare := false
	if cfg, ok := c.files["config.json"]; ok {
		for k, v := range gjson.Parse(cfg).Map() {
			switch k {
			case "hustle_summary":
				opts.HustleSummary = v.Bool()
			case "max_event_bytes":
				n, err := strconv.Atoi(v.String())
				if err != nil {
					t.Skipf("max_event_bytes %s not understood here", v.Raw)
				}
				opts.MaxLine = n
			case "meta_event":
				bare = v.Str == "bare"
			default:
				t.Skipf("config key %q is the lead's business", k)
			}
		}
	}
	format := detectFormat(header, body)
	if format == "" {
		t.Skip("not a converted reply")
	}
	if status, ok := c.files["want/status"]; ok && strings.TrimSpace(status) != "200" {
		t.Skip("not a 200 reply")
	}
	if wh, ok := c.files["want/header"]; ok {
		for _, l := range strings.Split(strings.TrimSpace(wh), "\n") {
			if strings.HasPrefix(l, "Content-Type:") && strings.TrimSpace(l[len("Content-Type:"):]) != "text/event-stream" {
				t.Errorf("a converted reply is text/event-stream, the case wants %q", l)
			}
		}
	}
	rng := rand.New(rand.NewSource(1))
	for _, pieces := range []bool{false, true} {
		// The module's stream: the converter writes chat chunks into the
		// SSE rewriter, both reading into one record.
		var out bytes.Buffer
		var rep Reply
		rw := NewRewriter(&out, StreamOptions{MaxEvent: opts.MaxLine, FinalMeta: true, Reply: &rep, Chat: ChatOptions{BareMeta: bare, Model: model}}, nil)
		o := opts
		o.Reply = &rep
		var w io.WriteCloser
		if format == "data" {
			w = NewDataStreamConverter(rw, o)
		} else {
			w = NewUIStreamConverter(rw, o)
		}
		b := []byte(body)
		for len(b) > 0 {
			n := len(b)
			if pieces {
				n = min(1+rng.Intn(7), len(b))
			}
			if _, err := w.Write(b[:n]); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		checkClientEvents(t, c, clientData(t, out.Bytes()), pieces)
	}
}

// clientData is the data of each event of a stream the module wrote: one
// data line each.
func clientData(t testing.TB, out []byte) []string {
	t.Helper()
	var client []string
	for _, ev := range strings.SplitAfter(string(out), "\n\n") {
		if ev == "" {
			continue
		}
		if !strings.HasPrefix(ev, "data: ") || strings.Count(ev, "\n") != 2 {
			t.Fatalf("event is not one data line: %q", ev)
		}
		client = append(client, strings.TrimSuffix(ev[len("data: "):], "\n\n"))
	}
	return client
}

func detectFormat(h textproto.MIMEHeader, body string) string {
	ct := strings.ToLower(h.Get("Content-Type"))
	if strings.EqualFold(h.Get("X-Vercel-Ai-Data-Stream"), "v1") {
		return "data"
	}
	isSSE := strings.HasPrefix(ct, "text/event-stream")
	if isSSE && strings.EqualFold(h.Get("X-Vercel-Ai-Ui-Message-Stream"), "v1") {
		return "ui"
	}
	if isSSE || strings.HasPrefix(ct, "text/plain") {
		for _, l := range strings.Split(body, "\n") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if IsDataStreamLine([]byte(l)) {
				return "data"
			}
			break
		}
	}
	if isSSE {
		ev, _, _ := strings.Cut(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n")
		if data, ok, _ := EventData([]byte(ev), nil); ok && IsUIStreamEvent(data) {
			return "ui"
		}
	}
	return ""
}

// normalizeEvent is the conformance README's normalised form of an event.
func normalizeEvent(t testing.TB, data string) string {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return data
	}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"id", "created"} {
			if _, ok := m[k]; ok {
				m[k] = "*"
			}
		}
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func checkClientEvents(t testing.TB, c txtarCase, client []string, pieces bool) {
	t.Helper()
	run := "whole"
	if pieces {
		run = "pieces"
	}
	if want, ok := c.files["want/events"]; ok {
		var got []string
		for _, d := range client {
			got = append(got, normalizeEvent(t, d))
		}
		wantLines := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
		if strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
			t.Errorf("%s: events:\n got: %s\nwant: %s", run, strings.Join(got, "\n      "), strings.Join(wantLines, "\n      "))
		}
	}
	if want, ok := c.files["want/content"]; ok {
		var content strings.Builder
		for _, d := range client {
			content.WriteString(gjson.Get(d, "choices.0.delta.content").Str)
		}
		if got := content.String(); got != strings.TrimSuffix(want, "\n") {
			t.Errorf("%s: content %q, want %q", run, got, strings.TrimSuffix(want, "\n"))
		}
	}
	if want, ok := c.files["want/meta.json"]; ok {
		got := []byte("null")
		for _, d := range client {
			if m := gjson.Get(d, "meta"); m.Exists() {
				got = []byte(m.Raw)
			}
		}
		if !jsonscan.Equal(got, []byte(strings.TrimSpace(want))) {
			t.Errorf("%s: meta %s, want %s", run, got, want)
		}
	}
}

// TestMayBeDataStream pins the early decision for text/plain replies.
func TestMayBeDataStream(t *testing.T) {
	for in, want := range map[string]bool{
		"":               true,
		"\xEF":           true,
		"\xEF\xBB\xBF":   true,
		"\n\n":           true,
		"0":              true,
		"0:":             true,
		`0:"Hi"`:         true,
		"\r\nf:{":        true,
		"\xEF\xBB\xBF9:": true,
		"Hello":          false,
		"h":              true,
		"hi":             false,
		"A:":             false,
		"{":              false,
		" 0:":            false,
		"\xEF\xBBx":      false,
	} {
		if got := mayBeDataStream([]byte(in)); got != want {
			t.Errorf("mayBeDataStream(%q) = %v, want %v", in, got, want)
		}
	}
}
