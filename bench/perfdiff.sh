#!/usr/bin/env bash
# perfdiff.sh: where the llm_meta Caddy spends more CPU than plain Caddy,
# function by function, end to end.
#
# Runs bench/e2e with the flags given (one workload and one concurrency, e.g.
# -mode json -proto chat -tools no -conc 16 -rounds 6 -duration 2s), records
# both Caddy processes with perf (call graphs, kernel and runtime included:
# many more samples than Go's CPU profiler), and prints, for the functions
# that differ most, each side's CPU per request (or per event) in µs: by
# part of the process first (the request's goroutine, split into
# reverse_proxy, llm_meta's own code, its reading of the request body and
# writing of the reply, which plain Caddy does in its transport and
# reverse_proxy, and the rest; the transport's write and read loops; the
# start of net/http's background read, wherever it runs; GC, sysmon,
# scheduler: work that moved between them shows as added on one and saved
# on the other), then inclusive, then the functions' own time.
# Each side's samples are scaled so that they add up to the Caddy CPU per
# request that bench/e2e measured for it; the figures are as steady as
# that run.
#
# Needs perf (linux-perf) and the right to record the two processes (root,
# or kernel.perf_event_paranoid <= 1).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "perfdiff: perf is not installed" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: bench/perfdiff.sh E2E-FLAGS (one workload, one concurrency)" >&2; exit 2; }
top=${PERFDIFF_TOP:-30}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/e2e" ./bench/e2e
"$tmp/e2e" "$@" -v >"$tmp/e2e.out" 2>&1 &
e2e=$!
pids=""
for _ in $(seq 300); do
	pids=$(sed -n 's/.*plain Caddy [^ ]* (pid \([0-9]*\)), llm_meta Caddy [^ ]* (pid \([0-9]*\)).*/\1 \2/p' "$tmp/e2e.out")
	[ -n "$pids" ] && break
	kill -0 "$e2e" 2>/dev/null || break
	sleep 0.1
done
[ -n "$pids" ] || { cat "$tmp/e2e.out" >&2; exit 1; }
read -r plain mod <<<"$pids"
perf record -q -F 3000 -g -p "$plain,$mod" -o "$tmp/perf.data" >/dev/null 2>&1 &
rec=$!
wait "$e2e" || { cat "$tmp/e2e.out" >&2; kill -INT "$rec"; exit 1; }
kill -INT "$rec" 2>/dev/null || true
wait "$rec" || true
grep -E '^(stream|json|convert) ' "$tmp/e2e.out" || true
cpu=$(grep -m1 'Caddy CPU per' "$tmp/e2e.out")
unit=$(sed -n 's/.*Caddy CPU per \([a-z]*\).*/\1/p' <<<"$cpu")
read -r cpuPlain cpuMod < <(awk '{for (i=1;i<=NF;i++) if ($i ~ /^\(µs\)$/) {print $(i+1), $(i+2); exit}}' <<<"$cpu")
echo "Caddy CPU per $unit: plain $cpuPlain µs, llm_meta $cpuMod µs"

# One line per sample: its process, then its frames, leaf first.
perf script -i "$tmp/perf.data" -F pid,ip,sym 2>/dev/null | awk -v P="$plain" -v L="$mod" -v CP="$cpuPlain" -v CL="$cpuMod" -v top="$top" -v unit="$unit" '
# The part of the process a sample ran in, from its outermost frames: the
# same work can move from one to another (the request body is read by the
# transport'"'"'s write loop in plain Caddy, by the handler with llm_meta),
# which the per-function tables show as an addition on one side only.
function role(   i) {
	# Started where the request body is read to its end: by the
	# transport'"'"'s write loop in plain Caddy, by the handler with llm_meta.
	if ("net/http.(*connReader).startBackgroundRead" in seen) return "net/http'"'"'s background read being started"
	for (i = n; i >= 1; i--) {
		if (fr[i] ~ /^net\/http\.\(\*conn\)\.serve$/) {
			if ("github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy.(*Handler).ServeHTTP" in seen) return "the request'"'"'s goroutine: reverse_proxy"
			if ("github.com/llm-meta/llm_meta/httpmeta.(*Handler).Serve" in seen) {
				# What plain Caddy does elsewhere: reading the request body
				# (its transport) and writing the reply to the client
				# (reverse_proxy).
				if ("github.com/llm-meta/llm_meta/httpmeta.readUpTo" in seen) return "the request'"'"'s goroutine: llm_meta reading the request body"
				if ("github.com/llm-meta/llm_meta/httpmeta.(*responseWriter).writeOut" in seen || "github.com/llm-meta/llm_meta/httpmeta.(*responseWriter).forwardHeader" in seen) return "the request'"'"'s goroutine: llm_meta writing the reply to the client"
				return "the request'"'"'s goroutine: llm_meta'"'"'s own code"
			}
			return "the request'"'"'s goroutine: the rest (net/http, Caddy'"'"'s server)"
		}
		if (fr[i] ~ /persistConn\)\.writeLoop$/) return "transport write loop (request to upstream)"
		if (fr[i] ~ /persistConn\)\.readLoop$/) return "transport read loop (reply from upstream)"
		if (fr[i] ~ /connReader\)\.backgroundRead$/) return "connection background read"
		if (fr[i] ~ /^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$/) return "garbage collector workers"
		if (fr[i] ~ /^runtime\.sysmon$/) return "runtime sysmon"
		if (fr[i] ~ /^runtime\.(mcall|schedule|findRunnable|park_m|goexit0)$/) return "scheduler"
	}
	return "other"
}
function flush(   s) {
	if (pid == "") return
	if (pid == P || pid == L) {
		tot[pid]++
		leaf[pid SUBSEP lf]++
		for (s in seen) inc[pid SUBSEP s]++
		part[pid SUBSEP role()]++
	}
	delete seen
	pid = ""; lf = ""; n = 0
}
/^ *[0-9]+ *$/ { flush(); pid = $1 + 0; first = 1; next }
/^\t/ {
	s = $0; sub(/^\t *[0-9a-f]+ /, "", s); sub(/\+0x.*/, "", s)
	if (first) { lf = s; first = 0 }
	seen[s] = 1
	fr[++n] = s
	next
}
function table(title, m,   k, a, p, l) {
	for (k in m) {
		split(k, a, SUBSEP)
		if (a[1] != L && (L SUBSEP a[2]) in m) continue # counted with the llm_meta side
		p = ((P SUBSEP a[2]) in m) ? m[P SUBSEP a[2]] * CP / tot[P] : 0
		l = ((L SUBSEP a[2]) in m) ? m[L SUBSEP a[2]] * CL / tot[L] : 0
		printf "%s\t%+.3f\t%.3f\t%.3f\t%s\n", title, l - p, p, l, a[2]
	}
}
END {
	flush()
	if (!tot[P] || !tot[L]) { print "perfdiff: no samples of one of the two processes" > "/dev/stderr"; exit 1 }
	table("inclusive", inc)
	table("own", leaf)
	table("part", part)
}' >"$tmp/diff.tsv"
printf '\nby part of the process, µs per %s: added, plain, llm_meta\n' "$unit"
awk -F'\t' '$1 == "part"' "$tmp/diff.tsv" | sort -t$'\t' -k2,2gr | cut -f2-
for t in inclusive own; do
	printf '\n%s time, µs per %s: added, plain, llm_meta\n' "$t" "$unit"
	awk -F'\t' -v t="$t" '$1 == t' "$tmp/diff.tsv" | sort -t$'\t' -k2,2gr | awk -v n="$top" 'NR <= n' | cut -f2-
done
