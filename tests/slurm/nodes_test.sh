#!/usr/bin/env bash
# Two slurmd on this host (gwnode1, gwnode2) with a HealthCheckProgram every 2 s: srun -N2 runs one
# task on each node, and each node's prolog sees that node's GPU; the health check runs on both
# nodes with nothing but SLURMD_NODENAME from slurmd; a drain it issues itself (scontrol) shows in
# sinfo -R and its resume undoes it, while its exit status alone drains nothing.
# Exit 77 (skipped) only when not root or a Slurm or munge program is missing.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
slurm_test_begin sinfo sbatch srun squeue scancel
fail() {
  echo "FAIL: $*"
  sinfo -N -o '%N|%T|%E' 2>&1 || true
  _slurm_logs
  for f in "$SLURM_T"/*.env; do
    [[ -e $f ]] || continue
    echo "--- $f"
    tail -n 30 "$f"
  done
  exit 1
}
has_line() {  # FILE LINE
  [[ -e $1 ]] && grep -qxF -- "$2" "$1"
}

cat >"$SLURM_T/prolog.sh" <<SH
#!/bin/bash
/usr/bin/env | /usr/bin/sort >>"$SLURM_T/prolog.\$SLURM_JOB_ID.\$SLURMD_NODENAME.env"
SH
# The health check: records its environment once, drains or resumes its node on request, and
# exits 1 on request. It gets no SLURM_CONF (nor PATH) from slurmd; a site's scontrol finds
# /etc/slurm/slurm.conf, ours must be told.
cat >"$SLURM_T/hc.sh" <<SH
#!/bin/bash
n=\$SLURMD_NODENAME
[[ -e "$SLURM_T/hc.\$n.env" ]] || /usr/bin/env | /usr/bin/sort >"$SLURM_T/hc.\$n.env"
export SLURM_CONF=$SLURM_T/slurm.conf
if [[ -e "$SLURM_T/drain.\$n" ]]; then
  /usr/bin/scontrol update nodename="\$n" state=drain reason="gpuwarden: health check"
elif [[ -e "$SLURM_T/resume.\$n" ]]; then
  /usr/bin/rm "$SLURM_T/resume.\$n"
  /usr/bin/scontrol update nodename="\$n" state=resume
fi
[[ ! -e "$SLURM_T/exit1.\$n" ]]
SH
chmod +x "$SLURM_T/prolog.sh" "$SLURM_T/hc.sh"
SLURM_NODES=2
SLURM_GPUS=1
SLURM_PROLOG=$SLURM_T/prolog.sh
SLURM_HEALTHCHECK=$SLURM_T/hc.sh
SLURM_HEALTHCHECK_INTERVAL=2
cd "$SLURM_T"

t0=$SECONDS
slurm_start || fail "slurm_start"
echo "slurm_start: $((SECONDS - t0)) s until ${SLURM_NODE_NAMES[*]} were idle"
[[ ${SLURM_NODE_NAMES[*]} == "gwnode1 gwnode2" ]] || fail "SLURM_NODE_NAMES: ${SLURM_NODE_NAMES[*]}"

# One task per node, each with that node's only GPU.
out=$(srun -N2 --ntasks-per-node=1 --gres=gpu:1 bash -c 'echo "$SLURM_JOB_ID $SLURMD_NODENAME"' | sort) ||
  fail "srun -N2"
job=${out%% *}
[[ $out == "$job gwnode1"$'\n'"$job gwnode2" ]] || fail "srun -N2 printed: $out"
slurm_wait_job "$job" 30 || fail "job $job did not finish"
for n in gwnode1 gwnode2; do
  f=$SLURM_T/prolog.$job.$n.env
  has_line "$f" "SLURM_JOB_ID=$job" || fail "prolog on $n: no SLURM_JOB_ID=$job"
  has_line "$f" "SLURMD_NODENAME=$n" || fail "prolog on $n: SLURMD_NODENAME is not $n"
  has_line "$f" "SLURM_NODELIST=gwnode[1-2]" || fail "prolog on $n: SLURM_NODELIST is not gwnode[1-2]"
  has_line "$f" "SLURM_JOB_GPUS=0" || fail "prolog on $n: SLURM_JOB_GPUS is not 0"
  has_line "$f" "CUDA_VISIBLE_DEVICES=0" || fail "prolog on $n: CUDA_VISIBLE_DEVICES is not 0"
done

# The health check's environment: slurmd passes SLURMD_NODENAME and nothing else of its own.
end=$((SECONDS + 10))
until [[ -e $SLURM_T/hc.gwnode1.env && -e $SLURM_T/hc.gwnode2.env ]]; do
  ((SECONDS < end)) || fail "the health check did not run on both nodes"
  sleep 0.2
done
for n in gwnode1 gwnode2; do
  vars=$(cut -d= -f1 "$SLURM_T/hc.$n.env" | xargs)
  [[ $vars == "PWD SHLVL SLURMD_NODENAME _" ]] || fail "health check on $n got: $vars"
  has_line "$SLURM_T/hc.$n.env" "SLURMD_NODENAME=$n" || fail "health check on $n: SLURMD_NODENAME is not $n"
done

# A drain from the health check, then a resume from it; the other node stays idle.
touch "$SLURM_T/drain.gwnode2"
slurm_wait_node "drained|gpuwarden: health check" 10 gwnode2 || fail "health check drain"
sinfo -R -h -o '%N|%E' | grep -qxF "gwnode2|gpuwarden: health check" || fail "sinfo -R: $(sinfo -R -h -o '%N|%E')"
[[ $(slurm_node_state gwnode1) == "idle|none" ]] || fail "gwnode1 is $(slurm_node_state gwnode1)"
rm "$SLURM_T/drain.gwnode2"
touch "$SLURM_T/resume.gwnode2"
slurm_wait_node "idle|none" 10 gwnode2 || fail "health check resume"

# Its exit status drains nothing: slurmd only logs it.
touch "$SLURM_T/exit1.gwnode1"
end=$((SECONDS + 10))
until grep -q 'health_check failed: rc:1' "$SLURM_T/log/slurmd-gwnode1.log"; do
  ((SECONDS < end)) || fail "slurmd did not log the health check's exit 1"
  sleep 0.2
done
sleep 3  # one more interval
[[ $(slurm_node_state gwnode1) == "idle|none" ]] || fail "after exit 1: gwnode1 is $(slurm_node_state gwnode1)"
rm "$SLURM_T/exit1.gwnode1"

slurm_stop
[[ -z $(_slurm_strays) ]] || fail "left running: $(_slurm_strays | xargs)"
echo "PASS ($((SECONDS - t0)) s)"
