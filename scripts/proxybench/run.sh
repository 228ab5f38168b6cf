#!/usr/bin/env bash
# The recording proxy beside the server it fronts, with the same client
# (scripts/framebench/main.go): direct to `agentsim serve --profile ideal --speedup SPEEDUP`,
# through `agentsim record`, and through `agentsim record --watch`, one path at a time, each
# with a fresh server and forwarder on loopback. Each stream asks TOKENS tokens, one a frame.
#
#   [SPEEDUP=1000] [PATHS="direct record watch"] [PIN=1] \
#     scripts/proxybench/run.sh AGENTSIM "1000 5000" TOKENS REPEATS
#
# PATHS may also name two forwarders that record nothing, to put the proxy beside what
# forwarding itself costs (docs/speed.md, "What forwarding costs"): relay (scripts/proxybench/
# relay.go: bytes through a user-space buffer, no HTTP) and nginx (a reverse proxy with
# proxy_buffering off, when nginx is installed; skipped with a message when it is not). With
# PIN=1 the server and the client share CPU 0 and the forwarder has CPU 1 to itself, as a
# proxy beside a harness on a machine of its own would: the frames per second then say
# whether the forwarder keeps up with the server, not how three processes share two cores.
#
# For every run it prints the client's figures (wall, frames/s, time to first byte) and one
# line: the CPU the server and the forwarder spent (user + system, from /proc/PID/stat), each
# per frame, the forwarder's over the server's, and its frames per second over the direct
# run's of the same repetition (direct runs first when PATHS names it). The added time to
# first byte is a proxied run's p99 less the direct run's beside it. The load average is
# printed before each run.
set -euo pipefail
agentsim=${1:?agentsim binary}
counts=${2:-"1000 5000"}
tokens=${3:-256}
repeats=${4:-2}
paths=${PATHS:-"direct record watch"}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
client=$work/framebench
(cd "$here/../.." && go build -o "$client" scripts/framebench/main.go)
if [[ " $paths " == *" relay "* ]]; then
  (cd "$here/../.." && go build -o "$work/relay" scripts/proxybench/relay.go)
fi
if [[ " $paths " == *" nginx "* ]] && ! command -v nginx >/dev/null; then
  echo "nginx is not installed: its path is skipped (Debian: apt-get install nginx-light)" >&2
  paths=${paths//nginx/}
fi
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
# cpu PID...: the processes' user + system CPU so far, in seconds.
cpu() {
  local t=0 p
  for p in "$@"; do t=$(awk -v t="$tck" -v a="$t" '{ sub(/^.*\) /, ""); printf "%.2f", a + ($12 + $13) / t }' "/proc/$p/stat"); done
  echo "$t"
}
# waitport PORT: until something listens on it.
waitport() { for _ in $(seq 100); do ss -ltn "sport = :$1" | grep -q LISTEN && return; sleep 0.1; done; echo "nothing listens on $1" >&2; exit 1; }
# on0 and on1 prefix a command to run it on CPU 0 or 1 when PIN=1 (taskset execs it, so $!
# is the command's own process).
on0=() on1=()
[ "${PIN:-}" = 1 ] && on0=(taskset -c 0) on1=(taskset -c 1)
# nginxconf PORT UPSTREAM: a reverse proxy that streams (no buffering either way) and keeps
# its connections to the server alive, as record does.
nginxconf() {
  cat >"$work/nginx.conf" <<EOF
worker_processes $([ "${PIN:-}" = 1 ] && echo 1 || nproc);
pid $work/nginx.pid;
error_log $work/nginx.err;
worker_rlimit_nofile $need;
events { worker_connections $need; }
http {
  access_log off;
  upstream sim { server $2; keepalive 1024; }
  server {
    listen 127.0.0.1:$1 backlog=16384;
    location / {
      proxy_pass http://sim;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 600s;
    }
  }
}
EOF
}

for rep in $(seq "$repeats"); do
  for n in $counts; do
    directfps=
    for path in $paths; do
      sport=$(freeport)
      "${on0[@]}" "$agentsim" serve --addr "127.0.0.1:$sport" --profile ideal --speedup "${SPEEDUP:-1000}" --served-model-name m >/dev/null 2>&1 &
      spid=$!
      waitport "$sport"
      url=http://127.0.0.1:$sport pport=$(freeport) fpids=() name=proxy
      case $path in
        direct) ;;
        record | watch)
          flags=()
          [ "$path" = watch ] && flags=(--watch)
          rm -rf "$work/rec" && mkdir -p "$work/rec"
          "${on1[@]}" "$agentsim" record --upstream "$url" --listen "127.0.0.1:$pport" --out "$work/rec/trace.jsonl" "${flags[@]}" >/dev/null 2>&1 &
          fpids=($!) ;;
        relay)
          "${on1[@]}" "$work/relay" -listen "127.0.0.1:$pport" -upstream "127.0.0.1:$sport" &
          fpids=($!) name=relay ;;
        nginx)
          nginxconf "$pport" "127.0.0.1:$sport"
          "${on1[@]}" nginx -c "$work/nginx.conf"
          waitport "$pport"
          fpids=($(pgrep -P "$(cat "$work/nginx.pid")")) name=nginx ;;
        *) echo "unknown path $path (allowed: direct, record, watch, relay, nginx)" >&2; exit 2 ;;
      esac
      if [ "$path" != direct ]; then
        waitport "$pport"
        url=http://127.0.0.1:$pport
      fi
      label="rep=$rep n=$n $path"
      echo "$label load: $(cut -d' ' -f1-3 /proc/loadavg)"
      out=$("${on0[@]}" "$client" -url "$url" -streams "$n" -tokens "$tokens" -pid "${fpids[0]:-$spid}" -label "$label") || echo "$label: the client failed"
      echo "$out"
      frames=$(sed -n 's/.*whole run: .*(\([0-9]*\) frames.*/\1/p' <<<"$out")
      fps=$(sed -n 's/.*whole run: \([0-9]*\) frames\/s.*/\1/p' <<<"$out")
      scpu=$(cpu "$spid")
      line="$label CPU: server $scpu s ($(awk -v c="$scpu" -v f="$frames" 'BEGIN { printf "%.2f", c * 1e6 / f }') µs/frame)"
      if [ "$path" = direct ]; then
        directfps=$fps
      else
        fcpu=$(cpu "${fpids[@]}")
        line+=", $name $fcpu s ($(awk -v c="$fcpu" -v f="$frames" 'BEGIN { printf "%.2f", c * 1e6 / f }') µs/frame, $(awk -v c="$fcpu" -v s="$scpu" 'BEGIN { printf "%.2f", c / s }')× the server's)"
        [ -n "$directfps" ] && line+=", frames/s $(awk -v a="$fps" -v b="$directfps" 'BEGIN { printf "%.2f", a / b }')× direct"
        case $path in
          record | watch)
            kill -INT "${fpids[0]}"; wait "${fpids[0]}" 2>/dev/null || true
            line+=", trace lines $(($(wc -l <"$work/rec/trace.jsonl") - 1))" ;;
          relay) kill "${fpids[0]}"; wait "${fpids[0]}" 2>/dev/null || true ;;
          nginx) nginx -c "$work/nginx.conf" -s stop 2>/dev/null || true ;;
        esac
      fi
      echo "$line"
      kill "$spid"; wait "$spid" 2>/dev/null || true
    done
  done
done
