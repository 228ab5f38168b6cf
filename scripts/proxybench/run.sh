#!/usr/bin/env bash
# The recording proxy beside the server it fronts, with the same client
# (scripts/framebench/main.go): direct to `agentsim serve --profile ideal --speedup 1000`,
# through `agentsim record`, and through `agentsim record --watch`, one path at a time, each
# with a fresh server and proxy on loopback. Each stream asks TOKENS tokens, one a frame.
#
#   scripts/proxybench/run.sh AGENTSIM "1000 5000" TOKENS REPEATS
#
# For every run it prints the client's figures (wall, frames/s, time to first byte) and one
# line: the CPU the server and the proxy spent (user + system, from /proc/PID/stat), each per
# frame, and the proxy's peak resident memory per stream. The added time to first byte is a
# proxied run's p99 less the direct run's beside it. The load average is printed before each.
set -euo pipefail
agentsim=${1:?agentsim binary}
counts=${2:-"1000 5000"}
tokens=${3:-256}
repeats=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
client=$work/framebench
(cd "$here/../.." && go build -o "$client" scripts/framebench/main.go)
# The proxy holds two descriptors a stream (the harness's connection and its own to the
# server): raise the hard limit for the processes started here when it is short, which needs
# CAP_SYS_RESOURCE, and say so when it cannot be raised.
most=0
for n in $counts; do [ "$n" -gt "$most" ] && most=$n; done
need=$((2 * most + 256))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
  if prlimit --pid $$ --nofile="$need:$need" 2>/dev/null; then
    echo "open-file limit raised from $hard to $need for $most streams through the proxy"
  else
    echo "warning: $most streams through the proxy need about $need open files, and the hard limit is $hard," \
      "which cannot be raised here (prlimit --nofile needs CAP_SYS_RESOURCE): the proxy can hold about" \
      "$(((hard - 256) / 2)) streams open at once; one beyond waits to be accepted, or fails if the proxy cannot dial the server" >&2
  fi
fi
ulimit -n "$(ulimit -Hn)" || true
tck=$(getconf CLK_TCK)

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# cpu PID: the process's user + system CPU so far, in seconds.
cpu() { awk -v t="$tck" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat"; }
# waitport PORT: until something listens on it.
waitport() { for _ in $(seq 100); do ss -ltn "sport = :$1" | grep -q LISTEN && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }

for rep in $(seq "$repeats"); do
  for n in $counts; do
    for path in direct record watch; do
      sport=$(freeport)
      "$agentsim" serve --addr "127.0.0.1:$sport" --profile ideal --speedup 1000 --served-model-name m >/dev/null 2>&1 &
      spid=$!
      waitport "$sport"
      url=http://127.0.0.1:$sport ppid=$spid
      if [ "$path" != direct ]; then
        pport=$(freeport)
        flags=()
        [ "$path" = watch ] && flags=(--watch)
        rm -rf "$work/rec" && mkdir -p "$work/rec"
        "$agentsim" record --upstream "$url" --listen "127.0.0.1:$pport" --out "$work/rec/trace.jsonl" "${flags[@]}" >/dev/null 2>&1 &
        ppid=$!
        waitport "$pport"
        url=http://127.0.0.1:$pport
      fi
      label="rep=$rep n=$n $path"
      echo "$label load: $(cut -d' ' -f1-3 /proc/loadavg)"
      out=$("$client" -url "$url" -streams "$n" -tokens "$tokens" -pid "$ppid" -label "$label") || echo "$label: the client failed"
      echo "$out"
      frames=$(sed -n 's/.*whole run: .*(\([0-9]*\) frames.*/\1/p' <<<"$out")
      scpu=$(cpu "$spid")
      line="$label CPU: server $scpu s ($(awk -v c="$scpu" -v f="$frames" 'BEGIN { printf "%.2f", c * 1e6 / f }') µs/frame)"
      if [ "$ppid" != "$spid" ]; then
        pcpu=$(cpu "$ppid")
        line+=", proxy $pcpu s ($(awk -v c="$pcpu" -v f="$frames" 'BEGIN { printf "%.2f", c * 1e6 / f }') µs/frame, $(awk -v c="$pcpu" -v s="$scpu" 'BEGIN { printf "%.2f", c / s }')× the server's)"
        kill -INT "$ppid"; wait "$ppid" 2>/dev/null || true
        line+=", trace lines $(($(wc -l <"$work/rec/trace.jsonl") - 1))"
      fi
      echo "$line"
      kill "$spid"; wait "$spid" 2>/dev/null || true
    done
  done
done
