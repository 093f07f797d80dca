package translate

import (
	"slices"
	"strings"
	"testing"
)

// Anthropic Messages streams (SPEC 4.5): every event passes with its
// bytes but message_stop, which gains a top-level "meta".

// aEv is an Anthropic event: an event: line naming its type and one data
// line whose object has that type, then rest (starting with a comma).
func aEv(typ, rest string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
}

func aTextDelta(index, text string) string {
	return aEv("content_block_delta", `,"index":`+index+`,"delta":{"type":"text_delta","text":`+string(JSONString(text))+`}`)
}

var (
	aStart = aEv("message_start", `,"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":1}}`)
	aText0 = aEv("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`)
	aPing  = "event: ping\ndata: {\"type\": \"ping\"}\n\n"
	aTool1 = aEv("content_block_start", `,"index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}`)
	aArgs1 = aEv("content_block_delta", `,"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}`)
	aStop1 = aEv("content_block_stop", `,"index":1`)
	aDelta = aEv("message_delta", `,"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}`)
	// aBody is an Anthropic stream up to message_stop.
	aBody = aStart + aText0 + aPing + aTextDelta("0", "Let me ") + aTextDelta("0", "check.") +
		aEv("content_block_stop", `,"index":0`) + aTool1 + aArgs1 + aStop1 + aDelta
	aStopEv = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// input 100 + cache reads 50 + cache writes 20; output from message_delta.
const aWantMeta = `{"tools_used":["get_weather"],"usage":{"input_tokens":170,"output_tokens":30,"total_tokens":200,"cached_input_tokens":50}}`

func anthropicOpts() StreamOptions { return StreamOptions{FinalMeta: true, Protocol: FormatAnthropic} }

func TestAnthropicStreamMessageStopGetsMeta(t *testing.T) {
	want := aBody + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":" + metaMark + "}\n\n"
	runPieces(t, aBody+aStopEv, anthropicOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, aWantMeta)
		if len(p.warns) != 0 || !p.r.Reply().Terminal {
			t.Fatalf("%s: warnings %v, terminal %v", p.name, p.warns, p.r.Reply().Terminal)
		}
		assertEventsParse(t, p.out)
	})
}

// A terminal event that is not a JSON object (gjson reads its type all
// the same) cannot carry the meta: it goes out as it came, its event and
// data lines included (SPEC 8: what the module cannot read, it forwards).
func TestAnthropicStreamInvalidMessageStopPasses(t *testing.T) {
	in := aBody + "event: message_stop\ndata: {\"type\":\"message_stop\",\"x\":\n\n"
	runPieces(t, in, anthropicOpts, func(p pieceRun) {
		if p.out != in {
			t.Fatalf("%s: output differs\n got %q\nwant %q", p.name, p.out, in)
		}
	})
}

// message_stop's own meta is merged and replaced where it lies; a
// meta-only event is withheld and merged.
func TestAnthropicStreamUpstreamMeta(t *testing.T) {
	in := aStart + "data: {\"meta\":{\"source\":\"gw\"}}\n\n" + aTool1 + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":{\"trace\":\"t\"},\"x\":1}\n\n"
	want := aStart + aTool1 + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":" + metaMark + ",\"x\":1}\n\n"
	meta := `{"source":"gw","tools_used":["get_weather"],"trace":"t","usage":{"input_tokens":170,"output_tokens":1,"total_tokens":171,"cached_input_tokens":50}}`
	runPieces(t, in, anthropicOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, meta)
	})
}

