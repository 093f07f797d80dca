#!/usr/bin/env bash
# A/B comparison of the in-process benchmarks of a package (default
# caddymodule, whose bench_test.go measures the handler) between a git
# revision and the working tree, robust to a machine shared
# with other work: both test binaries are built once, then run in
# alternation (old, new, old, new, ...) and each figure is the median of the
# rounds. The package's benchmark files (*bench_test.go) of the working tree
# are used for both, so that they measure the same thing.
#
#   bench/ab.sh [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations]] REV
#
# e.g. bench/ab.sh -b 'JSONReply|SSEPassthrough' main
#      bench/ab.sh -p translate -b ProtocolPassthrough main
#
# With -i it counts instructions instead (valgrind's callgrind), which do
# not move with what else the machine runs: each alternative of the
# bench regexp (split at '|') is run at n/5 and at n/5 + n iterations (n
# is 100,000 unless -n says), single-threaded, and the difference of the
# two counts divided by n is the instructions per iteration, garbage
# collection included (-r and -t do not apply). A caddymodule benchmark's
# iteration includes its next handler's own run. Instructions are not
# time (a cache miss or a mispredicted branch costs many), but a change
# that saves none saves little.
set -euo pipefail

rounds=5 bench=. benchtime=1s pkg=caddymodule icount= iters=100000
while getopts "r:b:t:p:in:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	b) bench=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	p) pkg=${OPTARG#./} ;;
	i) icount=1 ;;
	n) iters=$OPTARG ;;
	*) echo "usage: $0 [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations]] REV" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations]] REV" >&2; exit 2; }
rev=$1

root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$root" archive "$rev" | tar -x -C "$tmp"
cp "$root/$pkg/"*bench_test.go "$tmp/$pkg/"
# Before the handler moved to httpmeta, its logger was the module's own field.
[ -d "$tmp/httpmeta" ] || [ "$pkg" != caddymodule ] || sed -i 's/h\.core\.Logger = /h.logger = /' "$tmp/caddymodule/bench_test.go"
(cd "$tmp" && go test -c -o "$tmp/old.test" "./$pkg")
(cd "$root" && go test -c -o "$tmp/new.test" "./$pkg")

if [ -n "$icount" ]; then
	command -v valgrind >/dev/null || { echo "ab.sh -i: valgrind is not installed" >&2; exit 1; }
	count() { # version, regexp, iterations: instructions of the whole run
		GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			"$tmp/$1.test" -test.run '^$' -test.bench "$2" -test.benchtime "$3x" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
	}
	printf "%-52s %12s %12s %8s\n" "benchmark (instructions per iteration)" old new new/old
	IFS='|' read -r -a alts <<<"$bench"
	for b in "${alts[@]}"; do
		for v in old new; do
			lo=$(count "$v" "$b" $((iters / 5))) hi=$(count "$v" "$b" $((iters / 5 + iters)))
			[ -n "$lo" ] && [ -n "$hi" ] || { echo "ab.sh -i: callgrind failed on $v $b" >&2; exit 1; }
			eval "per_$v=$(((hi - lo) / iters))"
		done
		awk -v b="$b" -v o="$per_old" -v w="$per_new" 'BEGIN { printf "%-52s %12d %12d %8.3f\n", b, o, w, w / o }'
	done
	exit 0
fi

for i in $(seq "$rounds"); do
	for v in old new; do
		echo "round $i: $v" >&2
		"$tmp/$v.test" -test.run '^$' -test.bench "$bench" -test.benchmem -test.benchtime "$benchtime" |
			awk -v v="$v" '/^Benchmark/ { for (i = 3; i < NF; i += 2) print v, $1, $(i+1), $i }'
	done
done >"$tmp/results"

# Medians per benchmark, unit and version.
awk '
	{ key = $2 SUBSEP $3; vals[$1, key] = vals[$1, key] " " $4; keys[key] = 1 }
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		printf "%-44s %-20s %12s %12s %8s\n", "benchmark", "unit", "old", "new", "new/old"
		n = 0
		for (k in keys) sorted[++n] = k
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (sorted[j] < sorted[i]) { t = sorted[i]; sorted[i] = sorted[j]; sorted[j] = t }
		for (i = 1; i <= n; i++) {
			k = sorted[i]; split(k, p, SUBSEP)
			o = median(vals["old", k]); w = median(vals["new", k])
			r = (o != 0) ? sprintf("%.3f", w / o) : "-"
			printf "%-44s %-20s %12.4g %12.4g %8s\n", p[1], p[2], o, w, r
		}
	}' "$tmp/results"
