#!/usr/bin/env bash
# Side-by-side frame throughput of agentsim serve and llm-d-inference-sim with the same client
# (scripts/framebench/main.go), one server at a time, on loopback inside a network namespace.
# Both stream one token per frame at a 1 ms inter-token latency (agentsim: the ideal profile's
# 20 ms steps at --speedup 20), far more than either can serve at these counts, so the figures
# are each server's saturated throughput.
#
#   scripts/framebench/sidebyside.sh AGENTSIM LLMD "1000 5000" TOKENS
#
# AGENTSIM and LLMD are the two binaries; run it as root (unshare -n) or under unshare -rn.
set -euo pipefail
agentsim=${1:?agentsim binary}
llmd=${2:?llm-d-inference-sim binary}
counts=${3:-"1000 5000"}
tokens=${4:-1000}
here=$(cd "$(dirname "$0")" && pwd)
client=$(mktemp -d)/framebench
(cd "$here/../.." && go build -o "$client" scripts/framebench/main.go)
ulimit -n 65536 || true
ip link set lo up
for n in $counts; do
  "$agentsim" serve --addr 127.0.0.1:8112 --profile ideal --speedup 20 --served-model-name m >/dev/null 2>&1 &
  pid=$!
  sleep 1
  "$client" -url http://127.0.0.1:8112 -streams "$n" -tokens "$tokens" -pid "$pid" -label "agentsim n=$n"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  "$llmd" --model m --port 8111 --mode random --inter-token-latency 1ms --time-to-first-token 0 \
    --max-num-seqs $((n * 2)) --max-waiting-queue-length $((n * 2)) --max-model-len 100000 \
    --force-dummy-tokenizer >/dev/null 2>&1 &
  pid=$!
  sleep 2
  "$client" -url http://127.0.0.1:8111 -streams "$n" -tokens "$tokens" -pid "$pid" -label "llm-d n=$n"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
