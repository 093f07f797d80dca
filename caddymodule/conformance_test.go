package caddymodule

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/llm-meta/llm_meta/internal/casefile"
)

// TestConformance runs every *.txtar case under testdata/conformance/ and
// under each directory of LLM_META_CONFORMANCE (a ':'-separated list,
// relative paths taken from the repository root), as the README of the
// shared conformance folder defines: Caddy in-process, llm_meta then
// reverse_proxy to a recording upstream, each case with the upstream body
// written whole and in 1–7-byte pieces.
func TestConformance(t *testing.T) {
	dirs := []string{filepath.Join(repoRoot(t), "testdata", "conformance")}
	for _, d := range strings.Split(os.Getenv("LLM_META_CONFORMANCE"), ":") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			if _, err := os.Stat(filepath.Join(repoRoot(t), d)); err == nil {
				d = filepath.Join(repoRoot(t), d)
			}
		}
		dirs = append(dirs, d)
	}
	pending, err := casefile.LoadPending(filepath.Join(dirs[0], "PENDING"))
	must(t, err, "pending cases")
	ran := 0
	seen := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
		must(t, err, "listing %s", dir)
		if len(files) == 0 && dir != dirs[0] {
			t.Errorf("conformance directory %s has no cases", dir)
		}
		sort.Strings(files)
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".txtar")
			reason, isPending := pending[filepath.Base(f)]
			seen[filepath.Base(f)] = true
			t.Run(name, func(t *testing.T) {
				if isPending {
					runPendingCase(t, f, reason)
					return
				}
				runCase(t, f)
			})
			ran++
		}
	}
	if ran == 0 {
		t.Fatal("no conformance cases found")
	}
	// PENDING also names cases of the shared folder, so a stale line can
	// only be told when that folder is part of the run: without
	// LLM_META_CONFORMANCE (a fresh clone) a line for a case not here is
	// not an error.
	for name := range pending {
		if !seen[name] && len(dirs) > 1 {
			t.Errorf("PENDING lists %s, which is in none of the case folders: remove it", name)
		}
	}
}

// runPendingCase runs a case listed in PENDING: it must still fail (in the
// whole run or the one in pieces); once it passes, the run fails until the
// line is removed, so the list only shrinks.
func runPendingCase(t *testing.T, file, reason string) {
	rec := casefile.Recorder{TB: t}
	rec.Run(func() { runCaseWith(t, &rec, file) })
	if len(rec.Failures) == 0 {
		t.Errorf("%s passes now: remove it from testdata/conformance/PENDING (listed for: %s)", filepath.Base(file), reason)
		return
	}
	t.Logf("pending (%s), fails as expected: %s", reason, firstFailureLine(rec.Failures[0]))
}

func firstFailureLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// repoRoot is the folder holding go.mod.
func repoRoot(t testing.TB) string {
	dir, err := os.Getwd()
	must(t, err, "getwd")
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's folder")
		}
		dir = parent
	}
}

// archive is a parsed txtar file.
type archive map[string][]byte

func parseTxtar(data []byte) archive {
	a := archive{}
	var name string
	var cur []byte
	inFile := false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		trim := bytes.TrimRight(line, "\r\n")
		if bytes.HasPrefix(trim, []byte("-- ")) && bytes.HasSuffix(trim, []byte(" --")) && len(trim) >= 6 {
			if inFile {
				a[name] = cur
			}
			name = strings.TrimSpace(string(trim[3 : len(trim)-3]))
			cur = []byte{}
			inFile = true
			continue
		}
		if inFile {
			cur = append(cur, line...)
		}
	}
	if inFile {
		a[name] = cur
	}
	return a
}

// recorded is what the upstream received.
type recorded struct {
	mu     sync.Mutex
	called bool
	path   string
	body   []byte
}

// caseUpstream answers with upstream.http, whole or in 1–7-byte pieces.
type caseUpstream struct {
	status  int
	header  http.Header
	body    []byte
	pieces  bool
	seed    int64
	request recorded
}

