#!/usr/bin/env bash
# A/B comparison of the in-process benchmarks of a package (default
# caddymodule, whose bench_test.go measures the handler) between a git
# revision and the working tree, robust to a machine shared
# with other work: both test binaries are built once, then run in
# alternation (old, new, old, new, ...) and each figure is the median of the
# rounds. The package's benchmark files (*bench_test.go) of the working tree
# are used for both, so that they measure the same thing; when REV does not
# build with them (they call a helper REV lacks), each side is built with
# its own test files and only the benchmarks both have are run.
#
#   bench/ab.sh [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations] | -f FUNC] REV
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
#
# With -f FUNC it measures code footprint instead: the distinct 64-byte
# instruction lines and 4 KiB pages of llm_meta's own code executed inside
# FUNC (callgrind's --toggle-collect pattern, e.g.
# '*translate.(*JSONReplyParts).Rewrite'), over one run of each alternative
# of the bench regexp (-benchtime 2x: three iterations). A reply handled with cold caches
# pays a memory access for each line and a page walk for each page, which
# the in-process timings never show (BENCHMARKS.md, eighth round). The
# count does not depend on the machine's load, but callgrind loses the
# toggle when a goroutine's stack moves: the same binary can count tens of
# lines more in one run than in the next.
set -euo pipefail

rounds=5 bench=. benchtime=1s pkg=caddymodule icount= iters=100000 footfn=
while getopts "r:b:t:p:in:f:" o; do
	case $o in
	r) rounds=$OPTARG ;;
	b) bench=$OPTARG ;;
	t) benchtime=$OPTARG ;;
	p) pkg=${OPTARG#./} ;;
	i) icount=1 ;;
	n) iters=$OPTARG ;;
	f) footfn=$OPTARG ;;
	*) echo "usage: $0 [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations] | -f FUNC] REV" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-r rounds] [-b bench-regexp] [-t benchtime] [-p package] [-i [-n iterations] | -f FUNC] REV" >&2; exit 2; }
rev=$1

root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

git -C "$root" archive "$rev" | tar -x -C "$tmp"
mkdir "$tmp/own" && cp "$tmp/$pkg/"*_test.go "$tmp/own/"
cp "$root/$pkg/"*bench_test.go "$tmp/$pkg/"
# Before the handler moved to httpmeta, its logger was the module's own field.
[ -d "$tmp/httpmeta" ] || [ "$pkg" != caddymodule ] || sed -i 's/h\.core\.Logger = /h.logger = /' "$tmp/caddymodule/bench_test.go"
if ! (cd "$tmp" && go test -c -o "$tmp/old.test" "./$pkg" >"$tmp/build.err" 2>&1); then
	# The working tree's benchmark files need what REV lacks (a helper
	# renamed or moved): each side is built with its own test files, and
	# only the benchmarks both have are run.
	echo "ab.sh: REV does not build with the working tree's benchmark files; each side uses its own" >&2
	rm "$tmp/$pkg/"*_test.go && cp "$tmp/own/"*_test.go "$tmp/$pkg/"
	(cd "$tmp" && go test -c -o "$tmp/old.test" "./$pkg")
	own=1
fi
(cd "$root" && go test -c -o "$tmp/new.test" "./$pkg")
if [ -n "${own:-}" ]; then
	# The benchmarks the regexp's top level (before a '/') matches, narrowed
	# to the names both binaries list; a regexp whose benchmarks both have
	# is kept as it is (with its sub-benchmark part).
	top=${bench%%/*}
	list() { "$tmp/$1.test" -test.list "$top" | grep '^Benchmark' | sort; }
	both=$(comm -12 <(list old) <(list new))
	[ -n "$both" ] || { echo "ab.sh: no benchmark matching $bench in both" >&2; exit 1; }
	if [ "$both" != "$(list new)" ]; then
		[ "$top" = "$bench" ] || echo "ab.sh: $bench narrowed to the benchmarks both have, all of their sub-benchmarks" >&2
		bench=$(echo "$both" | sed 's/.*/^&$/' | paste -sd'|')
	fi
fi

if [ -n "$footfn" ]; then
	command -v valgrind >/dev/null || { echo "ab.sh -f: valgrind is not installed" >&2; exit 1; }
	footprint() { # version, regexp: "lines pages library-lines" of code run inside $footfn
		go tool nm -size -sort address "$tmp/$1.test" | awk '$3 == "T" || $3 == "t" { print $1, $4 }' >"$tmp/$1.syms"
		GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --dump-instr=yes --compress-pos=no \
			--toggle-collect="$footfn" --callgrind-out-file="$tmp/$1.cg" \
			"$tmp/$1.test" -test.run '^$' -test.bench "$2" -test.benchtime 2x >/dev/null 2>&1
		# Each instruction address executed, mapped to the function around
		# it; only llm_meta's packages count, not its tests' helpers nor the
		# runtime and standard library it calls: callgrind loses track of
		# the toggle when a goroutine's stack moves, and then collects
		# whatever runs next, which only llm_meta's own names filter out.
		# gjson's and sjson's lines are counted apart: only llm_meta calls
		# them, so they are its footprint too.
		awk '
			function hex(s,   n, i) { n = 0; s = tolower(s); sub(/^0x/, "", s)
				for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
				return n }
			FNR == NR { at[NR] = hex($1); fn[NR] = $2; n = NR; next }
			/^0x[0-9a-f]+ / { a = hex($1); lo = 1; hi = n
				while (lo < hi) { m = int((lo + hi + 1) / 2); if (at[m] <= a) lo = m; else hi = m - 1 }
				f = fn[lo]
				if (f ~ /^github.com\/llm-meta\/llm_meta\// && f !~ /[Bb]ench|\.Test/) { line[int(a / 64)] = 1; page[int(a / 4096)] = 1 }
				if (f ~ /^github.com\/tidwall\//) lib[int(a / 64)] = 1 }
			END { print length(line), length(page), length(lib) }' "$tmp/$1.syms" "$tmp/$1.cg"
	}
	echo "llm_meta code run inside $footfn, old -> new (and gjson's and sjson's lines it ran)"
	printf "%-44s %16s %16s %16s\n" "benchmark" "64-byte lines" "4 KiB pages" "gjson/sjson lines"
	IFS='|' read -r -a alts <<<"$bench"
	for b in "${alts[@]}"; do
		read -r lo po go < <(footprint old "$b")
		read -r ln pn gn < <(footprint new "$b")
		[ "$ln" -gt 0 ] || { echo "ab.sh -f: nothing ran inside $footfn in $b" >&2; exit 1; }
		printf "%-44s %7d -> %5d %7d -> %5d %7d -> %5d\n" "$b" "$lo" "$ln" "$po" "$pn" "$go" "$gn"
	done
	exit 0
fi

if [ -n "$icount" ]; then
	command -v valgrind >/dev/null || { echo "ab.sh -i: valgrind is not installed" >&2; exit 1; }
	count() { # version, regexp, iterations: instructions of the whole run
		# Valgrind cannot run the RDTSCP of the Go runtime's lock spinning
		# (SIGILL when two of its threads contend): cpu.rdtscp=off keeps the
		# runtime from using it, and a run that still dies is run again.
		for _ in 1 2 3 4 5 6 7 8; do
			if GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
				"$tmp/$1.test" -test.run '^$' -test.bench "$2" -test.benchtime "$3x" >"$tmp/count.out" 2>&1; then
				sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/count.out"
				return
			fi
		done
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
