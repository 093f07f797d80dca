#!/usr/bin/env bash
# Build a Caddy with llm_meta from this working tree with xcaddy, the way
# Caddy plugins are built, and check that the module is in it.
#
#   ./xcaddy.sh                 build ./caddy, then list llm_meta's modules in it
#   ./xcaddy.sh run [args...]   build, then ./caddy run --config Caddyfile.example [args...]
#
# OUTPUT                  the binary to write (default ./caddy)
# CADDY_VERSION           the Caddy version to build (default: the one in go.mod)
# XCADDY_RACE_DETECTOR=1  build with the race detector (xcaddy's own setting)
#
# xcaddy itself is installed with `go install` at the version pinned below
# when the one in $(go env GOPATH)/bin is missing or another version. There
# is no fallback: when xcaddy cannot build, this script fails.
set -euo pipefail
cd "$(dirname "$0")"

xcaddy_version=v0.4.5
module=github.com/llm-meta/llm_meta
out=${OUTPUT:-./caddy}
caddy_version=${CADDY_VERSION:-$(go list -m -f '{{.Version}}' github.com/caddyserver/caddy/v2)}

fail() { echo "xcaddy.sh: $*" >&2; exit 1; }

mode=${1:-build}
case "$mode" in
  build | run) ;;
  *) fail "usage: $0 [build|run [args...]]" ;;
esac

gobin=$(go env GOBIN)
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
xcaddy="$gobin/xcaddy"
if [ ! -x "$xcaddy" ] || [[ "$("$xcaddy" version 2>/dev/null)" != "$xcaddy_version "* ]]; then
  echo "installing xcaddy $xcaddy_version with go install"
  go install "github.com/caddyserver/xcaddy/cmd/xcaddy@$xcaddy_version" ||
    fail "go install of xcaddy $xcaddy_version failed"
fi

# The plugin is this tree, not a published release. xcaddy runs `go get` on
# every plugin module; without a version that asks the module proxy for the
# latest release, which an unpublished tree does not have. The zero
# pseudo-version is the one Go itself gives a module replaced by a
# directory, so `go get` is satisfied by the replacement alone.
echo "building $out with xcaddy $xcaddy_version: Caddy $caddy_version with $module from $PWD"
"$xcaddy" build "$caddy_version" --output "$out" \
  --with "$module@v0.0.0-00010101000000-000000000000=$PWD" ||
  fail "xcaddy build failed (see its output above)"

modules=$("$out" list-modules) || fail "$out list-modules failed"
grep -E '^http\.handlers\.llm_meta' <<<"$modules" || fail "http.handlers.llm_meta is missing from $out"
grep -qx 'http.handlers.llm_meta' <<<"$modules" || fail "http.handlers.llm_meta is missing from $out"

if [ "$mode" = run ]; then
  shift
  exec "$out" run --config Caddyfile.example --adapter caddyfile "$@"
fi