func (u *caseUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.request.mu.Lock()
	u.request.called = true
	u.request.path = r.URL.RequestURI()
	u.request.body = body
	u.request.mu.Unlock()
	for k, vs := range u.header {
		w.Header()[k] = vs
	}
	w.WriteHeader(u.status)
	if !u.pieces {
		_, _ = w.Write(u.body)
		return
	}
	rc := http.NewResponseController(w)
	rng := rand.New(rand.NewSource(u.seed))
	for b := u.body; len(b) > 0; {
		n := 1 + rng.Intn(7)
		if n > len(b) {
			n = len(b)
		}
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		_ = rc.Flush()
		b = b[n:]
	}
}

// parseHead splits a raw HTTP message into its first line, headers and body.
func parseHead(raw []byte) (first string, hdr http.Header, body []byte) {
	hdr = http.Header{}
	sep := bytes.Index(raw, []byte("\n\n"))
	head := raw
	if sep >= 0 {
		head, body = raw[:sep], raw[sep+2:]
	}
	lines := strings.Split(strings.ReplaceAll(string(head), "\r", ""), "\n")
	first = lines[0]
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			hdr.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return first, hdr, body
}

const defaultCaseRequest = "POST /v1/chat/completions HTTP/1.1\nContent-Type: application/json\n\n" +
	`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}` + "\n"

// caseT is what checking a case needs of a *testing.T; a pending case is
// checked with a casefile.Recorder instead.
type caseT interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

func runCase(t *testing.T, file string) { runCaseWith(t, nil, file) }

// runCaseWith runs a case; with rec set (a pending case), every check
// reports to rec instead of t, and both runs go on to the end.
func runCaseWith(t *testing.T, rec *casefile.Recorder, file string) {
	var c testing.TB = t
	if rec != nil {
		c = rec
	}
	data, err := os.ReadFile(file)
	must(t, err, "reading case")
	a := parseTxtar(data)
	upRaw, ok := a["upstream.http"]
	if !ok {
		t.Fatal("case has no upstream.http")
	}
	statusLine, upHeader, upBody := parseHead(upRaw)
	parts := strings.SplitN(statusLine, " ", 3)
	if len(parts) < 2 {
		t.Fatalf("bad upstream status line %q", statusLine)
	}
	status, err := strconv.Atoi(parts[1])
	must(t, err, "upstream status")
	h := fnv.New64a()
	h.Write([]byte(file))
	up := &caseUpstream{status: status, header: upHeader, body: upBody, seed: int64(h.Sum64())}
	srv := httptest.NewServer(up)
	defer srv.Close()
	base := loadCaddy(c, llmMeta(c, a["config.json"]), proxyTo(srv.Listener.Addr().String()))

	for _, pieces := range []bool{false, true} {
		name := "whole"
		if pieces {
			name = "pieces"
		}
		run := func(c caseT) {
			up.pieces = pieces
			up.request.mu.Lock()
			up.request.called, up.request.path, up.request.body = false, "", nil
			up.request.mu.Unlock()
			checkCase(c, a, base, up)
		}
		if rec != nil {
			rec.Run(func() { run(c) })
			continue
		}
		t.Run(name, func(t *testing.T) { run(t) })
	}
}

