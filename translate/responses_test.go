package translate

import (
	"slices"
	"strings"
	"testing"
)

// OpenAI Responses streams (SPEC 4.4): every event passes with its bytes
// but the terminal one, whose response object gains "meta".

// rEv is a Responses event: an event: line naming its type, and one data
// line whose object has that type, then rest (starting with a comma).
func rEv(typ, rest string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
}

var (
	rCreated = rEv("response.created", `,"sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-4.1-mini","output":[]}`)
	rFCAdded = rEv("response.output_item.added", `,"sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}`)
	rFCArgs  = rEv("response.function_call_arguments.delta", `,"sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"city\":\"Paris\"}"`)
	rFCDone  = rEv("response.output_item.done", `,"sequence_number":3,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`)
	rMsgAdd  = rEv("response.output_item.added", `,"sequence_number":4,"output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}`)
	rText1   = rEv("response.output_text.delta", `,"sequence_number":5,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"It is 18 "`)
	rText2   = rEv("response.output_text.delta", `,"sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"°C \"here\"."`)
	rMsgDone = rEv("response.output_item.done", `,"sequence_number":7,"output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"It is 18 °C \"here\"."}]}`)
	// rBody is a Responses stream up to its terminal event.
	rBody = rCreated + rFCAdded + rFCArgs + rFCDone + rMsgAdd + rText1 + rText2 + rMsgDone
)

const rUsage = `"usage":{"input_tokens":20,"output_tokens":5,"total_tokens":25}`

// rTerminal is a terminal event of type typ and status, with extra members
// (after a comma) at the end of its response object, and its expected form
// with metaMark where the meta goes.
func rTerminal(typ, status, extra string) (in, want string) {
	head := "event: " + typ + "\ndata: {\"type\":\"" + typ + `","sequence_number":8,"response":{"id":"resp_1","object":"response","status":"` + status + `","model":"gpt-4.1-mini","output":[],` + rUsage + extra
	return head + "}}\n\n", head + `,"meta":` + metaMark + "}}\n\n"
}

func responsesOpts() StreamOptions { return StreamOptions{FinalMeta: true, Protocol: FormatResponses} }

const rWantMeta = `{"tools_used":["get_weather"],"usage":{"input_tokens":20,"output_tokens":5,"total_tokens":25}}`

func TestResponsesStreamTerminalGetsMeta(t *testing.T) {
	for _, c := range []struct{ typ, status, extra string }{
		{"response.completed", "completed", ""},
		{"response.incomplete", "incomplete", `,"incomplete_details":{"reason":"max_output_tokens"}`},
		{"response.failed", "failed", `,"error":{"code":"server_error","message":"The model failed."}`},
	} {
		term, wantTerm := rTerminal(c.typ, c.status, c.extra)
		runPieces(t, rBody+term, responsesOpts, func(p pieceRun) {
			checkSpliced(t, c.typ+" "+p.name, p.out, rBody+wantTerm, rWantMeta)
			if len(p.warns) != 0 {
				t.Fatalf("%s %s: warnings %v", c.typ, p.name, p.warns)
			}
			if !p.r.Reply().Terminal {
				t.Fatalf("%s %s: the record does not know the terminal event came", c.typ, p.name)
			}
			assertEventsParse(t, p.out)
		})
	}
}

// The terminal event's own response.meta is merged into the meta, and its
// value is replaced where it lies: the other bytes, sequence_number
// included, are the upstream's.
func TestResponsesStreamTerminalMetaReplaced(t *testing.T) {
	head := "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":8,\"response\":{\"id\":\"resp_1\",\"meta\": "
	tail := `,"output":[],` + rUsage + "}}\n\n"
	in := rBody + head + `{"trace":"t-1","tools_used":["lookup"]}` + tail
	want := rBody + head + metaMark + tail
	meta := `{"tools_used":["get_weather","lookup"],"trace":"t-1","usage":{"input_tokens":20,"output_tokens":5,"total_tokens":25}}`
	runPieces(t, in, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, meta)
	})
}

