package translate

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/llm-meta/llm_meta/internal/jsonscan"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

var allModels = RequestOptions{StructuredModels: []string{"*"}}

// rawValues maps each top-level key of a JSON object to its raw text.
func rawValues(t *testing.T, b []byte) map[string]string {
	t.Helper()
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		t.Fatalf("not an object: %s", b)
	}
	m := map[string]string{}
	r.ForEach(func(k, v gjson.Result) bool {
		m[k.Str] = v.Raw
		return true
	})
	return m
}

func TestRewriteRequestFlagsRemovedWhateverTheirValue(t *testing.T) {
	values := []string{`true`, `false`, `"true"`, `1`, `0`, `null`, `{}`, `[true]`, `"yes"`}
	for _, flag := range requestFlags {
		for _, v := range values {
			for _, pos := range []string{"first", "middle", "last", "only"} {
				var body string
				switch pos {
				case "first":
					body = `{"` + flag + `":` + v + `,"model":"gpt-4o-mini","messages":[{"role":"user","content":"caf\u00e9 1.0e0"}],"temperature":1.50}`
				case "middle":
					body = `{"model":"gpt-4o-mini","` + flag + `":` + v + `,"messages":[{"role":"user","content":"caf\u00e9 1.0e0"}],"temperature":1.50}`
				case "last":
					body = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"caf\u00e9 1.0e0"}],"temperature":1.50,"` + flag + `":` + v + `}`
				case "only":
					body = `{"` + flag + `":` + v + `}`
				}
				in := []byte(body)
				res, ok := RewriteRequest(in, RequestOptions{})
				name := flag + "=" + v + "/" + pos
				if !ok {
					t.Fatalf("%s: ok = false", name)
				}
				if string(in) != body {
					t.Fatalf("%s: input modified", name)
				}
				if !res.Changed || sameSlice(res.Body, in) {
					t.Fatalf("%s: Changed=%v", name, res.Changed)
				}
				if !json.Valid(res.Body) {
					t.Fatalf("%s: invalid body %s", name, res.Body)
				}
				got, want := rawValues(t, res.Body), rawValues(t, in)
				delete(want, flag)
				if len(got) != len(want) {
					t.Fatalf("%s: keys %v, want %v", name, got, want)
				}
				for k, w := range want {
					if got[k] != w {
						t.Fatalf("%s: %s = %s, want %s exactly", name, k, got[k], w)
					}
				}
				wantRunOnce := (flag == "run_once" || flag == "return_final_only") && v == "true"
				if res.RunOnce != wantRunOnce {
					t.Fatalf("%s: RunOnce = %v", name, res.RunOnce)
				}
				if res.Structured && v != "true" {
					t.Fatalf("%s: Structured without enable_structured_output:true", name)
				}
			}
		}
	}
}

func TestRewriteRequestAllFlags(t *testing.T) {
	in := []byte("{\n  \"run_once\": true,\n  \"model\": \"m\",\n  \"return_final_only\": false,\n  \"messages\": [],\n  \"enable_structured_output\": false\n}")
	res, ok := RewriteRequest(in, allModels)
	if !ok || !res.Changed || !res.RunOnce || res.Structured || res.Model != "m" {
		t.Fatalf("ok=%v res=%+v", ok, res)
	}
	if !json.Valid(res.Body) || !jsonscan.Equal(res.Body, []byte(`{"model":"m","messages":[]}`)) {
		t.Fatalf("body %s", res.Body)
	}
	for _, f := range requestFlags {
		if strings.Contains(string(res.Body), f) {
			t.Fatalf("%s still in %s", f, res.Body)
		}
	}

	res, _ = RewriteRequest([]byte(`{"return_final_only":true}`), RequestOptions{})
	if !res.RunOnce || string(res.Body) != `{}` {
		t.Fatalf("return_final_only: %+v %s", res, res.Body)
	}
}

func TestRewriteRequestNothingToChange(t *testing.T) {
	for _, body := range []string{
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}`,
		"{\n \"model\" : \"x\" ,\n \"stream\": true }\n",
		`{}`,
		`{"messages":[{"role":"user","content":"run_once: true"}],"metadata":{"run_once":true}}`,
		`{"Run_Once":true}`,
	} {
		in := []byte(body)
		res, ok := RewriteRequest(in, RequestOptions{StructuredModels: []string{"*"}, MaxPromptChars: 0})
		if !ok {
			t.Fatalf("%s: ok = false", body)
		}
		if res.Changed || !sameSlice(res.Body, in) || res.RunOnce || res.Structured {
			t.Fatalf("%s: res %+v", body, res)
		}
		if !res.Meta.Empty() {
			t.Fatalf("%s: meta %s", body, res.Meta.JSON())
		}
	}
}

