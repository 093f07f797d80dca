package translate

import (
	"strings"
	"testing"
	"unsafe"
)

// TestViews: a view has the bytes it was made of, in the same memory, and
// an empty one is "" or nil whatever it was made of.
func TestViews(t *testing.T) {
	if strView(nil) != "" || strView([]byte{}) != "" || bytesView("") != nil {
		t.Fatal("an empty view is not empty")
	}
	b := []byte("abc")
	s := strView(b)
	if s != "abc" || unsafe.StringData(s) != &b[0] {
		t.Fatal("strView copies or changes its bytes")
	}
	if v := bytesView(s); string(v) != "abc" || &v[0] != &b[0] || len(v) != 3 {
		t.Fatal("bytesView copies or changes its string")
	}
	buf := make([]byte, 4)
	if s := StringIn(buf, "abc"); s != "abc" || unsafe.StringData(s) != &buf[0] {
		t.Fatal("StringIn does not view its buffer")
	}
	if s := StringIn(buf, "abcde"); s != "abcde" || string(buf) != "abc\x00" {
		t.Fatal("StringIn writes past its buffer")
	}
	checkMetaViews(t, []string{"a", "b", "a", strings.Repeat("n", 300), "c"})
	var r Reply
	r.setModel("gpt-4o")
	r.setModel("other")
	if r.Model != "gpt-4o" {
		t.Fatalf("the record's model is %q", r.Model)
	}
}

// FuzzViews: the tool names a Meta hands out (views of its comma-joined
// text) stay what they were when more names are added, past every growth
// of the text; StringIn reads what it was given.
func FuzzViews(f *testing.F) {
	f.Add("get_weather,search,get_weather," + strings.Repeat("x", 100))
	f.Add(",,a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t")
	f.Fuzz(func(t *testing.T, names string) {
		var buf [48]byte
		if s := StringIn(buf[:], names); s != names {
			t.Fatalf("StringIn(%q) = %q", names, s)
		}
		checkMetaViews(t, strings.Split(names, ","))
	})
}

// checkMetaViews adds names to a Meta and checks after each that every
// name handed out so far, and the joined text, read what they read when
// handed out.
func checkMetaViews(t *testing.T, names []string) {
	t.Helper()
	var m Meta
	var got []string // the views as handed out
	var want []string
	joined := ""
	for _, n := range names {
		// A name from a buffer the caller then writes over: Meta keeps its
		// own copy.
		buf := []byte(n)
		m.AddTool(strView(buf))
		for i := range buf {
			buf[i] = '#'
		}
		if tools := m.Tools(); len(tools) > len(got) {
			got = append(got, tools[len(tools)-1])
			want = append(want, n)
			joined = toolsJoined(&m)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("tool %d reads %q, was %q", i, got[i], want[i])
			}
		}
		if joined != strings.Join(want, ",") {
			t.Fatalf("joined tools read %q, want %q", joined, strings.Join(want, ","))
		}
	}
}
