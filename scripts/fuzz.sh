#!/usr/bin/env bash
# Fuzzes every fuzz target of the module for a while each, one `go test
# -fuzz` run per target (Go fuzzes one target per run).
#
#   scripts/fuzz.sh [TIME] [PACKAGE...]
#
# TIME is each target's -fuzztime (default 5s); the packages default to
# every package of the module. A failing input makes the run fail, and Go
# keeps it under that package's testdata/fuzz/<Target>/: commit it, so the
# plain `go test` runs it from then on.
#
# Two things about Go 1.26's fuzzer shape this loop:
# - A new interesting input is minimized for up to -fuzzminimizetime
#   (60s by default) while no input is fuzzed; in a run of seconds that is
#   time lost, so minimizing stops after 2s (a failing input is still
#   written, only less small).
# - When -fuzztime ends while a worker is busy, the coordinator can report
#   a bare "context deadline exceeded" as a failure, with no input written
#   (go.dev/issue/75804, fixed in Go 1.27). Such a run counts as passed
#   when no new input appeared under testdata/fuzz/<Target>/ and the
#   target's corpus then passes as a plain test; anything else fails.
set -euo pipefail
cd "$(dirname "$0")/.."

time=${1:-5s}
shift || true
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  mapfile -t pkgs < <(go list ./...)
fi

# inputs DIR: how many inputs the corpus directory DIR holds (0 when absent).
inputs() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }

failed=()
raced=()
n=0
for pkg in "${pkgs[@]}"; do
  # -list prints the matching names, then "ok <pkg>"; a package without
  # tests prints only "? <pkg> [no test files]".
  targets=$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
  for target in $targets; do
    n=$((n + 1))
    echo "-- $pkg $target ($time)"
    dir="$(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$target"
    before=$(inputs "$dir")
    log=$(mktemp)
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" -fuzzminimizetime 2s "$pkg" 2>&1 | tee "$log"; then
      :
    elif grep -q '^    context deadline exceeded$' "$log" &&
      [ "$(inputs "$dir")" -eq "$before" ] &&
      go test -count=1 -run "^${target}\$" "$pkg"; then
      echo "   (the fuzzer's end-of-time race, go.dev/issue/75804: no input written, the corpus passes)"
      raced+=("$pkg $target")
    else
      failed+=("$pkg $target")
    fi
    rm -f "$log"
  done
done

echo "fuzzed $n targets for $time each"
if [ ${#raced[@]} -gt 0 ]; then
  echo "ended by the fuzzer's deadline race, corpus replayed and passed:"
  printf '  %s\n' "${raced[@]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "failing inputs found (kept under testdata/fuzz/):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
