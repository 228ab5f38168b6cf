#!/usr/bin/env bash
# Runs real OpenAI clients and agent harnesses against agentsim serve: installs the pinned Node
# packages of scripts/realclients (npm ci, from package-lock.json) and runs the tagged suite,
# simserver's TestRealClients (realclients_test.go, realclients_codex_test.go), which serves the
# simulator on loopback at speedup 50 and 1 and runs each script, and Codex CLI's codex exec,
# against it, and internal/cli's TestExecRealClients, which runs exec-harness.mjs under agentsim
# exec. Needs Node 20 or later and npm (the pinned @openai/codex ships a 420 MB binary); about
# 4 minutes. Extra arguments go to go test (-v prints each client's figures).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v node >/dev/null || { echo "run.sh: node not found; the real-client suite needs Node 20 or later and npm" >&2; exit 1; }
command -v npm >/dev/null || { echo "run.sh: npm not found; the real-client suite needs Node 20 or later and npm" >&2; exit 1; }
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
cd "$root"
go test -tags realclients -count=1 -run '^TestRealClients$' "$@" ./simserver/
go test -tags realclients -count=1 -run '^TestExecRealClients$' "$@" ./internal/cli/
