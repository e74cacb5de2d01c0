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
source "$(dirname "$0")/../lib.sh"
start_agent plain dgx-h100
start_agent mig "$(dirname "$0")/../../scenarios/dgx-h100-mig56.yaml"
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
  printf "%-6s agent CPU between scrapes %s %% of a core (1 s sampling)\n" "$1" "$(cpu_percent "$pid" "$DURATION")"
}
measure plain
measure mig
