#!/usr/bin/env bash
# End-to-end test of the playground: npm ci, Debian's chromium when
# /usr/bin/chromium is missing, then node --test (Node 24, as the client
# suites). Exits non-zero on failure.
#
#   e2e/run.sh                          # builds ./cmd/caddy with go build
#   LLM_META_CADDY=/path/to/caddy e2e/run.sh
#
# Screenshots land in e2e/screenshots/.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -x /usr/bin/chromium ]; then
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "e2e: /usr/bin/chromium is missing and apt-get is not available; install Chromium (Debian's 'chromium' package) first" >&2
		exit 2
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "e2e: /usr/bin/chromium is missing; run as root to let this script install it, or: apt-get install chromium" >&2
		exit 2
	fi
	echo "e2e: installing Debian's chromium package" >&2
	timeout 600 apt-get update
	DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y chromium
fi

# The same Node as the client suites (scripts/node24.sh: Node 24 from npm,
# cached); npm ci reuses npm's cache (~/.npm) between runs.
node=$(bash ../scripts/node24.sh)
export PATH="$(dirname "$node"):$PATH"
timeout 300 npm ci --no-audit --no-fund --prefer-offline --loglevel=error
exec timeout 900 node --test --test-reporter=spec playground.test.js
