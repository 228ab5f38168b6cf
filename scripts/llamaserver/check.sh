#!/usr/bin/env bash
# Calibrate a twin of llama-server and check it, on loopback (docs/calibrate.md §4).
#
#   scripts/llamaserver/check.sh AGENTSIM LLAMA_SERVER MODEL.gguf OUTDIR [PORT]
#
# Starts LLAMA_SERVER on 127.0.0.1:PORT (18080) as this project measured it (-c 32768 -np 8
# -kvu --metrics --jinja, two threads), runs `agentsim calibrate` (OUTDIR/twin.yaml, its log
# OUTDIR/calibrate.log), then `agentsim calibrate check --twin-speedup 1` (OUTDIR/check.log),
# and stops the server (its log OUTDIR/server.log). EXTRA_SERVER_FLAGS adds server flags;
# CALIBRATE_FLAGS and CHECK_FLAGS add agentsim's. FRESH_CHECK=1 restarts the server between
# calibrate and check (its log OUTDIR/server-check.log), so the check meets a server in the
# state the calibration's first points did (docs/calibrate.md §4). The 1-minute load average
# is printed before and after each step: the server's figures move with what else runs.
#
# llama-server builds from the llama.cpp source inside the npm package node-llama-cpp:
#   npm pack node-llama-cpp@3.22.1 && tar xzf node-llama-cpp-3.22.1.tgz
#   git clone package/llama/gitRelease.bundle llama.cpp && cd llama.cpp
#   cmake -B build -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DCMAKE_BUILD_TYPE=Release
#   cmake --build build --target llama-server -j2        # build/bin/llama-server
# and the model is written by scripts/llamaserver/make-model.py llama.cpp MODEL.gguf (numpy).
set -euo pipefail
agentsim=${1:?agentsim binary} server=${2:?llama-server binary} model=${3:?model gguf} out=${4:?output directory}
port=${5:-18080}
mkdir -p "$out"
load() { echo "load $(cut -d' ' -f1 /proc/loadavg) $1"; }
spid=
stop() { [ -z "$spid" ] || { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true; }; spid=; }
trap stop EXIT
# start LOG: the server on $port, logging to LOG, once it answers /health.
start() {
  # shellcheck disable=SC2086
  "$server" -m "$model" --host 127.0.0.1 --port "$port" -c 32768 -np 8 -kvu --metrics --jinja -t 2 ${EXTRA_SERVER_FLAGS:-} >"$1" 2>&1 &
  spid=$!
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && return
    kill -0 "$spid" 2>/dev/null || { echo "llama-server exited: see $1" >&2; exit 1; }
    sleep 0.2
  done
  echo "llama-server did not answer /health in 60 s: see $1" >&2
  exit 1
}
start "$out/server.log"
url=http://127.0.0.1:$port
load "before calibrate"
# shellcheck disable=SC2086
"$agentsim" calibrate --server "$url" --out "$out/twin.yaml" ${CALIBRATE_FLAGS:-} 2>&1 | tee "$out/calibrate.log"
if [ "${FRESH_CHECK:-0}" = 1 ]; then
  stop
  start "$out/server-check.log"
fi
load "before check"
# shellcheck disable=SC2086
"$agentsim" calibrate check --profile "$out/twin.yaml" --server "$url" --twin-speedup 1 ${CHECK_FLAGS:-} 2>&1 | tee "$out/check.log"
load "after check"
