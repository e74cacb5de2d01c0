#!/usr/bin/env bash
# Whole-process wall time of `gpuwarden query` for 8 GPUs x 10 fields on the simulator (hyperfine),
# beside `gpuwarden --version` (process start alone) in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
gw=${GPUWARDEN:-build/bin/gpuwarden}
fields=index,name,uuid,temperature.gpu,memory.total,memory.used,utilization.gpu,power.draw,clocks.sm,pstate
hyperfine -N --warmup 5 --runs ${RUNS:-50} \
  "$gw --version" \
  "$gw --simulate dgx-h100 query --query-gpu=$fields --format=csv,noheader" "$@"
