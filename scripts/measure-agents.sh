#!/usr/bin/env bash
# measure-agents.sh BINARY AGENTS [VAR=value ...]
#
# Runs AGENTS smoke agents × 1 round × 256 tokens, all streaming at once, against the embedded
# simulator's ideal profile at speedup 1, and prints what docs/speed.md tabulates: wall time,
# tokens and frames per second, peak resident memory in all and per agent, CPU time, verdict
# and harness lag. VAR=value pairs are set in the run's environment (GOGC=50, say). Needs GNU
# time at /usr/bin/time and python3.
set -euo pipefail
bin=$1 agents=$2
shift 2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
load=$(cut -d' ' -f1 /proc/loadavg)
env "$@" /usr/bin/time -o "$dir/time" -f '%M %e %U %S' "$bin" run --workload smoke --sim-profile ideal \
  --agents "$agents" --rounds 1 --set request.output_tokens=256 --set request.max_tokens=256 \
  --set request.force_output_length=true --set request.reasoning_effort=none \
  --set pacer.slots="$agents" --speedup 1 --out "$dir/run" >"$dir/out" 2>&1 || true
python3 - "$dir" "$agents" "$load" "$*" <<'PY'
import json, sys
d, agents, load, env = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rss_kb, wall, user, system = open(f"{d}/time").read().split()
r = json.load(open(f"{d}/run/results.json"))
frames = r["stream"]["frames"] if "stream" in r else sum(
    e.get("chunks", 0) for e in map(json.loads, open(f"{d}/run/events.jsonl"))
    if e.get("event") in ("done", "error", "timeout", "cancelled"))
lag = r.get("harness", {}).get("lag_seconds", {}).get("p99", 0)
print(f"{agents} agents{' ' + env if env else ''}, load {load}: wall {float(wall):.1f} s, "
      f"{r['tokens']['output_per_second']:,.0f} tokens/s, {frames / r['wall_seconds']:,.0f} frames/s, "
      f"max RSS {int(rss_kb) / 1024:,.0f} MiB ({int(rss_kb) / agents:.1f} KiB per agent), "
      f"user {user} s, system {system} s, verdict {r['verdict']['kind']}, harness lag p99 {lag:.2f} s")
PY
