package translate

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
)

// recorder is an output that keeps each Write apart.
type recorder struct{ writes []string }

func (r *recorder) Write(p []byte) (int, error) {
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) String() string { return strings.Join(r.writes, "") }

// testOpts are options that make the output fully predictable (the id comes
// from an f: or start part in the inputs that need it), with a record of
// their own: one converter's.
func testOpts(stats *Stats) ConvertOptions {
	return ConvertOptions{Model: "m", Created: 1, MaxLine: 1 << 20, HustleSummary: true, Stats: stats, Reply: new(Reply)}
}

// withRecord is opts with a fresh record, as OpenStream gives a converter
// the rewriter's.
func withRecord(opts ConvertOptions) ConvertOptions {
	opts.Reply = new(Reply)
	return opts
}

// withMetaEvent is out with the record's meta, when it holds any, as a
// meta-only event before the [DONE] that ends out, so that an expected
// output shows the chunks and the meta in one string.
func withMetaEvent(out string, rep *Reply) string {
	if rep.Meta.Empty() || !strings.HasSuffix(out, done) {
		return out
	}
	return strings.TrimSuffix(out, done) + metaEv(string(rep.Meta.JSON())) + done
}

// feedPieces writes in to c in pieces whose sizes cycle through sizes (nil:
// in one write), then closes c.
func feedPieces(t *testing.T, c io.WriteCloser, in string, sizes []int) {
	t.Helper()
	b := []byte(in)
	for i := 0; len(b) > 0; i++ {
		n := len(b)
		if len(sizes) > 0 {
			n = min(sizes[i%len(sizes)], len(b))
		}
		if got, err := c.Write(b[:n]); err != nil || got != n {
			t.Fatalf("Write = %d, %v; want %d, nil", got, err, n)
		}
		b = b[n:]
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func convertDataStream(t *testing.T, opts ConvertOptions, in string, sizes ...int) (string, *DataStreamConverter) {
	t.Helper()
	var out recorder
	opts = withRecord(opts)
	c := NewDataStreamConverter(&out, opts)
	feedPieces(t, c, in, sizes)
	return withMetaEvent(out.String(), opts.Reply), c
}

const (
	head1 = `data: {"id":"msg-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{`
	done  = "data: [DONE]\n\n"
)

func deltaEv(delta string) string { return head1 + delta + "},\"finish_reason\":null}]}\n\n" }

func finishEv(delta, reason, usage string) string {
	s := head1 + delta + `},"finish_reason":"` + reason + `"}]`
	if usage != "" {
		s += `,"usage":` + usage
	}
	return s + "}\n\n"
}

func metaEv(meta string) string { return `data: {"meta":` + meta + "}\n\n" }

func TestDataStreamCodes(t *testing.T) {
	const f = `f:{"messageId":"msg-1"}` + "\n"
	for _, tc := range []struct {
		name    string
		in      string
		want    string
		skipped int64
	}{
		{"0 text", f + `0:"Hello"`,
			deltaEv(`"role":"assistant","content":"Hello"`) + done, 0},
		{"0 text twice, role once", f + "0:\"a\"\n0:\"b \\\"q\\\" \\u00e9\\n\"\n",
			deltaEv(`"role":"assistant","content":"a"`) + deltaEv(`"content":"b \"q\" é\n"`) + done, 0},
		{"g reasoning then text", f + "g:\"think\"\n0:\"say\"\n",
			deltaEv(`"role":"assistant","reasoning_content":"think"`) + deltaEv(`"content":"say"`) + done, 0},
		{"2 data, every element", f + `2:[{"a":1},"two",3,{"type":"path_info","tokensIn":5}]` + "\n",
			metaEv(`{"hustle":{"path_info":{"type":"path_info","tokensIn":5},"data":[{"a":1},"two",3]},"structured_result":{"type":"key_value","entries":[{"key":"Tokens","value":"5 in"}]}}`) + done, 0},
		{"8 annotations", f + `8:[{"id":"ann-1"},{"id":"ann-2"}]` + "\n",
			metaEv(`{"hustle":{"data":[{"id":"ann-1"},{"id":"ann-2"}]}}`) + done, 0},
		{"2 empty array", f + "2:[]\n", done, 0},
		{"9 tool call", f + `9:{"toolCallId":"c1","toolName":"search","args":{"q":"x"}}` + "\n",
			metaEv(`{"tools_used":["search"]}`) + done, 0},
		{"b then 9 same tool, and another", f + `b:{"toolCallId":"c1","toolName":"search"}` + "\n" +
			`9:{"toolCallId":"c1","toolName":"search","args":{}}` + "\n" + `b:{"toolCallId":"c2","toolName":"weather"}` + "\n",
			metaEv(`{"tools_used":["search","weather"]}`) + done, 0},
		{"3 error", f + `3:"Rate limit \"hit\""` + "\n",
			`data: {"error":{"message":"Rate limit \"hit\"","type":"upstream_error"}}` + "\n\n" + done, 0},
		{"d stop with camelCase usage", f + `d:{"finishReason":"stop","usage":{"promptTokens":10,"completionTokens":20}}` + "\n",
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`) + done, 0},
		{"d tool-calls with snake_case usage and total", f + `d:{"finishReason":"tool-calls","usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":125}}` + "\n",
			finishEv(`"role":"assistant"`, "tool_calls", `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":125}`) + done, 0},
		{"d usage in AI SDK 5's snake_case", f + `d:{"finishReason":"stop","usage":{"input_tokens":4,"output_tokens":1}}` + "\n",
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}`) + done, 0},
		{"d content-filter without usage", f + `d:{"finishReason":"content-filter"}` + "\n",
			finishEv(`"role":"assistant"`, "content_filter", "") + done, 0},
		{"d length after text", f + "0:\"x\"\n" + `d:{"finishReason":"length","usage":{"promptTokens":1,"completionTokens":1}}` + "\n",
			deltaEv(`"role":"assistant","content":"x"`) + finishEv("", "length", `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`) + done, 0},
		{"d other reasons as they are", f + `d:{"finishReason":"error"}` + "\n" + `d:{"finishReason":"unknown"}` + "\n",
			finishEv(`"role":"assistant"`, "error", "") + finishEv("", "unknown", "") + done, 0},
		{"d without finishReason is stop", f + `d:{}` + "\n", finishEv(`"role":"assistant"`, "stop", "") + done, 0},
		{"d usage without numbers", f + `d:{"finishReason":"stop","usage":{"promptTokens":"NaN"}}` + "\n",
			finishEv(`"role":"assistant"`, "stop", "") + done, 0},
		{"d usage null", f + `d:{"finishReason":"stop","usage":null}` + "\n",
			finishEv(`"role":"assistant"`, "stop", "") + done, 0},
		{"d usage with one count", f + `d:{"finishReason":"stop","usage":{"completionTokens":7}}` + "\n",
			finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":0,"completion_tokens":7,"total_tokens":7}`) + done, 0},
		{"a c e h i j k give nothing", f +
			`a:{"toolCallId":"c1","result":"r"}` + "\n" +
			`c:{"toolCallId":"c1","argsTextDelta":"{"}` + "\n" +
			`e:{"finishReason":"stop","usage":{"promptTokens":3,"completionTokens":10},"isContinued":false}` + "\n" +
			`h:{"sourceType":"url","id":"s","url":"https://example.com"}` + "\n" +
			`i:{"data":"redacted"}` + "\n" +
			`j:{"signature":"abc"}` + "\n" +
			`k:{"mimeType":"text/plain","data":"SGVsbG8="}` + "\n",
			done, 7},
		{"unknown codes give nothing", f + "1:\"old\"\n7:[]\nz:{}\n", done, 3},
		{"malformed lines are skipped", f +
			"no prefix at all\n" +
			"0\"x\"\n" +
			"AB:\"x\"\n" +
			"A:\"upper\"\n" +
			" 0:\"leading space\"\n" +
			"0:\"unterminated\n" +
			"0:not json\n" +
			"0:\n" +
			"0:{\"a\":1}\n" +
			"g:42\n" +
			"2:{\"x\":1}\n" +
			"8:\"s\"\n" +
			"9:\"tool\"\n" +
			"9:{\"toolCallId\":\"c\"}\n" +
			"b:{\"toolName\":7}\n" +
			"3:{\"message\":\"m\"}\n" +
			"f:{}\n" +
			"d:\"stop\"\n" +
			"0:\"ok\"\n",
			deltaEv(`"role":"assistant","content":"ok"`) + done, 18},
		{"blank lines are skipped, not counted", f + "\n\n0:\"a\"\n\n\r\n",
			deltaEv(`"role":"assistant","content":"a"`) + done, 0},
		{"JSON with spaces around it", f + "0: \"a\" \n", deltaEv(`"role":"assistant","content":"a"`) + done, 0},
		{"empty stream", "", done, 0},
		{"BOM before the first line", "\xEF\xBB\xBF" + f + "0:\"a\"\n", deltaEv(`"role":"assistant","content":"a"`) + done, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st Stats
			got, _ := convertDataStream(t, testOpts(&st), tc.in)
			if got != tc.want {
				t.Errorf("output:\n got %q\nwant %q", got, tc.want)
			}
			if st.Skipped != tc.skipped {
				t.Errorf("Skipped = %d, want %d", st.Skipped, tc.skipped)
			}
			lines := int64(0)
			for _, l := range strings.Split(strings.TrimPrefix(tc.in, "\xEF\xBB\xBF"), "\n") {
				if strings.TrimRight(l, "\r") != "" {
					lines++
				}
			}
			if st.Events != lines {
				t.Errorf("Events = %d, want %d (non-blank lines)", st.Events, lines)
			}
		})
	}
}

