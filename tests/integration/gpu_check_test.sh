#!/usr/bin/env bash
# scripts/gpu-check, the acceptance pass for a real GPU machine, run against the simulated DGX
# through a wrapper that adds --simulate: every check that needs no CUDA device must pass, and the
# CUDA ones (diag, burn) must fail with their own "cannot run here" codes, named in the summary.
# (Its query check once called `query` without --query-gpu and failed on a real H200.)
# Usage: gpu_check_test.sh GPUWARDEN_BINARY SOURCE_DIR
set -euo pipefail

GW=$(readlink -f "${1:?usage: gpu_check_test.sh GPUWARDEN_BINARY SOURCE_DIR}")
SRC=${2:?usage: gpu_check_test.sh GPUWARDEN_BINARY SOURCE_DIR}
source "$(dirname "$0")/lib.sh"
export GPUWARDEN_RUNTIME_DIR=$WORK/run GPUWARDEN_DATA_DIR=$WORK/data GPUWARDEN_SIM_STATE=$WORK/sim-state
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
mkdir -p "$WORK/run" "$WORK/data"
cat >"$WORK/gw" <<WRAP
#!/bin/sh
exec "$GW" --simulate dgx-h100 "\$@"
WRAP
chmod +x "$WORK/gw"

rc=0
GPUWARDEN=$WORK/gw bash "$SRC/scripts/gpu-check" "$WORK/out" >"$WORK/gpu-check.log" 2>&1 || rc=$?
summary=$WORK/out/summary.txt
[[ -f $summary ]] || fail "no summary: $(cat "$WORK/gpu-check.log")"
cat "$summary"
[[ $rc == 1 ]] || fail "gpu-check exited $rc, expected 1 (no CUDA device here)"
for check in discovery query dmon health; do
  grep -Eq "^$check +rc=0 " "$summary" || fail "$check did not pass: $(grep "^$check " "$summary")"
  [[ $(cat "$WORK/out/$check.rc") == 0 ]] || fail "$check.rc is not 0"
done
# The query is nvidia-smi's CSV: a header and one row per GPU, eight here.
[[ $(head -1 "$WORK/out/query.out") == "index, name, uuid, pci.bus_id, temperature.gpu, power.draw [W], utilization.gpu [%], memory.used [MiB], clocks.sm [MHz], pstate" ]] ||
  fail "query header: $(head -1 "$WORK/out/query.out")"
[[ $(wc -l <"$WORK/out/query.out") == 9 ]] || fail "query rows: $(cat "$WORK/out/query.out")"
# Without a CUDA device diag ends INCOMPLETE (4) and burn cannot run (3); the summary names them.
grep -Eq "^diag-r2 +rc=4 " "$summary" || fail "diag: $(grep '^diag-r2' "$summary")"
grep -Eq "^burn +rc=3 " "$summary" || fail "burn: $(grep '^burn ' "$summary")"
grep -q "gpu-check: FAILED: diag-r2 burn burn-fp64-json" "$summary" || fail "the summary does not name the failed checks"
echo PASS
