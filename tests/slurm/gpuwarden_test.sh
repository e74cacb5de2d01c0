#!/usr/bin/env bash
# gpuwarden on a real Slurm 22.05 (docs/slurm.md), against an agent on the simulator:
#  - slurmd takes the gres.conf `gpuwarden slurm gres` writes (8 GPUs, Type=h100);
#  - an srun job and a batch job go through `slurm prolog` / `slurm epilog` (links named gpuwarden-slurm-*): while
#    it runs, `job list` shows it and its GPU's series carry hpc_job; after it, `job show --json`
#    has its accounting, with the Xid 48 that hit its GPU during the job;
#  - Slurm's HealthCheckProgram (`slurm healthcheck`) drains the node after that fault with a
#    "gpuwarden: GPU 2 ..." reason in sinfo -R, leaves it drained on the next runs, resumes it once
#    the GPU is marked healthy, and never resumes a node an admin drained;
#  - a broken scontrol is reported and changes nothing;
#  - with the GPU critical, the prolog refuses a job: Slurm drains the node ("Prolog error") and
#    holds the job, which never ran.
# fault-xid-48: GPU 2 (minor 0, so Slurm's GPU 0) gets a double-bit ECC error and Xid 48 at t = 30 s.
# Usage: gpuwarden_test.sh GPUWARDEN_BINARY. Exit 77 only when not root or Slurm is missing.
set -euo pipefail

