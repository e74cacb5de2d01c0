#!/usr/bin/env bash
# Whole-process start-up (issue 15 item 5), side by side in one hyperfine run on the simulator:
#   - a bare C NVML client reading the same ten fields of 8 GPUs (bench/nvml/bare_client.c): the floor;
#   - `gpuwarden smi --query-gpu` and `gpuwarden query` on the same fields (target: within 1.3x of it);
#   - `gpuwarden --version` (target: 2 ms);
#   - with BEFORE=path/to/an/older/gpuwarden, that program's query and --version too.
# Usage: bench/smi_start.sh [BUILD_DIR] [hyperfine options...]   (default build/, a release build)
#        INTERLEAVE=1 bench/smi_start.sh [BUILD_DIR]: the same commands taken in turn instead
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
gw=$build/bin/gpuwarden
sim=$(ls "$build"/lib/libnvml-sim.so)
export GPUWARDEN_SIM_SCENARIO=$PWD/scenarios/dgx-h100.yaml
fields=index,name,uuid,temperature.gpu,memory.total,memory.used,utilization.gpu,power.draw,clocks.sm,pstate
runs=(-n bare "$build/bin/nvml_bare_client $sim")
"$gw" --simulate dgx-h100 smi --query-gpu=index --format=csv >/dev/null 2>&1 && runs+=(-n smi "$gw --simulate dgx-h100 smi --query-gpu=$fields --format=csv,noheader")
runs+=(
  -n query "$gw --simulate dgx-h100 query --query-gpu=$fields --format=csv,noheader"
  -n version "$gw --version"
)
if [[ -n ${BEFORE:-} ]]; then
  runs+=(-n before-query "$BEFORE --simulate dgx-h100 query --query-gpu=$fields --format=csv,noheader"
         -n before-version "$BEFORE --version")
fi
if [[ -n ${INTERLEAVE:-} ]]; then
  # The same commands taken in turn (bench/interleave.py), fairer than hyperfine's blocks when
  # the machine is shared.
  pairs=()
  for ((i = 0; i < ${#runs[@]}; i += 3)); do pairs+=("${runs[i + 1]}=${runs[i + 2]}"); done
  exec python3 bench/interleave.py -n "${RUNS:-300}" "${pairs[@]}"
fi
hyperfine -N --warmup 10 --runs "${RUNS:-200}" "${runs[@]}" "$@"