// One Write that produces output (less than convFlushAt of chunks) reaches
// the output in one Write; one that completes no part writes nothing.
func TestDataStreamOneOutputWritePerInputWrite(t *testing.T) {
	var out recorder
	c := NewDataStreamConverter(&out, testOpts(nil))
	c.Write([]byte("f:{\"messageId\":\"msg-1\"}\n0:\"a\"\n0:\"b\"\ng:\"c\"\n0:\"d"))
	if len(out.writes) != 1 || out.writes[0] != deltaEv(`"role":"assistant","content":"a"`)+deltaEv(`"content":"b"`)+deltaEv(`"reasoning_content":"c"`) {
		t.Fatalf("first Write gave %q", out.writes)
	}
	c.Write([]byte("ef"))
	if len(out.writes) != 1 {
		t.Fatalf("a Write completing no line wrote %q", out.writes[1:])
	}
	c.Write([]byte("\"\n"))
	if len(out.writes) != 2 || out.writes[1] != deltaEv(`"content":"def"`) {
		t.Fatalf("second output Write %q", out.writes[1:])
	}
	c.Close()
	if len(out.writes) != 3 || out.writes[2] != done {
		t.Fatalf("Close wrote %q", out.writes[2:])
	}
}

const mixedStream = `f:{"messageId":"msg-1"}
2:[{"type":"reasoning","thinking":"Weather — in °C 🌡️","categories":["weather"],"confidence":0.5}]
9:{"toolCallId":"call_a","toolName":"weather","args":{"city":"Zürich"}}
a:{"toolCallId":"call_a","result":{"temp":21}}
g:"Thinking about Zürich — 21°C 🌤️"
0:"It is 21°C in Zürich — "
0:"sunny ☀️ and calm 😀."
3:"minor hiccup"
8:[{"note":"naïve"}]
d:{"finishReason":"stop","usage":{"promptTokens":12,"completionTokens":8}}
`

