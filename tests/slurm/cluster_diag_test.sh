#!/usr/bin/env bash
# `gpuwarden cluster diag` on a real two-node Slurm 22.05: one srun step, one task per node with
# all of its GPUs; gwnode1 simulates a healthy DGX H100 (diag: incomplete, no CUDA on the
# simulator), gwnode2 fault-retired-pages (GPU 5 fails). The fleet table names both, the JSON has
# each node's verdict, --drain drains gwnode2 only, with its finding as the reason.
# Usage: cluster_diag_test.sh GPUWARDEN_BINARY. Exit 77 only when not root or Slurm is missing.
set -euo pipefail

GW=$(readlink -f "${1:?usage: cluster_diag_test.sh GPUWARDEN_BINARY}")
source "$(dirname "$0")/lib.sh"
slurm_test_begin sinfo srun
fail() {
  echo "FAIL: $*"
  echo "--- nodes: $(sinfo -N -h -o '%N %t %E' 2>&1 || true)"
  _slurm_logs
  for f in "$SLURM_T"/out.*; do
    [[ -e $f ]] || continue
    echo "--- $f"
    head -c 3000 "$f"
  done
  exit 1
}

# What runs on each node: gpuwarden on that node's simulated machine.
cat >"$SLURM_T/node-gpuwarden" <<SH
#!/bin/bash
case \$SLURMD_NODENAME in
  gwnode2) scenario=fault-retired-pages ;;
  *) scenario=dgx-h100 ;;
esac
export GPUWARDEN_SIM_START=60 ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"
exec "$GW" "\$@" --data-dir "$SLURM_T/data-\$SLURMD_NODENAME" --simulate \$scenario
SH
chmod +x "$SLURM_T/node-gpuwarden"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

SLURM_NODES=2
SLURM_GPUS=8
cd "$SLURM_T"
slurm_start || fail "slurm_start"

set +e
"$GW" cluster diag -r 1 --command "$SLURM_T/node-gpuwarden" >"$SLURM_T/out.table" 2>"$SLURM_T/out.err"
rc=$?
set -e
[[ $rc == 1 ]] || fail "cluster diag exited $rc, not 1 (a node failed)"
grep -qE '^gwnode1 +incomplete +8 ' "$SLURM_T/out.table" || fail "gwnode1's row"
grep -qE '^gwnode2 +fail +8 +GPU 5: retired_pages: ' "$SLURM_T/out.table" || fail "gwnode2's row"
grep -q '^2 node(s): 0 pass, 0 warn, 1 fail, 1 incomplete, 0 without a report$' "$SLURM_T/out.table" || fail "the summary line"
[[ $(slurm_node_state gwnode2) == idle\|* ]] || fail "drained without --drain: $(slurm_node_state gwnode2)"

set +e
"$GW" cluster diag -r 1 --command "$SLURM_T/node-gpuwarden" --drain --json >"$SLURM_T/out.json" 2>"$SLURM_T/out.err"
rc=$?
set -e
[[ $rc == 1 ]] || fail "cluster diag --drain exited $rc"
python3 - "$SLURM_T/out.json" <<'PY' || fail "the JSON document"
import json, sys
d = json.load(open(sys.argv[1]))
n = {x["node"]: x for x in d["nodes"]}
assert set(n) == {"gwnode1", "gwnode2"}, n
assert n["gwnode1"]["overall"] == "incomplete" and n["gwnode1"]["exit_code"] == 4, n["gwnode1"]
assert n["gwnode2"]["overall"] == "fail" and n["gwnode2"]["exit_code"] == 1 and n["gwnode2"]["gpus"] == 8, n["gwnode2"]
assert n["gwnode2"]["findings"][0].startswith("GPU 5: retired_pages: "), n["gwnode2"]["findings"]
assert d["summary"] == {"nodes": 2, "pass": 0, "warn": 0, "fail": 1, "incomplete": 1, "no_report": 0}, d["summary"]
assert d["exit_code"] == 1
assert [x["node"] for x in d["drained"]] == ["gwnode2"] and d["drained"][0]["ok"], d["drained"]
PY
state=$(slurm_node_state gwnode2)
[[ $state == drain*"|gpuwarden: diag -r 1 failed: GPU 5: retired_pages: "* ]] || fail "gwnode2 after --drain: $state"
[[ $(slurm_node_state gwnode1) == idle\|* ]] || fail "gwnode1 was drained: $(slurm_node_state gwnode1)"

# The drained node is not tested: srun would wait for it. Named, it gets a row that says so.
set +e
"$GW" cluster diag -r 1 --command "$SLURM_T/node-gpuwarden" --json >"$SLURM_T/out.rest" 2>>"$SLURM_T/out.err"
rc=$?
set -e
[[ $rc == 4 ]] || fail "cluster diag on the rest exited $rc"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [n["node"] for n in d["nodes"]] == ["gwnode1"], d' "$SLURM_T/out.rest" ||
  fail "the drained node was tested"
set +e
"$GW" cluster diag -r 1 --command "$SLURM_T/node-gpuwarden" --nodes gwnode2 >"$SLURM_T/out.named" 2>>"$SLURM_T/out.err"
rc=$?
set -e
[[ $rc == 4 ]] || fail "cluster diag on the drained node exited $rc"
grep -qE '^gwnode2 +no report +0 +not tested: the node is drain' "$SLURM_T/out.named" || fail "the drained node's row"
echo PASS