func TestRewriteRequestNotAnObject(t *testing.T) {
	for _, body := range []string{``, `[]`, `[{"run_once":true}]`, `"x"`, `{"run_once":true`, `null`, `{"a":1}x`} {
		in := []byte(body)
		res, ok := RewriteRequest(in, allModels)
		if ok {
			t.Fatalf("%q: ok = true", body)
		}
		if !sameSlice(res.Body, in) || res.Changed || res.RunOnce {
			t.Fatalf("%q: res %+v", body, res)
		}
	}
}

func TestRewriteRequestModel(t *testing.T) {
	in := []byte(`{"model":"gpt-4o-mini","messages":[]}`)
	res, _ := RewriteRequest(in, RequestOptions{})
	if res.Model != "gpt-4o-mini" {
		t.Fatalf("Model = %q", res.Model)
	}
	// The model outlives the request buffer (it names the model of the
	// converted chunks): it must not point into it.
	copy(in, strings.Repeat("X", len(in)))
	if res.Model != "gpt-4o-mini" {
		t.Fatalf("Model changed with the caller's buffer: %q", res.Model)
	}
	for _, body := range []string{`{"model":1}`, `{"model":null}`, `{}`} {
		if res, _ := RewriteRequest([]byte(body), RequestOptions{}); res.Model != "" {
			t.Fatalf("%s: Model = %q", body, res.Model)
		}
	}
}

func TestRewriteRequestStructuredFlag(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		globs []string
		// wantOff: structured mode must be off. When false, the outcome
		// depends on ApplyStructuredRequest (owned elsewhere) and only the
		// removal of the flag is checked.
		wantOff bool
	}{
		{"model not listed", `{"model":"claude-3","enable_structured_output":true,"messages":[]}`, []string{"gpt-*"}, true},
		{"no globs", `{"model":"gpt-4o","enable_structured_output":true,"messages":[]}`, nil, true},
		{"no model, glob needs one", `{"enable_structured_output":true,"messages":[]}`, []string{"gpt-*"}, true},
		{"response_format present", `{"model":"gpt-4o","enable_structured_output":true,"response_format":{"type":"json_object"},"messages":[]}`, []string{"*"}, true},
		{"response_format null is present", `{"model":"gpt-4o","response_format":null,"enable_structured_output":true}`, []string{"*"}, true},
		{"flag false", `{"model":"gpt-4o","enable_structured_output":false,"messages":[]}`, []string{"*"}, true},
		{"flag not a boolean", `{"model":"gpt-4o","enable_structured_output":"true","messages":[]}`, []string{"*"}, true},
		{"bad glob matches nothing", `{"model":"gpt-4o","enable_structured_output":true}`, []string{"[", "gpt-5*"}, true},
		{"model matches", `{"model":"gpt-4o","enable_structured_output":true,"messages":[]}`, []string{"claude-*", "gpt-*"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []byte(c.body)
			res, ok := RewriteRequest(in, RequestOptions{StructuredModels: c.globs})
			if !ok || !res.Changed || !json.Valid(res.Body) {
				t.Fatalf("ok=%v res=%+v", ok, res)
			}
			if gjson.GetBytes(res.Body, "enable_structured_output").Exists() {
				t.Fatalf("flag not removed: %s", res.Body)
			}
			if c.wantOff {
				if res.Structured {
					t.Fatal("Structured = true")
				}
				want := rawValues(t, in)
				delete(want, "enable_structured_output")
				got := rawValues(t, res.Body)
				if len(got) != len(want) {
					t.Fatalf("keys changed: %s", res.Body)
				}
				for k, v := range want {
					if got[k] != v {
						t.Fatalf("%s changed: %s", k, res.Body)
					}
				}
			}
			if res.RunOnce {
				t.Fatal("RunOnce")
			}
		})
	}
}

