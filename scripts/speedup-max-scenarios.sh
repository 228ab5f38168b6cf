#!/usr/bin/env bash
# speedup-max-scenarios.sh BINARY
#
# Runs the README's diagnosis scenarios (the ones harness's TestDiagnosisScenarios checks in
# virtual time) at --speedup max on the embedded simulator, and prints for each its verdict,
# the one expected, the wall time and the speedup reached (docs/speed.md, "--speedup max").
# Exits 1 when a verdict differs. Needs jq.
set -uo pipefail
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0 n=0
check() { # EXPECTED ARGS...
  local want=$1 out="$dir/$n"
  shift
  n=$((n + 1))
  "$bin" run "$@" --speedup max --out "$out" >"$dir/log" 2>&1
  local got wall speed
  got=$(jq -r .verdict.kind "$out/results.json" 2>/dev/null || echo "no results.json")
  wall=$(jq -r '.wall_seconds | floor' "$out/results.json" 2>/dev/null)
  speed=$(jq -r '.speedup_achieved | "\(.min|floor)–\(.max|floor)×, median \(.median|floor)×"' "$out/results.json" 2>/dev/null)
  local mark=ok
  if [ "$got" != "$want" ]; then mark=DIFFERS fail=1; fi
  printf '%-8s %-17s (want %-17s) wall %4s s, speedup %s: %s\n' "$mark" "$got" "$want" "$wall" "$speed" "$*"
}
check healthy          --workload smoke
check slow             --workload ocbrowse --rounds 2
check server-serialized --workload ocbrowse --agents 16 --rounds 1 --sim-fault serialize
check pacer-starvation --workload ocbrowse --sim-fault long-context-wedge --set pacer.slots=16
check deadlock         --workload ocbrowse --sim-fault long-context-wedge
check errors           --workload ocbrowse --rounds 4 --sim-fault long-context-wedge --set request.idle_timeout=60s
check stalled-streams  --workload ocbrowse --sim-fault prefill-pin --set duration=400s
check errors           --workload smoke --agents 10 --rounds 5 --sim-fault errors --sim-fault-param rate=0.2
check pacer-starvation --workload ocbrowse --sim-fault stall-stream --sim-fault-param fraction=0.5 \
  --set request.idle_timeout=30s --set pacer.leak_on_timeout=true
check stalled-streams  --workload smoke --sim-fault stall-stream --sim-fault-param fraction=1 --sim-fault-param duration=40s
check deadlock         --workload smoke --set request.ttft_timeout=30s --sim-fault long-context-wedge \
  --sim-fault-param threshold_tokens=500 --sim-fault-param probability=0.2
check healthy          --workload smoke --agents 10 --rounds 5 --set retry.max=5 --set retry.backoff=1s \
  --sim-fault errors --sim-fault-param rate=0.2 --sim-fault-param kind=429
check errors           --workload smoke --set context.max_context_tokens=1100
exit $fail
