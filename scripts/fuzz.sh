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
set -euo pipefail
cd "$(dirname "$0")/.."

time=${1:-5s}
shift || true
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  mapfile -t pkgs < <(go list ./...)
fi

failed=()
n=0
for pkg in "${pkgs[@]}"; do
  # -list prints the matching names, then "ok <pkg>"; a package without
  # tests prints only "? <pkg> [no test files]".
  targets=$(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true)
  for target in $targets; do
    n=$((n + 1))
    echo "-- $pkg $target ($time)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$time" "$pkg"; then
      failed+=("$pkg $target")
    fi
  done
done

echo "fuzzed $n targets for $time each"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failing inputs found (kept under testdata/fuzz/):"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