func TestModelMatchesAndValidGlob(t *testing.T) {
	if !modelMatches([]string{"gpt-*"}, "gpt-4o") || modelMatches([]string{"gpt-*"}, "o1") {
		t.Fatal("gpt-*")
	}
	if !modelMatches([]string{"*"}, "") || !modelMatches([]string{"*"}, "anything") {
		t.Fatal("*")
	}
	// SPEC 1: "*" and "?" match "/" too, for routed names.
	for g, want := range map[string]bool{"*": true, "openai/*": true, "*/*": true, "*gpt-4o": true,
		"openai?gpt-4o": true, "anthropic/*": false, "openai/gpt-4o-*": false, "[o]penai/*": true} {
		if got := modelMatches([]string{g}, "openai/gpt-4o"); got != want {
			t.Errorf("%q matches openai/gpt-4o: %v, want %v", g, got, want)
		}
	}
	if modelMatches(nil, "x") {
		t.Fatal("nil globs")
	}
	for g, ok := range map[string]bool{"*": true, "gpt-?o": true, "[a-z]*": true, "[": false, "a\\": false} {
		if ValidGlob(g) != ok {
			t.Errorf("ValidGlob(%q) != %v", g, ok)
		}
	}
}

// checkRequestUnchanged: when RequestUnchanged says a body has nothing to
// change, RewriteRequest agrees (same bytes, no flag) and RequestModel reads
// the model it reads.
func checkRequestUnchanged(t *testing.T, body []byte, opts RequestOptions) {
	t.Helper()
	if !RequestUnchanged(body, opts) {
		return
	}
	res, ok := RewriteRequest(body, opts)
	if res.Changed || res.RunOnce || res.Structured || res.WithholdUsage || !res.Meta.Empty() || !bytes.Equal(res.Body, body) {
		t.Fatalf("RequestUnchanged, yet RewriteRequest changed %s into %s", body, res.Body)
	}
	if m := RequestModel(body); m != res.Model || (!ok && m != "") {
		t.Fatalf("%s: RequestModel %q, RewriteRequest %q (ok %v)", body, m, res.Model, ok)
	}
}

var requestUnchangedSeeds = []string{
	`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}],"stream":true}`,
	`{"model":"a","model":"b"}`, `{"model":1}`, `{"a":{"model":"inner"}}`, `["model"]`, `{"model":"x"`, ``,
	`{"messages":[{"role":"user","content":"say \"run_once\" please"}]}`,
	`{"model":"m","run_once":false}`, `{"return_final_only":true}`, `{"enable_structured_output":true,"model":"m"}`,
	`{"\u0072un_once":true}`, `{"model":"caf\u00e9"}`, `{"model":"m","x":"run_once","y":"enable_structured_output"}`,
	`"`, `{"a":"\"run_once\""}`,
	`{"\u0072un_once":true,"run_once":false,"model":"m","response\u005fformat":{},"enable_structured_output":true}`,
	`{"stream":true,"stream\u005foptions":{"include\u005fusage":false},"stream_options":{"x":1}}`,
	// Streams, which the module asks for their usage unless they do.
	`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`,
	`{"stream":true,"stream_options":{"include_usage":false}}`,
	`{"stream":true,"stream_options":{"include_usage":"true"}}`,
	`{"stream":true,"stream_options":{"include_usage":true},"stream_options":{}}`,
	`{"stream":true,"stream_options":{},"stream_options":{"include_usage":true}}`,
	`{"stream":true,"stream_options":{"include_usage":false,"include_usage":true}}`,
	`{"stream":true,"stream_options":{"include_usage":true,"include_usage":false}}`,
	`{"stream":true,"stream_options":{"x":{"include_usage":true}}}`,
	`{"stream":true,"meta":{"stream_options":{"include_usage":true}}}`,
	`{"stream":true,"stream_options":[{"include_usage":true}]}`,
	`{"stream":true,"stream_options":{"include_usage":true}`,
	`{"stream" : true , "stream_options" : { "include_usage" : true } }`,
	`[{"stream":true,"stream_options":{"include_usage":true}}]`,
}