// Tool names come from content_block_start blocks of type tool_use,
// server_tool_use and mcp_tool_use.
func TestAnthropicStreamToolNames(t *testing.T) {
	blocks := []string{
		`{"type":"text","text":""}`,
		`{"type":"thinking","thinking":"","name":"not_a_tool"}`,
		`{"type":"tool_use","id":"t1","name":"get_weather","input":{}}`,
		`{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}`,
		`{"type":"web_search_tool_result","tool_use_id":"s1","content":[]}`,
		`{"type":"mcp_tool_use","id":"m1","name":"mcp_lookup","server_name":"srv","input":{}}`,
		`{"type":"mcp_tool_result","tool_use_id":"m1","content":[]}`,
		`{"type":"redacted_thinking","data":"x"}`,
		`{"type":"tool_use","id":"t2","name":"get_weather","input":{}}`,
		`{"type":"tool_use","id":"t3","name":"","input":{}}`,
	}
	var in string
	for i, b := range blocks {
		in += aEv("content_block_start", `,"index":`+itoa(int64(i))+`,"content_block":`+b)
	}
	// A tool_use block anywhere but in content_block_start gives nothing.
	in += aEv("content_block_delta", `,"index":0,"delta":{"type":"tool_use","name":"elsewhere"}`)
	want := in + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":" + metaMark + "}\n\n"
	runPieces(t, in+aStopEv, anthropicOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, `{"tools_used":["get_weather","web_search","mcp_lookup"]}`)
	})
}

// Usage (SPEC 9.1): message_start's, updated by each message_delta's; the
// input counts every input token.
func TestAnthropicStreamUsageCumulative(t *testing.T) {
	start := func(usage string) string {
		return aEv("message_start", `,"message":{"id":"m","type":"message","model":"claude","content":[],"usage":`+usage+`}`)
	}
	delta := func(usage string) string {
		return aEv("message_delta", `,"delta":{"stop_reason":"end_turn"},"usage":`+usage)
	}
	cases := []struct{ name, in, usage string }{
		{"start then delta", start(`{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":1}`) + delta(`{"output_tokens":30}`),
			`{"input_tokens":170,"output_tokens":30,"total_tokens":200,"cached_input_tokens":50}`},
		{"delta repeats the input", start(`{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":1}`) +
			delta(`{"output_tokens":10}`) + delta(`{"input_tokens":100,"cache_read_input_tokens":60,"output_tokens":40}`),
			`{"input_tokens":180,"output_tokens":40,"total_tokens":220,"cached_input_tokens":60}`},
		{"no cache counts", start(`{"input_tokens":12,"output_tokens":1}`) + delta(`{"output_tokens":7}`),
			`{"input_tokens":12,"output_tokens":7,"total_tokens":19}`},
		{"cache reads of 0 are kept", start(`{"input_tokens":12,"cache_read_input_tokens":0,"output_tokens":1}`),
			`{"input_tokens":12,"output_tokens":1,"total_tokens":13,"cached_input_tokens":0}`},
		{"only message_delta", delta(`{"input_tokens":5,"output_tokens":6}`),
			`{"input_tokens":5,"output_tokens":6,"total_tokens":11}`},
		{"usage.cost of the delta", start(`{"input_tokens":1,"output_tokens":1}`) + delta(`{"output_tokens":2,"cost":0.25}`),
			`{"input_tokens":1,"output_tokens":2,"total_tokens":3}`},
	}
	for _, c := range cases {
		want := c.in + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":" + metaMark + "}\n\n"
		runPieces(t, c.in+aStopEv, anthropicOpts, func(p pieceRun) {
			meta := `{"usage":` + c.usage + `}`
			if strings.Contains(c.in, `"cost"`) {
				meta = `{"usage":` + c.usage + `,"cost_usd":0.25}`
			}
			checkSpliced(t, c.name+" "+p.name, p.out, want, meta)
		})
	}
}

// Run-once content: the text deltas, text blocks joined with "\n".
func TestAnthropicStreamContent(t *testing.T) {
	in := aStart + aText0 + aPing + aTextDelta("0", "Hello") + aTextDelta("0", " world") +
		aEv("content_block_start", `,"index":1,"content_block":{"type":"thinking","thinking":""}`) +
		aEv("content_block_delta", `,"index":1,"delta":{"type":"thinking_delta","thinking":"hmm"}`) +
		aEv("content_block_start", `,"index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}`) +
		aEv("content_block_delta", `,"index":2,"delta":{"type":"input_json_delta","partial_json":"{}"}`) +
		aEv("content_block_start", `,"index":3,"content_block":{"type":"text","text":""}`) +
		aTextDelta("3", "Second \"block\"") +
		aEv("content_block_delta", `,"index":3,"delta":{"type":"citations_delta","citation":{"cited_text":"c"}}`) +
		aTextDelta("3", ".") + aTextDelta("4", "Third") + aDelta + aStopEv
	checkContent(t, in, anthropicOpts, "Hello world\nSecond \"block\".\nThird")
}