// A meta-only upstream event is withheld; its meta reaches the terminal
// event's.
func TestResponsesStreamMetaOnlyEventWithheld(t *testing.T) {
	term, wantTerm := rTerminal("response.completed", "completed", "")
	in := rCreated + "data: {\"meta\":{\"source\":\"gw\"}}\n\n" + rFCAdded + term
	want := rCreated + rFCAdded + wantTerm
	meta := `{"source":"gw","tools_used":["get_weather"],"usage":{"input_tokens":20,"output_tokens":5,"total_tokens":25}}`
	runPieces(t, in, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, meta)
	})
}

// Without a terminal event the stream passes as it came, gets no meta,
// and the fallback is told (SPEC 4.4).
func TestResponsesStreamNoTerminalEvent(t *testing.T) {
	for name, in := range map[string]string{
		"cut after text":  rBody,
		"done, no term":   rBody + doneEv,
		"unterminated":    strings.TrimSuffix(rBody, "\n\n"),
		"only an error":   rCreated + rEv("error", `,"sequence_number":1,"error":{"type":"server_error","message":"boom"}`),
		"empty":           "",
		"comments only":   ": keep-alive\n\n",
		"other event end": rBody + rEv("response.output_text.done", `,"sequence_number":8,"text":"x"`),
	} {
		runPieces(t, in, responsesOpts, func(p pieceRun) {
			if p.out != in {
				t.Fatalf("%s %s:\n got %q\nwant %q", name, p.name, p.out, in)
			}
			if !slices.Equal(p.warns, []string{ReasonNoTerminalEvent}) {
				t.Fatalf("%s %s: warnings %v, want [%s]", name, p.name, p.warns, ReasonNoTerminalEvent)
			}
			if p.r.Reply().Terminal {
				t.Fatalf("%s %s: Terminal set", name, p.name)
			}
		})
	}
}

// Some gateways add [DONE] after the terminal event: it passes, after the
// terminal event with its meta; so do events after it.
func TestResponsesStreamDoneAfterTerminal(t *testing.T) {
	term, wantTerm := rTerminal("response.completed", "completed", "")
	late := ": bye\n\n" + rEv("response.output_item.added", `,"sequence_number":9,"item":{"type":"function_call","name":"late"}`)
	runPieces(t, rBody+term+doneEv+late, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, rBody+wantTerm+doneEv+late, rWantMeta)
	})
}

// Tool names come from output items (SPEC 4.4): function_call,
// custom_tool_call and mcp_call give their name, any other *_call type its
// type without _call; message, reasoning and others give nothing.
func TestResponsesStreamToolNames(t *testing.T) {
	items := []string{
		`{"type":"reasoning","id":"rs_1","summary":[]}`,
		`{"type":"message","id":"m","name":"not_a_tool","content":[]}`,
		`{"type":"function_call","id":"fc","name":"get_weather","arguments":""}`,
		`{"type":"custom_tool_call","id":"ct","name":"grammar_tool","input":""}`,
		`{"type":"mcp_call","id":"mc","name":"mcp_lookup","server_label":"srv"}`,
		`{"type":"web_search_call","id":"ws","status":"in_progress"}`,
		`{"type":"file_search_call","id":"fs","queries":[]}`,
		`{"type":"code_interpreter_call","id":"ci"}`,
		`{"type":"image_generation_call","id":"ig"}`,
		`{"type":"computer_call","id":"cc"}`,
		`{"type":"local_shell_call","id":"ls"}`,
		`{"type":"shell_call","id":"sh"}`,
		`{"type":"apply_patch_call","id":"ap"}`,
		`{"type":"brand_new_call","id":"bn"}`,
		`{"type":"_call","id":"bare"}`,
		`{"type":"mcp_list_tools","id":"lt","tools":[]}`,
		`{"type":"function_call_output","call_id":"c","output":"x"}`,
		`{"type":"function_call","id":"fc2","name":"get_weather"}`,
	}
	var in string
	for i, it := range items {
		in += rEv("response.output_item.added", `,"sequence_number":`+itoa(int64(i))+`,"output_index":`+itoa(int64(i))+`,"item":`+it)
		in += rEv("response.output_item.done", `,"sequence_number":`+itoa(int64(i))+`,"output_index":`+itoa(int64(i))+`,"item":`+it)
	}
	term := rEv("response.completed", `,"sequence_number":99,"response":{"id":"r","output":[]}`)
	want := strings.TrimSuffix(term, "}}\n\n") + `,"meta":` + metaMark + "}}\n\n"
	tools := `{"tools_used":["get_weather","grammar_tool","mcp_lookup","web_search","file_search","code_interpreter","image_generation","computer","local_shell","shell","apply_patch","brand_new"]}`
	runPieces(t, in+term, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, in+want, tools)
	})
	// The terminal event's output items count too (a gateway may send
	// only the terminal event).
	only := rEv("response.completed", `,"sequence_number":1,"response":{"id":"r","output":[{"type":"web_search_call","id":"ws"},{"type":"function_call","name":"f"},{"type":"message","content":[]}]}`)
	runPieces(t, only, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, strings.TrimSuffix(only, "}}\n\n")+`,"meta":`+metaMark+"}}\n\n", `{"tools_used":["web_search","f"]}`)
	})
}