func checkCase(t caseT, a archive, base string, up *caseUpstream) {
	reqRaw, ok := a["request.http"]
	if !ok {
		reqRaw = []byte(defaultCaseRequest)
	}
	reqLine, reqHeader, reqBody := parseHead(reqRaw)
	reqBody = bytes.TrimSuffix(reqBody, []byte("\n"))
	fields := strings.Fields(reqLine)
	if len(fields) < 2 {
		t.Fatalf("bad request line %q", reqLine)
	}
	var body io.Reader
	if len(reqBody) > 0 {
		body = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequest(fields[0], base+fields[1], body)
	must(t, err, "building request")
	for k, vs := range reqHeader {
		if strings.EqualFold(k, "Host") {
			req.Host = vs[0]
			continue
		}
		req.Header[k] = vs
	}
	resp, err := testClient.Do(req)
	must(t, err, "request through Caddy")
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	must(t, err, "reading the reply")

	isStream := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	up.request.mu.Lock()
	rec := struct {
		called bool
		path   string
		body   []byte
	}{up.request.called, up.request.path, up.request.body}
	up.request.mu.Unlock()

	wantStatus := 200
	if s, ok := a["want/status"]; ok {
		wantStatus, err = strconv.Atoi(strings.TrimSpace(string(s)))
		must(t, err, "want/status")
	}
	if resp.StatusCode != wantStatus {
		t.Errorf("status = %d, want %d; body:\n%s", resp.StatusCode, wantStatus, got)
	}
	if w, ok := a["want/header"]; ok {
		for _, l := range strings.Split(strings.TrimSpace(string(w)), "\n") {
			l = strings.TrimSpace(l)
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "-") {
				if v := resp.Header.Values(l[1:]); len(v) > 0 {
					t.Errorf("header %s = %q, want it absent", l[1:], v)
				}
				continue
			}
			k, v, _ := strings.Cut(l, ":")
			if g := resp.Header.Get(k); g != strings.TrimSpace(v) {
				t.Errorf("header %s = %q, want %q", k, g, strings.TrimSpace(v))
			}
		}
	}
	if w, ok := a["want/upstream_path"]; ok {
		if want := strings.TrimSpace(string(w)); rec.path != want {
			t.Errorf("upstream path = %q, want %q", rec.path, want)
		}
	}
	if w, ok := a["want/upstream_body"]; ok {
		if want := bytes.TrimSuffix(w, []byte("\n")); !bytes.Equal(rec.body, want) {
			t.Errorf("upstream body =\n%s\nwant\n%s", rec.body, want)
		}
	}
	if w, ok := a["want/upstream_request.match.json"]; ok {
		if err := jsonMatches(rec.body, w); err != nil {
			t.Errorf("upstream request does not match: %v\ngot: %s", err, rec.body)
		}
	}
	if w, ok := a["want/upstream_request.absent"]; ok {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(rec.body, &obj); err != nil {
			t.Errorf("upstream request is not a JSON object: %v", err)
		}
		for _, k := range strings.Fields(string(w)) {
			if _, has := obj[k]; has {
				t.Errorf("upstream request has %q, want it absent", k)
			}
		}
	}
	if _, ok := a["want/upstream_not_called"]; ok && rec.called {
		t.Errorf("upstream was called, want it not called")
	}
	if w, ok := a["want/body"]; ok && !bytes.Equal(got, w) {
		t.Errorf("body =\n%q\nwant\n%q", got, w)
	}
	if w, ok := a["want/body.text"]; ok {
		if want := bytes.TrimSuffix(w, []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("body =\n%q\nwant\n%q", got, want)
		}
	}
	if w, ok := a["want/body.json"]; ok {
		if eq, err := jsonEqualBytes(got, w); err != nil || !eq {
			t.Errorf("body JSON differs (%v):\n got %s\nwant %s", err, got, w)
		}
	}
	if w, ok := a["want/body.match.json"]; ok {
		if err := jsonMatches(got, w); err != nil {
			t.Errorf("body does not match: %v\ngot: %s", err, got)
		}
	}
	var events []clientEvent
	if isStream {
		events = parseClientEvents(got)
	}
	if w, ok := a["want/content"]; ok {
		want := strings.TrimSuffix(string(w), "\n")
		var content string
		if isStream {
			content = streamContent(events)
		} else {
			content = jsonContent(got)
		}
		if content != want {
			t.Errorf("content = %q, want %q", content, want)
		}
	}
	if w, ok := a["want/meta.json"]; ok {
		var meta []byte
		if isStream {
			meta = streamMeta(events)
		} else {
			meta = jsonField(got, "meta")
		}
		if meta == nil {
			meta = []byte("null")
		}
		if eq, err := jsonEqualBytes(meta, w); err != nil || !eq {
			t.Errorf("meta differs (%v):\n got %s\nwant %s", err, meta, bytes.TrimSpace(w))
		}
	}
	if w, ok := a["want/events"]; ok {
		var gotLines []string
		for _, e := range events {
			gotLines = append(gotLines, normaliseEvent(e.data))
		}
		wantLines := strings.Split(strings.TrimSuffix(string(w), "\n"), "\n")
		if strings.Join(gotLines, "\n") != strings.Join(wantLines, "\n") {
			t.Errorf("events differ:\n got:\n%s\nwant:\n%s\nraw body:\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"), got)
		}
	}
}
