#!/usr/bin/env bash
# What the Slurm hooks cost (docs/performance.md, "Slurm prolog and epilog", "Jobs"), against a
# running agent on the simulated DGX H100:
#   1. wall time of `slurm prolog` alone and of a prolog + epilog pair (a fresh job id each run;
#      the epilog also asks NVML for the GPUs' processes), with hyperfine, side by side;
#   2. the agent's CPU per second with no job and with 8 concurrent jobs (one per GPU), over
#      DURATION s each, from /proc/<pid>/stat.
# Usage: bench/agent/slurm_hooks.sh BUILD_DIR   (DURATION=30 RUNS=200)
set -euo pipefail
BUILD=${1:?usage: slurm_hooks.sh BUILD_DIR}
GW=$(readlink -f "$BUILD/bin/gpuwarden")
DURATION=${DURATION:-30}
RUNS=${RUNS:-200}
source "$(dirname "$0")/../lib.sh"
export GPUWARDEN_DATA_DIR=$WORK/data
start_agent data dgx-h100

echo "== prolog, and prolog + epilog (hyperfine, $RUNS runs)"
hyperfine --warmup 10 --runs "$RUNS" -S bash \
  -n prolog "SLURM_JOB_ID=p\$RANDOM\$RANDOM SLURM_JOB_GPUS=0,1 $GW slurm prolog" \
  -n prolog+epilog "id=e\$RANDOM\$RANDOM; SLURM_JOB_ID=\$id SLURM_JOB_GPUS=0,1 $GW slurm prolog && SLURM_JOB_ID=\$id SLURM_JOB_GPUS=0,1 $GW slurm epilog 2>/dev/null"

cpu_per_s() { echo "$(cpu_percent "$AGENT_PID" "$DURATION") % of a core"; }
# The prolog runs above left jobs running: end them all for the baseline.
for id in $("$GW" job list --data-dir "$WORK/data" --limit 10000 --json | python3 -c 'import json,sys; print(" ".join(j["job_id"] for j in json.load(sys.stdin)["jobs"] if j["state"]=="running"))'); do
  SLURM_JOB_ID=$id SLURM_JOB_GPUS=0 "$GW" slurm epilog 2>/dev/null
done
echo "== agent CPU, ${DURATION} s each"
echo "no job:      $(cpu_per_s)"
for g in 0 1 2 3 4 5 6 7; do SLURM_JOB_ID=c$g SLURM_JOB_GPUS=$g "$GW" slurm prolog; done
echo "8 jobs:      $(cpu_per_s)"
