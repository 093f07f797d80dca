#!/usr/bin/env bash
# End-to-end client tests of llm_meta: installs the pinned npm packages with
# `npm ci` and runs `node --test`. Exits non-zero when anything fails.
#
# LLM_META_CADDY: path of a Caddy built with llm_meta (`go build -o PATH
# ./cmd/caddy` from the repository root). When unset, this script builds one
# into a temp dir first (needs Go), so that the test files share one build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

npm ci --no-audit --no-fund

tmp=""
cleanup() { [ -n "$tmp" ] && rm -rf "$tmp"; return 0; }
trap cleanup EXIT

if [ -z "${LLM_META_CADDY:-}" ]; then
  tmp="$(mktemp -d)"
  echo "building caddy with llm_meta into $tmp/caddy"
  (cd "$here/.." && go build -o "$tmp/caddy" ./cmd/caddy)
  export LLM_META_CADDY="$tmp/caddy"
fi

# TAP output; it closes with "# pass N" / "# fail N".
node --test --test-reporter=tap