// Run-once content: the output_text deltas, parts of one item
// concatenated, the text of different items joined with "\n".
func TestResponsesStreamContent(t *testing.T) {
	delta := func(item, d string) string {
		return rEv("response.output_text.delta", `,"item_id":"`+item+`","output_index":0,"content_index":0,"delta":`+string(JSONString(d)))
	}
	in := rCreated +
		rEv("response.reasoning_summary_text.delta", `,"item_id":"rs","delta":"thinking"`) +
		delta("msg_1", "Hello") + delta("msg_1", " world") +
		rEv("response.output_text.delta", `,"item_id":"msg_1","content_index":1,"delta":"!"`) +
		rFCAdded +
		delta("msg_2", "") + delta("msg_2", "Second \"item\"") +
		delta("msg_3", "Third") +
		rEv("response.output_text.done", `,"item_id":"msg_3","text":"Third"`) +
		rEv("response.completed", `,"response":{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"ignored: the deltas were read"}]}]}`)
	checkContent(t, in, responsesOpts, "Hello world!\nSecond \"item\"\nThird")
	runPieces(t, in, withContent(responsesOpts), func(p pieceRun) {
		if msg, isErr := p.r.Reply().Err(); isErr {
			t.Fatalf("%s: error %q", p.name, msg)
		}
	})
}

// response.failed gives the reply's error (its response.error.message); an
// error event its message; both pass as they came (the terminal one with
// meta when there is any).
func TestResponsesStreamErrors(t *testing.T) {
	failed := rEv("response.failed", `,"sequence_number":3,"response":{"id":"r","status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}`)
	errEv := rEv("error", `,"sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota.","param":null}`)
	cases := []struct {
		name, in, want, msg string
	}{
		{"failed", rCreated + failed, rCreated + failed, "The model failed."},
		{"error then failed", rCreated + errEv + failed, rCreated + errEv + failed, "You exceeded your current quota."},
	}
	for _, c := range cases {
		runPieces(t, c.in, responsesOpts, func(p pieceRun) {
			if p.out != c.want {
				t.Fatalf("%s %s:\n got %q\nwant %q", c.name, p.name, p.out, c.want)
			}
			if msg, isErr := p.r.Reply().Err(); !isErr || msg != c.msg {
				t.Fatalf("%s %s: error %q %v, want %q", c.name, p.name, msg, isErr, c.msg)
			}
		})
	}
	// With meta to say, the failed event still gets it.
	want := rCreated + rFCAdded + strings.TrimSuffix(failed, "}}\n\n") + `,"meta":` + metaMark + "}}\n\n"
	runPieces(t, rCreated+rFCAdded+failed, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, want, `{"tools_used":["get_weather"]}`)
		if msg, _ := p.r.Reply().Err(); msg != "The model failed." {
			t.Fatalf("%s: error %q", p.name, msg)
		}
	})
}

// final_meta off: nothing added, nothing withheld.
func TestResponsesStreamFinalMetaOff(t *testing.T) {
	term, _ := rTerminal("response.completed", "completed", `,"meta":{"up":1}`)
	in := rCreated + "data: {\"meta\":{\"source\":\"gw\"}}\n\n" + rFCAdded + term + doneEv
	runPieces(t, in, func() StreamOptions { return StreamOptions{Protocol: FormatResponses} }, func(p pieceRun) {
		if p.out != in {
			t.Fatalf("%s:\n got %q\nwant %q", p.name, p.out, in)
		}
	})
}