// An error event passes as it came and gives the reply's error.
func TestAnthropicStreamErrorEvent(t *testing.T) {
	errEv := "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n"
	in := aStart + aText0 + aTextDelta("0", "Hi") + errEv
	runPieces(t, in, anthropicOpts, func(p pieceRun) {
		if p.out != in {
			t.Fatalf("%s:\n got %q\nwant %q", p.name, p.out, in)
		}
		if msg, isErr := p.r.Reply().Err(); !isErr || msg != "Overloaded" {
			t.Fatalf("%s: error %q %v", p.name, msg, isErr)
		}
		if !slices.Equal(p.warns, []string{ReasonNoTerminalEvent}) {
			t.Fatalf("%s: warnings %v", p.name, p.warns)
		}
	})
}

// Without message_stop: no meta, the fallback told, every byte as it came.
func TestAnthropicStreamNoMessageStop(t *testing.T) {
	for name, in := range map[string]string{
		"cut":          aBody,
		"unterminated": strings.TrimSuffix(aBody, "\n\n"),
		"done only":    aBody + doneEv,
	} {
		runPieces(t, in, anthropicOpts, func(p pieceRun) {
			if p.out != in {
				t.Fatalf("%s %s:\n got %q\nwant %q", name, p.name, p.out, in)
			}
			if !slices.Equal(p.warns, []string{ReasonNoTerminalEvent}) || p.r.Reply().Terminal {
				t.Fatalf("%s %s: warnings %v, terminal %v", name, p.name, p.warns, p.r.Reply().Terminal)
			}
		})
	}
}

// Events after message_stop pass as they are.
func TestAnthropicStreamAfterMessageStop(t *testing.T) {
	late := aPing + aTool1 + doneEv
	want := aBody + "event: message_stop\ndata: {\"type\":\"message_stop\",\"meta\":" + metaMark + "}\n\n" + late
	runPieces(t, aBody+aStopEv+late, anthropicOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, aWantMeta)
	})
}

// final_meta off: nothing added, nothing withheld.
func TestAnthropicStreamFinalMetaOff(t *testing.T) {
	in := aStart + "data: {\"meta\":{\"source\":\"gw\"}}\n\n" + aTool1 + aStopEv
	runPieces(t, in, func() StreamOptions { return StreamOptions{Protocol: FormatAnthropic} }, func(p pieceRun) {
		if p.out != in {
			t.Fatalf("%s:\n got %q\nwant %q", p.name, p.out, in)
		}
	})
}

// message_stop as several data lines, or with white space around its
// object, still gets its meta and stays one valid event.
func TestAnthropicStreamMessageStopShapes(t *testing.T) {
	const want = `{"type":"message_stop","meta":{"tools_used":["get_weather"]}}`
	for name, term := range map[string]string{
		"two data lines":      "event: message_stop\ndata: {\"type\":\ndata: \"message_stop\"}\n\n",
		"trailing empty line": "event: message_stop\ndata: {\"type\":\"message_stop\"}\ndata:\n\n",
		"space before":        "event: message_stop\ndata:  {\"type\":\"message_stop\"}\n\n",
		"space after":         "event: message_stop\ndata: {\"type\":\"message_stop\"} \t\n\n",
		"space both, crlf":    "event: message_stop\r\ndata:   { \"type\" : \"message_stop\" }  \r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			checkSeveralDataLines(t, aTool1, term, "event: message_stop", want, anthropicOpts)
		})
	}
}