func TestDataStreamSplitAnywhere(t *testing.T) {
	want, _ := convertDataStream(t, testOpts(nil), mixedStream)
	if !strings.Contains(want, `"content":"sunny ☀️ and calm 😀."`) || !strings.HasSuffix(want, done) {
		t.Fatalf("whole conversion looks wrong: %q", want)
	}
	// Two writes, split at every byte position.
	for i := 0; i <= len(mixedStream); i++ {
		var out recorder
		opts := testOpts(nil)
		c := NewDataStreamConverter(&out, opts)
		c.Write([]byte(mixedStream[:i]))
		c.Write([]byte(mixedStream[i:]))
		c.Close()
		if got := withMetaEvent(out.String(), opts.Reply); got != want {
			t.Fatalf("split at %d: got\n%q\nwant\n%q", i, got, want)
		}
	}
	// Pieces of 1 to 7 bytes, and mixed sizes.
	for _, sizes := range [][]int{{1}, {2}, {3}, {4}, {5}, {6}, {7}, {1, 7, 2, 5, 3}, {13, 1}} {
		if got, _ := convertDataStream(t, testOpts(nil), mixedStream, sizes...); got != want {
			t.Fatalf("pieces %v: got\n%q\nwant\n%q", sizes, got, want)
		}
	}
	// CRLF line ends give the same output.
	crlf := strings.ReplaceAll(mixedStream, "\n", "\r\n")
	for _, sizes := range [][]int{nil, {1}, {2}, {3}, {7}} {
		if got, _ := convertDataStream(t, testOpts(nil), crlf, sizes...); got != want {
			t.Fatalf("CRLF, pieces %v: got\n%q\nwant\n%q", sizes, got, want)
		}
	}
}

