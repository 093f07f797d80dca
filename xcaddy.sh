#!/usr/bin/env bash
# Build a Caddy with llm_meta, and optionally run it.
#
#   ./xcaddy.sh                 build ./caddy (xcaddy, installed with `go install` when missing)
#   ./xcaddy.sh run [args...]   build, then `./caddy run --config Caddyfile.example [args...]`
#   ./xcaddy.sh --plain         build with plain `go build ./cmd/caddy` (no xcaddy, module cache only)
#
# CADDY_VERSION picks the Caddy version for xcaddy (default: the one in go.mod).
set -euo pipefail
cd "$(dirname "$0")"

out=./caddy
version=${CADDY_VERSION:-$(go list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)}

build_plain() {
  echo "building $out with go build ./cmd/caddy"
  go build -o "$out" ./cmd/caddy
}

build_xcaddy() {
  local xcaddy
  xcaddy=$(command -v xcaddy || true)
  if [ -z "$xcaddy" ]; then
    echo "xcaddy not found: installing it with go install"
    go install github.com/caddyserver/xcaddy/cmd/xcaddy@latest
    xcaddy="$(go env GOPATH)/bin/xcaddy"
  fi
  echo "building $out with xcaddy (Caddy $version)"
  "$xcaddy" build "$version" --output "$out" --with github.com/llm-meta/llm_meta="$PWD"
}

mode=${1:-build}
case "$mode" in
  --plain) build_plain; exit 0 ;;
  build) build_xcaddy || { echo "xcaddy build failed; falling back to go build"; build_plain; } ;;
  run)
    shift
    build_xcaddy || { echo "xcaddy build failed; falling back to go build"; build_plain; }
    exec "$out" run --config Caddyfile.example --adapter caddyfile "$@"
    ;;
  *) echo "usage: $0 [build|run|--plain]" >&2; exit 2 ;;
esac
"$out" list-modules | grep -E '^http\.handlers\.llm_meta' || { echo "llm_meta missing from the build" >&2; exit 1; }
