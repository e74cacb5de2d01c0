#!/usr/bin/env bash
# What the profiling (GPM) fields cost the agent: `serve --simulate dgx-h100` (8 GPUs) at a 1 s fast
# interval, with every numeric field and with every numeric field but the twelve prof_* ones,
# alternating ROUNDS times, DURATION s each; CPU from /proc/<pid>/stat (utime+stime) after a 5 s
# start-up. The simulator runs inside the agent: its share of the GPM calls comes from agent_bench
# (BM_SimulatorGpmOnly), when BUILD_DIR has it.
# Usage: bench/agent/prof_cpu.sh BUILD_DIR   (DURATION=60 ROUNDS=2)
set -euo pipefail
BUILD=${1:?usage: prof_cpu.sh BUILD_DIR}
GW=$BUILD/bin/gpuwarden
DURATION=${DURATION:-60}
ROUNDS=${ROUNDS:-2}
source "$(dirname "$0")/../lib.sh"

# Every numeric field but the profiling ones, by key, from the catalog itself.
without=$("$GW" fields --json | python3 -c '
import json, sys
# The DCGM name where there is one: a key can also be an nvidia-smi name of a text field (pstate).
keys = [f["dcgm_name"] or f["key"] for f in json.load(sys.stdin)
        if f["type"] != "label" and not f["key"].startswith("prof_")]
print("[" + ", ".join(keys) + "]")')

run() {  # NAME FIELDS_YAML → percent of one core
  AGENT_PORT=$(free_port)
  printf 'listen: 127.0.0.1:%s\nsampling: {fast_interval: 1s%s}\n' "$AGENT_PORT" "$2" >"$WORK/$1.yaml"
  start_agent "$1" dgx-h100 --config "$WORK/$1.yaml"
  sleep 5
  local pct
  pct=$(cpu_percent "$AGENT_PID" "$DURATION")
  kill "$AGENT_PID"
  wait "$AGENT_PID" 2>/dev/null || true
  rm -rf "${WORK:?}/$1"
  echo "$pct"
}

for r in $(seq "$ROUNDS"); do
  off=$(run "off-$r" ", fields: $without")
  on=$(run "on-$r" "")
  echo "round $r: without profiling ${off} % of a core, with profiling ${on} % (8 GPUs, 1 s, ${DURATION} s each)"
done
if [[ -x $BUILD/bin/agent_bench ]]; then
  "$BUILD/bin/agent_bench" --benchmark_filter='BM_SimulatorGpmOnly|BM_SamplingPass' --benchmark_min_time=1
fi
