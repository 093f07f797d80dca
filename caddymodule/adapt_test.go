package caddymodule

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	// The golden Caddyfiles use encode, route, handle, respond and
	// reverse_proxy next to llm_meta.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

var updateAdapt = flag.Bool("update-adapt", false, "rewrite the expected JSON of testdata/caddyfile_adapt/*.caddyfiletest")

// TestCaddyfileAdapt adapts every testdata/caddyfile_adapt/*.caddyfiletest
// the way Caddy's own caddytest/integration/caddyfile_adapt_test.go does:
// the file is a Caddyfile, a line "----------", then the expected JSON
// (tab-indented), or an expected error substring when it does not start with
// "{". No server is started.
func TestCaddyfileAdapt(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "caddyfile_adapt")
	files, err := filepath.Glob(filepath.Join(dir, "*.caddyfiletest"))
	must(t, err, "listing %s", dir)
	if len(files) == 0 {
		t.Fatalf("no *.caddyfiletest files in %s", dir)
	}
	crlf := regexp.MustCompile(`\r?\n`)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".caddyfiletest"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			must(t, err, "reading %s", file)
			text := crlf.ReplaceAllString(string(data), "\n")
			caddyfileText, expected, ok := strings.Cut(text, "\n----------\n")
			if !ok {
				t.Fatalf("%s has no ---------- line", file)
			}
			caddyfileText = strings.TrimSpace(caddyfileText) + "\n"
			expected = strings.TrimSpace(expected)

			out, warnings, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(caddyfileText), nil)
			for _, w := range warnings {
				t.Errorf("adapt warning: line %d: %s: %s", w.Line, w.Directive, w.Message)
			}

			if !strings.HasPrefix(expected, "{") {
				// An error case: the adapter must refuse the Caddyfile with a
				// message that contains the expected text.
				if err == nil {
					t.Fatalf("adapted without error, want an error containing %q; got:\n%s", expected, out)
				}
				if !strings.Contains(err.Error(), expected) {
					t.Fatalf("error = %q\nwant it to contain %q", err, expected)
				}
				return
			}
			if err != nil {
				t.Fatalf("adapting: %v", err)
			}
			var got bytes.Buffer
			must(t, json.Indent(&got, out, "", "\t"), "indenting the adapted JSON")
			if *updateAdapt {
				must(t, os.WriteFile(file, []byte(strings.TrimSpace(caddyfileText)+"\n----------\n"+got.String()+"\n"), 0o644), "updating %s", file)
				return
			}
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(expected), "", "\t"); err != nil {
				t.Fatalf("expected JSON in %s is not valid: %v", file, err)
			}
			if got.String() != want.String() {
				t.Errorf("adapted JSON differs\n%s", lineDiff(want.String(), got.String()))
			}
		})
	}
}

// lineDiff is a small line diff for test failures: lines only in want with
// "-", lines only in got with "+" (a longest-common-subsequence walk).
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var sb strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			sb.WriteString("  " + a[i] + "\n")
			i++
			j++
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+ " + b[j] + "\n")
			j++
		default:
			sb.WriteString("- " + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}
