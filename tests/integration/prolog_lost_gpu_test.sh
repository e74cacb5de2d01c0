#!/usr/bin/env bash
# Slurm's GPU numbers on a node with a lost GPU (docs/slurm.md): Slurm counts GPUs by device minor,
# and a GPU that fell off the bus tells NVML neither its minor nor its bus. The simulated DGX H100
# has GPU 3 at minor 1, lost from the start (fault-gpu-lost, 40 s in).
#  - With no driver list (the host's /proc is not the simulated driver's), no Slurm number can be
#    matched: the prolog refuses every job rather than guess, and nothing is recorded.
#  - With a --root whose /proc/driver/nvidia/gpus names all eight minors, the lost GPU's minor is
#    the one no other GPU claims: a job on Slurm's GPU 1 is refused because GPU 3 is lost (fatal), a job on
#    Slurm's GPU 0 runs on GPU 2 (minor 0), and its epilog ends it.
# Usage: prolog_lost_gpu_test.sh GPUWARDEN_BINARY
set -euo pipefail

GW=$(readlink -f "${1:?usage: prolog_lost_gpu_test.sh GPUWARDEN_BINARY}")
source "$(dirname "$0")/lib.sh"
export GPUWARDEN_RUNTIME_DIR=$WORK/run ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} GPUWARDEN_SIM_START=40
PORT=$(free_port)
cat >"$WORK/agent.yaml" <<YAML
listen: 127.0.0.1:$PORT
sampling:
  fast_interval: 250ms
YAML

start_agent() {  # DATA_DIR [--root DIR]
  local data=$1
  shift
  "$GW" serve --simulate fault-gpu-lost --data-dir "$data" --config "$WORK/agent.yaml" "$@" >>"$WORK/agent.log" 2>&1 &
  AGENT=$!
  PIDS+=("$AGENT")
  wait_http "http://127.0.0.1:$PORT/metrics" 30 || fail "the agent did not start"
  # The lost GPU's health: fatal once the rules have seen it (the sampler marks it lost a pass
  # before, and a prolog between the two is refused with other words: "GPU 3 is lost (unknown …)").
  local end=$((SECONDS + 30)) health
  # health exits 2 (fatal) once it has: read its output, not its status.
  until health=$("$GW" health --data-dir "$data" --json 2>/dev/null || true) &&
    [[ $health == *'"gpu_state": "lost"'* && $health == *'"status": "fatal"'* ]]; do
    ((SECONDS < end)) || fail "GPU 3 never shown lost and fatal: $health"
    sleep 0.2
  done
}
stop_agent() {
  kill "$AGENT"
  wait "$AGENT" || true
}
prolog() {  # DATA_DIR JOB GPUS; prints the exit code
  local rc=0
  SLURM_JOB_ID=$2 SLURM_JOB_GPUS=$3 "$GW" slurm prolog --data-dir "$1" 2>>"$WORK/prolog.err" || rc=$?
  echo "$rc"
}

# 1. No driver list: nothing is guessed.
start_agent "$WORK/data1"
[[ $(prolog "$WORK/data1" 11 0) == 1 ]] || fail "the prolog let job 11 through: $(cat "$WORK/prolog.err")"
grep -q "job 11: refused: Slurm's GPU 0 cannot be matched to a GPU: the device minor of GPU 3 (lost) is known neither" \
  "$WORK/prolog.err" || fail "the refusal of job 11: $(cat "$WORK/prolog.err")"
[[ $("$GW" job list --data-dir "$WORK/data1" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))') == 0 ]] ||
  fail "job 11 was recorded"
stop_agent

# 2. The driver's list under --root: the minors match the scenario's buses.
while read -r bus minor; do
  mkdir -p "$WORK/root/proc/driver/nvidia/gpus/$bus"
  printf 'Model: \t\t NVIDIA H100 80GB HBM3\nBus Location: \t %s\nDevice Minor: \t %s\nGPU Excluded:\t No\n' \
    "$bus" "$minor" >"$WORK/root/proc/driver/nvidia/gpus/$bus/information"
done <<LIST
0000:18:00.0 2
0000:2a:00.0 3
0000:3a:00.0 0
0000:5d:00.0 1
0000:9a:00.0 6
0000:ab:00.0 7
0000:ba:00.0 4
0000:db:00.0 5
LIST
start_agent "$WORK/data2" --root "$WORK/root"
[[ $(prolog "$WORK/data2" 12 1) == 1 ]] || fail "the prolog let job 12 onto the lost GPU: $(cat "$WORK/prolog.err")"
grep -q "job 12: refused: GPU 3 is fatal: gpu_lost: GPU 3 is lost" "$WORK/prolog.err" || fail "the refusal of job 12: $(cat "$WORK/prolog.err")"
[[ $(prolog "$WORK/data2" 13 0) == 0 ]] || fail "the prolog refused job 13: $(cat "$WORK/prolog.err")"
"$GW" job show 13 --data-dir "$WORK/data2" --json >"$WORK/job13.json"
python3 - "$WORK/job13.json" <<'PY' || fail "job 13: $(cat "$WORK/job13.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["state"] == "running", j["state"]
assert [g["index"] for g in j["gpus"]] == [2], j["gpus"]
PY
SLURM_JOB_ID=13 SLURM_JOB_GPUS=0 "$GW" slurm epilog --data-dir "$WORK/data2" 2>>"$WORK/prolog.err" || fail "epilog of 13"
[[ $("$GW" job show 13 --data-dir "$WORK/data2" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])') == ended ]] ||
  fail "job 13 did not end"
stop_agent
echo "PASS"
