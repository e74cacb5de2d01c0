#!/usr/bin/env bash
# Latency targets of the running agent, measured on the simulator with the release build: /metrics
# on the DGX H100; /metrics, /api/v1/gpus and the other GPUs' sample lag while GPU 5 hangs; the
# sample lag while GPU 3 is lost; SIGTERM to exit with a hung call; driver return to
# re-initialised. Each fault is reached through the simulator's file clock, REPS agents per
# measurement (default 5). Prints a table of medians and worsts with the targets the functional
# tests used to assert, PASS/FAIL on the worst, and exits 1 when a target is missed (2 when a run
# could not be made). Not part of ctest: wall-clock latency depends on the machine.
# Usage: scripts/build release && bench/agent/latency.sh [GPUWARDEN_BINARY]   (default build/bin/gpuwarden)
#        REPS=5 SCRAPES=20 DRIVER_AWAY=10
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
GW=${1:-$HERE/../../build/bin/gpuwarden}
[[ -x $GW ]] || { echo "latency.sh: no gpuwarden binary at $GW (scripts/build release)" >&2; exit 2; }
exec python3 "$HERE/latency.py" "$GW"