GW=$(readlink -f "${1:?usage: gpuwarden_test.sh GPUWARDEN_BINARY}")
source "$(dirname "$0")/lib.sh"
slurm_test_begin sinfo sbatch squeue curl
AGENT_PID=
stop_agent() {
  [[ -n $AGENT_PID ]] || return 0
  kill "$AGENT_PID" 2>/dev/null || true
  wait "$AGENT_PID" 2>/dev/null || true
  AGENT_PID=
}
slurm_test_cleanup() { stop_agent; }
fail() {
  echo "FAIL: $*"
  echo "--- node: $(slurm_node_state "${SLURM_NODE:-gwnode1}" 2>&1 || true)"
  squeue 2>&1 || true
  _slurm_logs
  for f in "$SLURM_T"/*.log "$SLURM_T"/*.err; do
    [[ -e $f ]] || continue
    echo "--- $f"
    tail -n 30 "$f"
  done
  exit 1
}
wait_for() {  # SECONDS DESCRIPTION COMMAND...
  local end=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    ((SECONDS < end)) || fail "waited in vain: $what"
    sleep 0.3
  done
}

export GPUWARDEN_RUNTIME_DIR=$SLURM_T/run-gw
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
AGENT_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Counters (ECC, retired pages) are read every second here, not every 10 s: the job's 16 s must
# hold readings on both sides of the fault.
cat >"$SLURM_T/agent.yaml" <<YAML
listen: 127.0.0.1:$AGENT_PORT
sampling:
  fast_interval: 500ms
  slow_interval: 1s
YAML
start_agent() {  # SCENARIO SIM_START DATA_DIR
  echo "$3" >"$SLURM_T/data-dir"
  GPUWARDEN_SIM_START=$2 "$GW" serve --simulate "$1" --data-dir "$3" --config "$SLURM_T/agent.yaml" \
    >>"$SLURM_T/agent.log" 2>&1 &
  AGENT_PID=$!
  wait_for 30 "the agent answers" curl -sf -o /dev/null "http://127.0.0.1:$AGENT_PORT/metrics"
}

# Slurm runs its programs without arguments or PATH: links named after the command, in wrappers
# that give the agent's folder; their stderr is kept (slurmd does not log a prolog's).
mkdir -p "$SLURM_T/bin"
for c in prolog epilog healthcheck; do
  ln -s "$GW" "$SLURM_T/bin/gpuwarden-slurm-$c"
  cat >"$SLURM_T/$c.sh" <<SH
#!/bin/bash
[[ $c != healthcheck || ! -e "$SLURM_T/healthcheck.off" ]] || exit 0
export GPUWARDEN_RUNTIME_DIR="$GPUWARDEN_RUNTIME_DIR" ASAN_OPTIONS="$ASAN_OPTIONS" SLURM_CONF="$SLURM_T/slurm.conf"
export GPUWARDEN_DATA_DIR=\$(/bin/cat "$SLURM_T/data-dir") PATH=/usr/bin:/bin
"$SLURM_T/bin/gpuwarden-slurm-$c" 2>>"$SLURM_T/$c.err" >>"$SLURM_T/$c.out"
rc=\$?
echo "\$(/bin/date +%s) \${SLURM_JOB_ID:-} exit \$rc" >>"$SLURM_T/$c.log"
exit 0
SH
  chmod +x "$SLURM_T/$c.sh"
done
# The prolog's exit status is what refuses a job: keep it.
sed -i 's/^exit 0$/exit $(tail -n1 "'"${SLURM_T//\//\\/}"'\/prolog.log" | cut -d" " -f4)/' "$SLURM_T/prolog.sh"

# gres.conf as gpuwarden writes it for the simulated DGX H100, its devices moved to the
# harness's character devices (slurmd needs real ones).
"$GW" slurm gres --simulate dgx-h100 --node gwnode1 >"$SLURM_T/gres.gpuwarden" || fail "slurm gres"
grep -q '^#   NodeName=gwnode1 Gres=gpu:h100:8$' "$SLURM_T/gres.gpuwarden" || fail "gres.conf: $(cat "$SLURM_T/gres.gpuwarden")"
sed "s|File=/dev/|File=$SLURM_T/dev/|" "$SLURM_T/gres.gpuwarden" >"$SLURM_T/gres.in"
SLURM_GRES_CONF=$SLURM_T/gres.in
SLURM_GPUS=8
SLURM_GPU_TYPE=h100
SLURM_PROLOG=$SLURM_T/prolog.sh
SLURM_EPILOG=$SLURM_T/epilog.sh
SLURM_HEALTHCHECK=$SLURM_T/healthcheck.sh
SLURM_HEALTHCHECK_INTERVAL=2
cd "$SLURM_T"

# The agent starts at simulated t = 18 s: the fault comes about 12 s later.
start_agent fault-xid-48 18 "$SLURM_T/data1"
slurm_start || fail "slurm_start"
scontrol -o show node "$SLURM_NODE" | grep -q ' Gres=gpu:h100:8 ' || fail "slurmd did not take gres.conf: $(scontrol -o show node "$SLURM_NODE")"

# An srun job on two GPUs goes through the prolog and the epilog: recorded, ended, on GPUs 2 and 3
# (minors 0 and 1).
sjob=$(srun --gres=gpu:2 bash -c 'echo $SLURM_JOB_ID') || fail "srun --gres=gpu:2"
wait_for 20 "srun job $sjob ended" bash -c "'$GW' job show $sjob --data-dir '$SLURM_T/data1' --json 2>/dev/null | grep -q '\"state\": \"ended\"'"
"$GW" job show "$sjob" --data-dir "$SLURM_T/data1" --json |
  python3 -c 'import json,sys; j=json.load(sys.stdin); assert sorted(g["index"] for g in j["gpus"]) == [2, 3], j' ||
  fail "srun job $sjob's GPUs"

# A job on Slurm's GPU 0 (minor 0: NVML's GPU 2) that runs across the fault.
job=$(sbatch --parsable --gres=gpu:1 -o "$SLURM_T/job.%j.out" --wrap 'sleep 16') || fail "sbatch"
GWD=(--data-dir "$SLURM_T/data1")
wait_for 20 "job $job listed as running" bash -c "'$GW' job list ${GWD[*]} | grep -q '^$job  running '"
uuid2=$("$GW" job show "$job" "${GWD[@]}" --json | python3 -c 'import json,sys; g=json.load(sys.stdin)["gpus"]; assert len(g)==1 and g[0]["index"]==2, g; print(g[0]["uuid"])') ||
  fail "job $job is not on GPU 2: $("$GW" job show "$job" "${GWD[@]}" --json)"
wait_for 10 "hpc_job=\"$job\" on GPU 2's series" bash -c \
  "curl -s http://127.0.0.1:$AGENT_PORT/metrics | grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",.*hpc_job=\"$job\"}'"
if curl -s "http://127.0.0.1:$AGENT_PORT/metrics" | grep '^DCGM_FI_DEV_GPU_UTIL{' | grep -v 'gpu="2"' | grep -q hpc_job; then
  fail "another GPU carries hpc_job"
fi

# The fault hits GPU 2 during the job; Slurm's health check drains the node.
wait_for 40 "sinfo -R names GPU 2" bash -c "sinfo -R -h -o '%E' | grep -q '^gpuwarden: GPU 2 '"
reason=$(sinfo -R -h -o '%E')
echo "drained: $reason"
slurm_wait_job "$job" 40 || fail "job $job did not finish"
scontrol -o show job "$job" | grep -q 'JobState=COMPLETED' || fail "job $job: $(scontrol -o show job "$job")"
wait_for 10 "job $job ended" bash -c "'$GW' job show $job ${GWD[*]} --json | grep -q '\"state\": \"ended\"'"
"$GW" job show "$job" "${GWD[@]}" --json >"$SLURM_T/job.json"
python3 - "$SLURM_T/job.json" "$job" <<'PY' || fail "job $job's accounting: $(cat "$SLURM_T/job.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["job_id"] == sys.argv[2] and j["source"] == "slurm" and j["user"] == "root" and j["uid"] == 0, j
assert 14 <= j["duration_s"] <= 30, j["duration_s"]
g = j["gpus"][0]
assert g["index"] == 2 and g["samples"] >= 10, g
assert g["xids"] == {"48": 1}, g["xids"]
assert g["ecc_dbe"] >= 1, g["ecc_dbe"]
assert g["energy_j"] > 1000 and g["energy_source"] == "counter", g["energy_j"]
assert 0 < g["utilization_pct"]["mean"] <= g["utilization_pct"]["max"] <= 100, g["utilization_pct"]
assert g["memory_used_max_bytes"] > 0 and g["power_w"]["max"] > 0 and g["temperature_c"]["max"] > 0, g
PY
grep -q "job $job: process .* still holds GPU 2" "$SLURM_T/epilog.err" || fail "the epilog named no leftover process"
grep -q "not killed" "$SLURM_T/epilog.err" && fail "the epilog tried to kill without being asked"

# Idempotent: later runs leave our drain as it is (same reason, same time stamp).
stamp=$(scontrol -o show node "$SLURM_NODE" | sed -n 's/.*Reason=.*\[\(.*\)\]$/\1/p')
sleep 5
[[ $(scontrol -o show node "$SLURM_NODE" | sed -n 's/.*Reason=.*\[\(.*\)\]$/\1/p') == "$stamp" ]] || fail "the drain was redone"
# A broken scontrol: reported, nothing changed.
if out=$(GPUWARDEN_DATA_DIR=$SLURM_T/data1 "$GW" slurm healthcheck --node "$SLURM_NODE" --scontrol /bin/false 2>&1); then
  fail "healthcheck with a broken scontrol exited 0: $out"
fi
[[ $out == *"nothing changed"* ]] || fail "healthcheck with a broken scontrol said: $out"

# Repaired: the GPU reset clears its error counts (here: an agent on a healthy DGX H100), and the
# health check resumes the node it drained. Marking the incidents healthy alone does not: the
# uncorrectable-error count is still there, so the node stays drained.
"$GW" incidents set-healthy "$uuid2" "${GWD[@]}" >/dev/null || fail "set-healthy"
sleep 5
[[ $(slurm_node_state) == "drained|gpuwarden: GPU 2 "* ]] || fail "resumed while GPU 2 still counts its error: $(slurm_node_state)"
stop_agent
start_agent dgx-h100 0 "$SLURM_T/data-healthy"
wait_for 30 "the node resumed" bash -c "[[ \$(sinfo -h -N -n $SLURM_NODE -o %T) == idle ]]"
[[ -z $(sinfo -R -h -o '%E') ]] || fail "sinfo -R after the resume: $(sinfo -R -h -o '%E')"

# An admin's drain stays, whatever the health check thinks.
scontrol update NodeName="$SLURM_NODE" State=DRAIN Reason="admin: fan replaced, burn-in pending" || fail "admin drain"
sleep 6
[[ $(slurm_node_state) == "drained|admin: fan replaced, burn-in pending" ]] || fail "the admin's drain was touched: $(slurm_node_state)"
scontrol update NodeName="$SLURM_NODE" State=RESUME || fail "resume"
slurm_wait_node "idle|none" 10 || fail "after the admin's resume"

# The prolog refuses a job on a critical GPU. The health check is paused so that only the prolog
# can drain; a new agent starts after the fault, with GPU 2 critical from its first pass.
touch "$SLURM_T/healthcheck.off"
stop_agent
start_agent fault-xid-48 40 "$SLURM_T/data2"
GWD=(--data-dir "$SLURM_T/data2")
wait_for 20 "GPU 2 critical" bash -c "'$GW' health ${GWD[*]} >/dev/null; [[ \$? == 2 ]]"
job=$(sbatch --parsable --gres=gpu:1 -o "$SLURM_T/refused.%j.out" --wrap 'echo ran') || fail "sbatch (refused)"
wait_for 30 "job $job held after its prolog" bash -c "scontrol -o show job $job | grep -q 'Reason=launch_failed_requeued_held'"
slurm_wait_node "drained|Prolog error" 10 || fail "after the refusing prolog"
grep -q "job $job: refused: GPU 2 (GPU-[0-9a-f-]*) is critical" "$SLURM_T/prolog.err" || fail "the prolog's refusal: $(cat "$SLURM_T/prolog.err")"
if grep -qx ran "$SLURM_T/refused.$job.out" 2>/dev/null; then fail "job $job ran on a critical GPU"; fi
"$GW" job show "$job" "${GWD[@]}" >/dev/null 2>&1 && fail "a refused job was recorded"

echo "PASS"