// requestUnchangedOpts are the options RequestUnchanged is held to
// RewriteRequest under: structured mode, trimming, stream usage asked for.
var requestUnchangedOpts = []RequestOptions{
	{StructuredModels: []string{"*"}},
	{MaxPromptChars: 1},
	{StreamUsage: true},
	{StreamUsage: true, StructuredModels: []string{"*"}},
}

func TestRequestUnchanged(t *testing.T) {
	for _, s := range requestUnchangedSeeds {
		for _, opts := range requestUnchangedOpts {
			checkRequestUnchanged(t, []byte(s), opts)
			checkRewriteRequestRef(t, []byte(s), opts)
		}
	}
	// Which bodies take the fast path at all: an answer of false is always
	// safe, so check that the usual request does get true, and that every
	// flag, an escape or trimming turns it off.
	for s, want := range map[string]bool{
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}],"stream":true}`: true,
		`{"model":"m","x":"run_once"}`:            false, // looks like the key: parsed, to be safe
		`{"model":"m","run_once":false}`:          false,
		`{"return_final_only":true}`:              false,
		`{"enable_structured_output":true}`:       false,
		`{"model":"m","content":"caf\u00e9"}`:     false,
		`{"a":"\"run_once\""}`:                    true, // an escaped quote starts no key
		`{"model":"m","messages":[],"run_once"}`:  false,
		`{"model":"m","messages":[],"run_onc":1}`: true,
	} {
		if got := RequestUnchanged([]byte(s), RequestOptions{}); got != want {
			t.Errorf("RequestUnchanged(%s) = %v, want %v", s, got, want)
		}
	}
	if RequestUnchanged([]byte(`{"model":"m"}`), RequestOptions{MaxPromptChars: 10}) {
		t.Error("RequestUnchanged with trimming on")
	}
	// A chat stream is unchanged only when it already asks for its usage
	// where RewriteRequest looks (its last top-level stream_options, that
	// object's last include_usage, the literal true).
	usage := RequestOptions{StreamUsage: true}
	for s, want := range map[string]bool{
		`{"model":"m","stream":true,"messages":[]}`:                                         false,
		`{"model":"m","stream":false,"messages":[]}`:                                        true,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`: true,
		`{"stream" : true , "stream_options" : { "include_usage" : true } }`:                true,
		`{"stream":true,"stream_options":{"include_usage":false}}`:                          false,
		`{"stream":true,"stream_options":{"include_usage":"true"}}`:                         false,
		`{"stream":true,"stream_options":{"include_usage":true},"stream_options":{}}`:       false,
		`{"stream":true,"stream_options":{},"stream_options":{"include_usage":true}}`:       true,
		`{"stream":true,"stream_options":{"include_usage":false,"include_usage":true}}`:     true,
		`{"stream":true,"stream_options":{"include_usage":true,"include_usage":false}}`:     false,
		`{"stream":true,"stream_options":{"x":{"include_usage":true}}}`:                     false,
		`{"stream":true,"meta":{"stream_options":{"include_usage":true}}}`:                  false,
		`{"stream":true,"stream_options":{"include_usage":true}`:                            false, // not JSON
		`[{"stream":true,"stream_options":{"include_usage":true}}]`:                         false,
		`{"stream":true,"stream_options":{"include_usage":true},"run_once":true}`:           false,
		`{"stream":true,"stream_options":{"include_usage":true},"x":"caf\u00e9"}`:           false,
	} {
		if got := RequestUnchanged([]byte(s), usage); got != want {
			t.Errorf("RequestUnchanged(%s) with stream usage = %v, want %v", s, got, want)
		}
	}
}

// requestModelGJSON is RequestModel as gjson reads it: the last top-level
// "model" whose value is a string.
func requestModelGJSON(body []byte) string {
	root, isObj := jsonObject(string(body))
	if !isObj {
		return ""
	}
	model := ""
	root.ForEach(func(k, v gjson.Result) bool {
		if k.Str == "model" && v.Type == gjson.String {
			model = v.Str
		}
		return true
	})
	return model
}

func TestRequestModel(t *testing.T) {
	for _, s := range append(requestUnchangedSeeds,
		`{"model":"a","model":2}`, `{"mo\u0064el":"escaped key"}`, `{"model":"tab\there"}`,
		`{"model":{"model":"nested"}}`, ` {"model" : "spaced" } `, `{"model":null}`) {
		if got, want := RequestModel([]byte(s)), requestModelGJSON([]byte(s)); got != want {
			t.Errorf("RequestModel(%s) = %q, gjson reads %q", s, got, want)
		}
	}
}

