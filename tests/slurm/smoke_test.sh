#!/usr/bin/env bash
# The harness against real Slurm 22.05: a private cluster with one node and two fake GPUs runs a
# batch job and an srun step through Prolog and Epilog, which must see the job's id and GPUs; a
# drain with a reason shows in sinfo -R and resume undoes it; a failing prolog drains the node
# ("Prolog error") and the job does not run: a batch job is requeued held, an srun step fails.
# Exit 77 (skipped) only when not root or a Slurm or munge program is missing.
set -euo pipefail

source "$(dirname "$0")/lib.sh"
slurm_test_begin sinfo sbatch srun squeue scancel
fail() {
  echo "FAIL: $*"
  echo "--- node: $(slurm_node_state "$SLURM_NODE" 2>&1 || true)"
  squeue 2>&1 || true
  _slurm_logs
  for f in "$SLURM_T"/*.env "$SLURM_T"/*.out; do
    [[ -e $f ]] || continue
    echo "--- $f"
    tail -n 40 "$f"
  done
  exit 1
}
# VAR=VALUE must be a whole line of FILE.
has_line() {  # FILE LINE
  [[ -e $1 ]] && grep -qxF -- "$2" "$1"
}

# Prolog and Epilog get no PATH from slurmd, hence the absolute names. The prolog fails while
# $SLURM_T/prolog.fail exists.
for s in prolog epilog; do
  cat >"$SLURM_T/$s.sh" <<SH
#!/bin/bash
/usr/bin/env | /usr/bin/sort >>"$SLURM_T/$s.\$SLURM_JOB_ID.env"
[[ ! -e "$SLURM_T/$s.fail" ]]
SH
  chmod +x "$SLURM_T/$s.sh"
done
SLURM_PROLOG=$SLURM_T/prolog.sh
SLURM_EPILOG=$SLURM_T/epilog.sh
SLURM_GPUS=2
cd "$SLURM_T"  # jobs run in the submitter's folder

t0=$SECONDS
slurm_start || fail "slurm_start"
echo "slurm_start: $((SECONDS - t0)) s until $SLURM_NODE was idle"

# A batch job with one GPU.
job=$(sbatch --parsable --gres=gpu:1 -o "$SLURM_T/batch.%j.out" --wrap 'echo hi') || fail "sbatch"
slurm_wait_job "$job" 30 || fail "batch job $job did not finish"
scontrol -o show job "$job" | grep -q 'JobState=COMPLETED' || fail "batch job $job: $(scontrol -o show job "$job")"
grep -qx hi "$SLURM_T/batch.$job.out" || fail "batch job $job printed no 'hi'"
for s in prolog epilog; do
  f=$SLURM_T/$s.$job.env
  has_line "$f" "SLURM_JOB_ID=$job" || fail "$s of batch job $job: no SLURM_JOB_ID=$job"
  gpus=$(sed -n 's/^SLURM_JOB_GPUS=//p' "$f")
  [[ $gpus == 0 || $gpus == 1 ]] || fail "$s of batch job $job: SLURM_JOB_GPUS='$gpus', not one GPU"
  has_line "$f" "CUDA_VISIBLE_DEVICES=$gpus" || fail "$s of batch job $job: CUDA_VISIBLE_DEVICES is not $gpus"
  has_line "$f" "SLURMD_NODENAME=$SLURM_NODE" || fail "$s of batch job $job: SLURMD_NODENAME is not $SLURM_NODE"
done

# An srun job with both GPUs; the step prints its job id.
job=$(srun --gres=gpu:2 bash -c 'echo "$SLURM_JOB_ID"') || fail "srun --gres=gpu:2"
[[ $job =~ ^[0-9]+$ ]] || fail "srun printed '$job', not a job id"
slurm_wait_job "$job" 30 || fail "srun job $job did not finish"
for s in prolog epilog; do
  f=$SLURM_T/$s.$job.env
  has_line "$f" "SLURM_JOB_ID=$job" || fail "$s of srun job $job: no SLURM_JOB_ID=$job"
  has_line "$f" "SLURM_JOB_GPUS=0,1" || fail "$s of srun job $job: SLURM_JOB_GPUS is not 0,1"
  has_line "$f" "CUDA_VISIBLE_DEVICES=0,1" || fail "$s of srun job $job: CUDA_VISIBLE_DEVICES is not 0,1"
done

# Drain with a reason, as the agent will, then resume.
scontrol update nodename="$SLURM_NODE" state=drain reason="gpuwarden: test" || fail "scontrol drain"
sinfo -R -h -o '%N|%E' | grep -qxF "$SLURM_NODE|gpuwarden: test" || fail "sinfo -R: $(sinfo -R -h -o '%N|%E')"
[[ $(slurm_node_state) == "drained|gpuwarden: test" ]] || fail "after drain: $(slurm_node_state)"
scontrol update nodename="$SLURM_NODE" state=resume || fail "scontrol resume"
slurm_wait_node "idle|none" 10 || fail "after resume"

# A failing prolog: the node drains with "Prolog error", the batch job is requeued and held
# without running.
touch "$SLURM_T/prolog.fail"
job=$(sbatch --parsable -o "$SLURM_T/failed.%j.out" --wrap 'echo hi') || fail "sbatch (failing prolog)"
end=$((SECONDS + 30))
until scontrol -o show job "$job" | grep -q 'JobState=PENDING Reason=launch_failed_requeued_held'; do
  ((SECONDS < end)) || fail "job $job after a failing prolog: $(scontrol -o show job "$job")"
  sleep 0.2
done
[[ -e $SLURM_T/prolog.$job.env ]] || fail "the prolog of job $job did not run"
# "draining" while the job's remains are cleaned up, then "drained".
slurm_wait_node "drained|Prolog error" 10 || fail "after a failing prolog"
if grep -qx hi "$SLURM_T/failed.$job.out" 2>/dev/null; then fail "job $job ran despite its failing prolog"; fi
scontrol -o show job "$job" | grep -q 'Restarts=1' || fail "job $job: not requeued once"

# An srun step on a node whose prolog fails: srun fails, its job ends without running, the
# node drains.
scontrol update nodename="$SLURM_NODE" state=resume || fail "scontrol resume"
slurm_wait_node "idle|none" 10 || fail "after resume"
if out=$(srun -J gw-failing-srun true 2>&1); then fail "srun succeeded despite a failing prolog: $out"; fi
[[ $out == *"Job prolog failed"* ]] || fail "srun after a failing prolog said: $out"
slurm_wait_node "drained|Prolog error" 10 || fail "after srun's failing prolog"
sjob=$(squeue -h -t all -n gw-failing-srun -o %i)
[[ -n $sjob ]] || fail "srun's job is not listed"
slurm_wait_job "$sjob" 10 || fail "srun job $sjob after a failing prolog"
# Both seen: CANCELLED (srun cancels it) or FAILED Reason=JobLaunchFailure, whichever lands first.
scontrol -o show job "$sjob" | grep -qE 'JobState=(CANCELLED|FAILED) ' || fail "srun job $sjob: $(scontrol -o show job "$sjob")"

# Healed: with the prolog passing again, resume and release; the held job runs.
rm "$SLURM_T/prolog.fail"
scontrol update nodename="$SLURM_NODE" state=resume || fail "scontrol resume"
slurm_wait_node "idle|none" 10 || fail "after resume"
scontrol release "$job" || fail "scontrol release $job"
slurm_wait_job "$job" 30 || fail "released job $job did not finish"
grep -qx hi "$SLURM_T/failed.$job.out" || fail "released job $job printed no 'hi'"
slurm_wait_node "idle|none" 10 || fail "at the end"

slurm_stop
for f in "$SLURM_T"/run/*.pid; do
  p=$(cat "$f" 2>/dev/null) || continue
  if kill -0 "$p" 2>/dev/null; then fail "$(basename "$f" .pid) (pid $p) still runs after slurm_stop"; fi
done
[[ -z $(_slurm_strays) ]] || fail "left running: $(_slurm_strays | xargs)"
echo "PASS ($((SECONDS - t0)) s)"
