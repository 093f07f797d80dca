package jsonscan

import (
	"fmt"
	"strings"
	"testing"
)

// TestScanHooks: Scan tells its caller of each member and each container
// it wants, each close it asked for, the string value it asked for, and
// nothing of what a container it wants Nothing of holds.
func TestScanHooks(t *testing.T) {
	doc := `{"a":"x","b":{"c":[1,{"d":"y"}],"e":"z"},"f":{"g":{}},"h":[]}`
	var got []string
	h := Hooks{
		Member: func(key string, v, depth int, esc bool) bool {
			got = append(got, fmt.Sprintf("member %s@%d %v", key, depth, esc))
			return key == `"a"` || key == `"d"`
		},
		Open: func(depth int, bracket byte) Want {
			got = append(got, fmt.Sprintf("open %c@%d", bracket, depth))
			switch {
			case depth == 2 && bracket == '{' && strings.Contains(strings.Join(got, ","), `"f"`):
				return Nothing
			case bracket == '[':
				return WithClose
			}
			return Members
		},
		Close:  func(depth int) { got = append(got, fmt.Sprintf("close@%d", depth)) },
		String: func(raw string, v int) { got = append(got, fmt.Sprintf("string %s@%d", raw, v)) },
	}
	if !Scan(doc, &h) {
		t.Fatal("not valid")
	}
	want := []string{
		"open {@1", `member "a"@1 false`, `string "x"@5`, `member "b"@1 false`, "open {@2",
		`member "c"@2 false`, "open [@3", "open {@4", `member "d"@4 false`, `string "y"@26`, "close@3", `member "e"@2 false`,
		`member "f"@1 false`, "open {@2", `member "h"@1 false`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if Scan(`{"a":[1,}`, &h) || Scan(`{"a\u0062":1}x`, &h) {
		t.Fatal("an invalid document is valid")
	}
}
