#!/usr/bin/env bash
# A scrape of a MIG node (docs/performance.md, "A MIG node's scrape"): the agent on the simulated
# DGX H100 with 56 MIG devices (scenarios/dgx-h100-mig56.yaml) beside the same node without MIG,
# side by side in one run: series per page, and the scrape's wall time (curl time_total, RUNS
# scrapes each, median and p90), plus the agent's CPU per second while idle.
# Usage: bench/agent/mig_scrape.sh BUILD_DIR   (RUNS=200 DURATION=20)
set -euo pipefail
BUILD=${1:?usage: mig_scrape.sh BUILD_DIR}
GW=$(readlink -f "$BUILD/bin/gpuwarden")
RUNS=${RUNS:-200}
DURATION=${DURATION:-20}
TICKS=$(getconf CLK_TCK)
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export GPUWARDEN_RUNTIME_DIR=$WORK/run
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() {  # NAME SCENARIO -> sets PORT_<NAME>, PID_<NAME>
  local port
  port=$(free_port)
  "$GW" serve --simulate "$2" --data-dir "$WORK/$1" --listen "127.0.0.1:$port" 2>"$WORK/$1.log" &
  PIDS+=($!)
  eval "PORT_$1=$port PID_$1=$!"
  for _ in $(seq 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
}
start plain dgx-h100
start mig "$(dirname "$0")/../../scenarios/dgx-h100-mig56.yaml"
sleep 3  # a few sampling passes

measure() {  # NAME
  local port_var="PORT_$1" pid_var="PID_$1"
  local port=${!port_var} pid=${!pid_var}
  local series mig
  series=$(curl -sf "http://127.0.0.1:$port/metrics" | grep -vc '^#')
  mig=$(curl -sf "http://127.0.0.1:$port/metrics" | grep '^gpuwarden_gpu_up{' | grep -c 'GPU_I_ID=' || true)
  for _ in $(seq "$RUNS"); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"; done |
    sort -n | awk -v n="$1" -v s="$series" -v m="$mig" '{ t[NR] = $1 } END {
      printf "%-6s %5d series (%d MIG devices)  scrape median %.2f ms  p90 %.2f ms\n", n, s, m, t[int(NR/2)+1]*1000, t[int(NR*0.9)]*1000 }'
  local a b
  a=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  sleep "$DURATION"
  b=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  awk -v a="$a" -v b="$b" -v t="$TICKS" -v d="$DURATION" -v n="$1" \
    'BEGIN { printf "%-6s agent CPU between scrapes %.2f %% of a core (1 s sampling)\n", n, (b - a) / t / d * 100 }'
}
measure plain
measure mig