// A terminal event whose data comes in several data: lines (joined with
// "\n" by SSE) still gets its meta, and stays an event whose data is the
// JSON object.
func TestResponsesStreamTerminalOnSeveralDataLines(t *testing.T) {
	const want = `{"type":"response.completed","sequence_number":8,"response":{"id":"r","output":[],"meta":{"tools_used":["get_weather"]}}}`
	for name, term := range map[string]string{
		"split in the object": "event: response.completed\nid: 8\ndata: {\"type\":\"response.completed\",\"sequence_number\":8,\ndata: \"response\":{\"id\":\"r\",\"output\":[]}}\n\n",
		"trailing empty line": "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":8,\"response\":{\"id\":\"r\",\"output\":[]}}\ndata:\n\n",
		"crlf":                "event: response.completed\r\ndata: {\"type\":\"response.completed\",\"sequence_number\":8,\r\ndata: \"response\":{\"id\":\"r\",\r\ndata: \"output\":[]}}\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			checkSeveralDataLines(t, rFCAdded, term, "event: response.completed", want, responsesOpts)
		})
	}
	// The lines keep their line ends, and the data its lines.
	term := "event: response.completed\r\nid: 8\r\ndata: {\"type\":\"response.completed\",\r\ndata:\"response\":{\"id\":\"r\"}}\r\n\r\n"
	exact := "event: response.completed\r\nid: 8\r\ndata: {\"type\":\"response.completed\",\r\ndata: \"response\":{\"id\":\"r\",\"meta\":" + metaMark + "}}\r\n\r\n"
	runPieces(t, rFCAdded+term, responsesOpts, func(p pieceRun) {
		checkSpliced(t, p.name, p.out, rFCAdded+exact, `{"tools_used":["get_weather"]}`)
	})
}

// checkSeveralDataLines runs before+term, term a terminal event with
// several data lines, and checks that the events before it pass as they
// came and that it still is one event, its event: line kept, whose data is
// the JSON value want.
func checkSeveralDataLines(t *testing.T, before, term, eventLine, want string, opts func() StreamOptions) {
	t.Helper()
	runPieces(t, before+term, opts, func(p pieceRun) {
		if !strings.HasPrefix(p.out, before) {
			t.Fatalf("%s: events before the terminal one changed: %q", p.name, p.out)
		}
		evs := wholeEvents([]byte(p.out[len(before):]))
		if len(evs) != 1 {
			t.Fatalf("%s: %d events after the others, want 1: %q", p.name, len(evs), p.out[len(before):])
		}
		data, ok, _ := EventData(evs[0], nil)
		if !ok {
			t.Fatalf("%s: terminal event without data: %q", p.name, evs[0])
		}
		if !strings.Contains(string(evs[0]), eventLine) {
			t.Fatalf("%s: %q lost: %q", p.name, eventLine, evs[0])
		}
		if !sameJSON(t, string(data), want) {
			t.Fatalf("%s: terminal data\n got %s\nwant %s", p.name, data, want)
		}
	})
}

// A terminal event larger than max_event_bytes passes uninspected, as
// every such event (SPEC 4.3): the stream then has no terminal event the
// module read, and gets no meta.
func TestResponsesStreamOversizeTerminal(t *testing.T) {
	term := rEv("response.completed", `,"response":{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"`+strings.Repeat("x", 300)+`"}]}]}`)
	in := rFCAdded + term
	runPieces(t, in, func() StreamOptions {
		o := responsesOpts()
		o.MaxEvent = 256
		return o
	}, func(p pieceRun) {
		if p.out != in {
			t.Fatalf("%s:\n got %q\nwant %q", p.name, p.out, in)
		}
		if !slices.Equal(p.warns, []string{ReasonEventTooLarge, ReasonNoTerminalEvent}) {
			t.Fatalf("%s: warnings %v", p.name, p.warns)
		}
	})
}
