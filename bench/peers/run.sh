#!/usr/bin/env bash
# llm_meta and its peers, side by side, in one run (issue 37): builds Caddy
# from cmd/caddy, installs Portkey's gateway (pinned with its whole
# dependency tree by package-lock.json here) into a cache folder with npm,
# runs it on Node 24 (scripts/node24.sh), and drives the upstream direct,
# Caddy reverse_proxy, Caddy + llm_meta and the gateway in interleaved
# rounds (go run ./bench/e2e -peers; see bench/README.md). Progress goes to
# stderr; stdout is exactly the Markdown block that opens BENCHMARKS.md.
#
#   bash bench/peers/run.sh                  the full comparison (about 10 minutes)
#   bash bench/peers/run.sh -quick           every contender answers every workload right, a few seconds of load
#   bash bench/peers/run.sh -proto chat -tools no -conc 1    any bench/e2e flag narrows or overrides
#
# PEERS_ROUNDS    rounds per workload and concurrency (default 5)
# PEERS_REQUESTS  requests per contender in each round (default 400)
# PEERS_CONC      concurrencies (default 1,16)
# PEERS_OUT       also write every figure of every round as JSON to this file
# LLM_META_CACHE  the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/llm_meta)
#
# Everything listens on 127.0.0.1; every process it starts is stopped when
# it ends, however it ends.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=bench/peers

# Read before anything is built: the load the machine had of its own.
load_before=$(cat /proc/loadavg)
# The command as the Markdown block names it, with the settings that
# change the figures.
command_line="bash $here/run.sh${*:+ $*}"
for v in PEERS_CONC PEERS_REQUESTS PEERS_ROUNDS; do
  [ -z "${!v:-}" ] || command_line="$v=${!v} $command_line"
done

rounds=${PEERS_ROUNDS:-5}
requests=${PEERS_REQUESTS:-400}
conc=${PEERS_CONC:-1,16}
if [ "${1:-}" = -quick ]; then
  shift
  rounds=1 requests=20
fi

fail() { echo "run.sh: $*" >&2; exit 1; }
command -v npm >/dev/null || fail "npm is needed to install the gateway"
command -v go >/dev/null || fail "go is needed to build Caddy"

# The gateway, once per version of the lock file.
cache=${LLM_META_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llm_meta}
version=$(sed -n 's/.*"@portkey-ai\/gateway": "\(.*\)".*/\1/p' $here/package.json)
lock=$(sha256sum $here/package-lock.json | cut -c1-12)
gateway="$cache/portkey-gateway-$version-$lock"
if [ ! -f "$gateway/node_modules/@portkey-ai/gateway/package.json" ]; then
  echo "run.sh: installing @portkey-ai/gateway $version into $gateway" >&2
  rm -rf "$gateway"
  mkdir -p "$gateway"
  cp $here/package.json $here/package-lock.json "$gateway/"
  # No install scripts: the gateway's own (patch-package) has no patches
  # in the published package.
  (cd "$gateway" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2 ||
    fail "npm ci of the gateway failed"
fi
cp $here/loopback.mjs "$gateway/"
node=$(scripts/node24.sh)

work=$(mktemp -d "${TMPDIR:-/tmp}/llm_meta_peers.XXXXXX")
driver=
cleanup() {
  # The driver stops its children (the Caddys, the gateway) on SIGTERM;
  # they also die with it (Pdeathsig).
  if [ -n "$driver" ] && kill -0 "$driver" 2>/dev/null; then
    kill -TERM "$driver" 2>/dev/null || true
    wait "$driver" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "run.sh: building Caddy (cmd/caddy) and the driver (bench/e2e)" >&2
go build -o "$work/caddy" ./cmd/caddy
go build -o "$work/e2e" ./bench/e2e

"$work/e2e" -peers "$gateway" -peers-node "$node" -caddy "$work/caddy" \
  -rounds "$rounds" -peers-requests "$requests" -conc "$conc" -events 100 \
  -peers-command "$command_line" -peers-loadavg "$load_before" \
  ${PEERS_OUT:+-out "$PEERS_OUT"} "$@" &
driver=$!
wait "$driver"