// A multi-byte character cut between two writes comes out whole.
func TestDataStreamSplitUTF8(t *testing.T) {
	for _, ch := range []string{"—", "°", "😀", "é", "\u2028"} {
		line := `f:{"messageId":"msg-1"}` + "\n0:\"a" + ch + "b\"\n"
		want := deltaEv(`"role":"assistant","content":"a`+strings.ReplaceAll(ch, "\u2028", `\u2028`)+`b"`) + done
		at := strings.Index(line, ch)
		for k := 1; k < len(ch); k++ {
			var out recorder
			c := NewDataStreamConverter(&out, testOpts(nil))
			c.Write([]byte(line[:at+k]))
			c.Write([]byte(line[at+k:]))
			c.Close()
			if got := out.String(); got != want {
				t.Errorf("%q split after byte %d: got %q, want %q", ch, k, got, want)
			}
		}
	}
}

func TestDataStreamLastLineWithoutNewline(t *testing.T) {
	for _, in := range []string{"0:\"end\"", "0:\"end\"\r"} {
		got, _ := convertDataStream(t, testOpts(nil), `f:{"messageId":"msg-1"}`+"\n"+in, 1)
		if want := deltaEv(`"role":"assistant","content":"end"`) + done; got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestDataStreamTooLongLine(t *testing.T) {
	const max = 16
	opts := func(st *Stats) ConvertOptions {
		o := testOpts(st)
		o.MaxLine = max
		return o
	}
	exact := `0:"` + strings.Repeat("x", max-4) + `"` // max bytes
	if len(exact) != max {
		t.Fatal("bad test line")
	}
	long := `0:"` + strings.Repeat("y", 10*max) + `"`
	in := exact + "\n" + long + "\n" + exact + "\r\n" + long + "\r\n" + `0:"z"` + "\n" + long
	want := deltaEv(`"role":"assistant","content":"`+exact[3:max-1]+`"`) + deltaEv(`"content":"`+exact[3:max-1]+`"`) + deltaEv(`"content":"z"`) + done
	for _, sizes := range [][]int{nil, {1}, {3}, {max}, {max + 1}, {max + 2}, {2 * max}, {5, 7}} {
		var st Stats
		var out recorder
		c := NewDataStreamConverter(&out, opts(&st))
		b := []byte(in)
		for i := 0; len(b) > 0; i++ {
			n := len(b)
			if len(sizes) > 0 {
				n = min(sizes[i%len(sizes)], len(b))
			}
			c.Write(b[:n])
			if cap(c.split.buf) > max+2+len(bom) { // a CRLF, and a BOM on the first line
				t.Fatalf("pieces %v: line buffer grew to %d bytes, max is %d", sizes, cap(c.split.buf), max)
			}
			b = b[n:]
		}
		c.Close()
		// No f: part (one would be longer than max): the id is generated.
		got := regexp.MustCompile(`"id":"chatcmpl-[0-9a-f]{24}"`).ReplaceAllString(out.String(), `"id":"msg-1"`)
		if got != want {
			t.Errorf("pieces %v: got\n%q\nwant\n%q", sizes, got, want)
		}
		if st.Oversize != 3 || st.Skipped != 3 || st.Events != 6 {
			t.Errorf("pieces %v: stats %+v, want 3 oversize, 3 skipped, 6 events", sizes, st)
		}
	}
}

// TestDataStreamBOMAtTheLimit: a BOM counts in no line's length, and is
// looked for on the first line only, whether that line came whole or in
// pieces, kept to the end or dropped for its length.
func TestDataStreamBOMAtTheLimit(t *testing.T) {
	opts := testOpts(nil)
	opts.MaxLine = 16
	exact := `0:"` + strings.Repeat("x", 12) + `"` // 16 bytes
	for _, in := range []string{
		"\xEF\xBB\xBF" + exact + "\r\n",
		exact + "yy\n\xEF\xBB\xBF0:\"a\"\n",
	} {
		whole, _ := convertDataStream(t, opts, in)
		for _, size := range []int{1, 2, 3, 5} {
			got, _ := convertDataStream(t, opts, in, size)
			if got, whole := generatedID.ReplaceAllString(got, "X"), generatedID.ReplaceAllString(whole, "X"); got != whole {
				t.Errorf("%q in pieces of %d:\n%q\nwhole:\n%q", in, size, got, whole)
			}
		}
	}
}

func TestDataStreamID(t *testing.T) {
	// The first id announced before the first chunk is the stream's.
	got, _ := convertDataStream(t, testOpts(nil), "f:{\"messageId\":\"msg-1\"}\nf:{\"messageId\":\"msg-2\"}\n0:\"a\"\nf:{\"messageId\":\"msg-3\"}\n0:\"b\"\nd:{\"finishReason\":\"stop\"}\n")
	if want := deltaEv(`"role":"assistant","content":"a"`) + deltaEv(`"content":"b"`) + finishEv("", "stop", "") + done; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// An f: after the first chunk is ignored.
	got, _ = convertDataStream(t, testOpts(nil), "0:\"a\"\nf:{\"messageId\":\"msg-late\"}\n0:\"b\"\n")
	ids := regexp.MustCompile(`"id":"([^"]*)"`).FindAllStringSubmatch(got, -1)
	if len(ids) != 2 || ids[0][1] != ids[1][1] || !regexp.MustCompile(`^chatcmpl-[0-9a-f]{24}$`).MatchString(ids[0][1]) {
		t.Errorf("ids %v: want the same generated chatcmpl id twice", ids)
	}
	// An error event is not a chunk: an f: after it still counts.
	got, _ = convertDataStream(t, testOpts(nil), "3:\"e\"\nf:{\"messageId\":\"msg-1\"}\n0:\"a\"\n")
	if want := `data: {"error":{"message":"e","type":"upstream_error"}}` + "\n\n" + deltaEv(`"role":"assistant","content":"a"`) + done; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestDataStreamDefaults(t *testing.T) {
	var out bytes.Buffer
	c := NewDataStreamConverter(&out, ConvertOptions{Reply: new(Reply)})
	c.Write([]byte("0:\"a\"\n"))
	c.Close()
	got := out.String()
	m := regexp.MustCompile(`^data: \{"id":"chatcmpl-[0-9a-f]{24}","object":"chat.completion.chunk","created":(\d+),"model":"unknown","choices"`).FindStringSubmatch(got)
	if m == nil || len(m[1]) < 10 {
		t.Fatalf("default head: %q", got)
	}
}

func TestDataStreamFixtureToolCallDeltas(t *testing.T) {
	in := loadUpstreamFixture(t, upstreamFixturesDir(t), "vercel-data-stream-v1-tool-call-deltas.txt")
	var st Stats
	got, c := convertDataStream(t, testOpts(&st), string(in), 3)
	// f: msg-0 gives the id; b and 9 name tool1 once; c, a, e give nothing;
	// d gives the finish chunk, with the role since no chunk came before.
	want := strings.ReplaceAll(finishEv(`"role":"assistant"`, "stop", `{"prompt_tokens":3,"completion_tokens":10,"total_tokens":13}`), "msg-1", "msg-0") +
		metaEv(`{"tools_used":["tool1"]}`) + done
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if st != (Stats{Events: 8, Skipped: 4}) {
		t.Errorf("stats %+v, want 8 events, 4 skipped (c c a e)", st)
	}
	if tools := c.rep.Meta.Tools(); len(tools) != 1 || tools[0] != "tool1" {
		t.Errorf("Meta().Tools() = %v", tools)
	}
}

func TestDataStreamNoFinish(t *testing.T) {
	got, c := convertDataStream(t, testOpts(nil), "f:{\"messageId\":\"msg-1\"}\n0:\"cut\"\n9:{\"toolCallId\":\"c\",\"toolName\":\"t\",\"args\":{}}\n0:\"off\"")
	if want := deltaEv(`"role":"assistant","content":"cut"`) + deltaEv(`"content":"off"`) + metaEv(`{"tools_used":["t"]}`) + done; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if string(c.rep.Meta.JSON()) != `{"tools_used":["t"]}` {
		t.Errorf("meta = %s", c.rep.Meta.JSON())
	}
}

func TestDataStreamHustleSummaryOff(t *testing.T) {
	opts := testOpts(nil)
	opts.HustleSummary = false
	got, _ := convertDataStream(t, opts, `2:[{"type":"reasoning","thinking":"t"}]`+"\n")
	if want := metaEv(`{"hustle":{"reasoning":{"type":"reasoning","thinking":"t"}}}`) + done; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestDataStreamCloseAndWriteAfter(t *testing.T) {
	var out recorder
	c := NewDataStreamConverter(&out, testOpts(nil))
	c.Write([]byte("0:\"a\"\n"))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	n := len(out.writes)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if k, err := c.Write([]byte("0:\"late\"\n")); k != 9 || err != nil {
		t.Fatalf("Write after Close = %d, %v", k, err)
	}
	c.Close()
	if len(out.writes) != n {
		t.Fatalf("wrote after Close: %q", out.writes[n:])
	}
}

type failWriter struct {
	n   int // writes that succeed
	err error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, w.err
	}
	w.n--
	return len(p), nil
}

func TestDataStreamOutputErrorIsSticky(t *testing.T) {
	boom := errors.New("client gone")
	w := &failWriter{n: 1, err: boom}
	c := NewDataStreamConverter(w, testOpts(nil))
	if _, err := c.Write([]byte("0:\"a\"\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("0:\"b\"\n")); !errors.Is(err, boom) {
		t.Fatalf("Write err = %v, want %v", err, boom)
	}
	if _, err := c.Write([]byte("0:\"c\"\n")); !errors.Is(err, boom) {
		t.Fatalf("later Write err = %v", err)
	}
	if err := c.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close err = %v", err)
	}
}

func TestDataStreamDebugNeverHoldsContent(t *testing.T) {
	var msgs []string
	opts := testOpts(nil)
	opts.Debug = func(m string) { msgs = append(msgs, m) }
	opts.MaxLine = 40
	convertDataStream(t, opts, "c:{\"toolCallId\":\"secret1\",\"argsTextDelta\":\"x\"}\nsecret2 line\n0:{\"secret3\":1}\n0:\"secret4 "+strings.Repeat("s", 50)+"\"\n1:\"secret5\"\n")
	if len(msgs) != 5 {
		t.Fatalf("debug messages %q, want 5", msgs)
	}
	for _, m := range msgs {
		if strings.Contains(m, "secret") {
			t.Errorf("debug message carries content: %q", m)
		}
	}
}