// checkAppendMember: where RewriteRequest asks a stream for its usage by
// appending stream_options (the body had none), the body is what sjson
// makes of it, byte for byte, and the rest is the reference's reading.
func checkAppendMember(t *testing.T, body []byte) {
	t.Helper()
	opts := RequestOptions{StreamUsage: true}
	checkRewriteRequestRef(t, body, opts)
	res, ok := RewriteRequest(body, opts)
	if !ok || !res.WithholdUsage || gjson.GetBytes(body, "stream_options").Exists() {
		return
	}
	base := RemoveKeys(body, requestFlags[:]) // the flags go first
	if want, err := sjson.SetRawBytes(base, "stream_options", []byte(`{"include_usage":true}`)); err != nil || !bytes.Equal(res.Body, want) {
		t.Fatalf("RewriteRequest(%s) asked for the usage as %s; sjson: %s (%v)", body, res.Body, want, err)
	}
}

var appendMemberSeeds = []string{
	`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
	` { "stream" : true } `, `{"stream":true }`, "{\n\t\"stream\": true\n}\n", `{"stream":true,"stream":false}`,
	`{"stream":false,"stream":true,"model":"a","model":1}`, `{"x":{"stream":true}}`, `{"stream":"true"}`,
	`{"stream":true,"messages":[{"content":"run_once"}]}`, `{"stream":true,"run_once":false}`,
	`{"stream":true,"stream_options":null}`, `{"stream":true,"x":"stream_options"}`, `{"stream":true`,
	`{"stream\u0022":true}`, `{"stre\u0061m":true}`,
}

func TestAppendMember(t *testing.T) {
	for _, s := range appendMemberSeeds {
		checkAppendMember(t, []byte(s))
	}
}

func FuzzAppendMember(f *testing.F) {
	for _, s := range appendMemberSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkAppendMember)
}

// checkRewriteRequestRef: RewriteRequest answers what the reference reads.
func checkRewriteRequestRef(t *testing.T, body []byte, opts RequestOptions) {
	t.Helper()
	got, ok := RewriteRequest(body, opts)
	want, wok := rewriteRequestRef(body, opts)
	if ok != wok || !bytes.Equal(got.Body, want.Body) || got.Changed != want.Changed || got.Model != want.Model ||
		got.RunOnce != want.RunOnce || got.Structured != want.Structured || got.WithholdUsage != want.WithholdUsage ||
		!bytes.Equal(got.Meta.JSON(), want.Meta.JSON()) {
		t.Fatalf("RewriteRequest(%s) = %+v, %v; the reference %+v, %v", body, got, ok, want, wok)
	}
}

// rewriteRequestRef is RewriteRequest with the top level read by gjson's
// ForEach, as the module read requests before readRequestTop: the
// reference RewriteRequest is held to.
func rewriteRequestRef(body []byte, opts RequestOptions) (RequestResult, bool) {
	s := string(body)
	root, isObj := jsonObject(s)
	if !isObj {
		return RequestResult{Body: body}, false
	}
	top := requestTop{streamOptions: -1}
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "model":
			if v.Type == gjson.String {
				top.model = v.Str
			}
		case "stream":
			top.stream = v.Type == gjson.True
		case "stream_options":
			top.streamOptions = v.Index
		}
		if i := slices.Index(requestFlags[:], k.Str); i >= 0 {
			top.flags, top.flagTrue[i] = true, v.Type == gjson.True
		}
		return true
	})
	top.responseFormat = root.Get("response_format").Exists()
	return rewriteRequestTop(body, &top, opts), true
}

func FuzzRequestUnchanged(f *testing.F) {
	for _, s := range requestUnchangedSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, opts := range requestUnchangedOpts {
			checkRequestUnchanged(t, body, opts)
			checkRewriteRequestRef(t, body, opts)
		}
		if got, want := RequestModel(body), requestModelGJSON(body); got != want {
			t.Fatalf("RequestModel(%q) = %q, gjson reads %q", body, got, want)
		}
	})
}
