package translate

import "testing"

// WithImage makes the last user message's content a text part and the
// image, whatever that content was; parts already there are kept.
func TestWithImage(t *testing.T) {
	const image = `{"image_url":{"url":"u"},"type":"image_url"}`
	cases := []struct{ content, want string }{
		{`"hi"`, `[{"text":"hi","type":"text"},` + image + `]`},
		{`1`, `[{"text":"","type":"text"},` + image + `]`},
		{`null`, `[{"text":"","type":"text"},` + image + `]`},
		{`{"a":"b"}`, `[{"text":"","type":"text"},` + image + `]`},
		{`[{"type":"text","text":"x"}]`, `[{"type":"text","text":"x"},` + image + `]`},
	}
	for _, c := range cases {
		body := `{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"},{"role":"user","content":` + c.content + `}]}`
		want := `{"messages":[{"role":"user","content":"first"},{"role":"assistant","content":"a"},{"role":"user","content":` + c.want + `}]}`
		if got := string(WithImage([]byte(body), "u")); got != want {
			t.Errorf("content %s: got %s, want %s", c.content, got, want)
		}
	}
	if body := `{"messages":[{"role":"system","content":"s"}]}`; string(WithImage([]byte(body), "u")) != body {
		t.Errorf("a body without a user message changed")
	}
}
