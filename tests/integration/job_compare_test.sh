#!/usr/bin/env bash
# Install records and job fingerprints across agent restarts (docs/jobs.md, R35/R36): jobs told
# through `slurm prolog` / `slurm epilog` on four simulated installs sharing one data folder.
#  - dgx-h100, then driver-regression (a new driver, every GPU ~12 % slower): `records` holds a
#    second install record naming the driver change, and `job compare` says driver regression;
#  - ageing-gpu, then ageing-gpu-new-driver (GPU 5 ~10 % below its peers under both drivers):
#    `job compare` says ageing hardware, GPU 5, across installs.
# Usage: job_compare_test.sh GPUWARDEN_BINARY
set -euo pipefail

GW=$(readlink -f "${1:?usage: job_compare_test.sh GPUWARDEN_BINARY}")
source "$(dirname "$0")/lib.sh"
export GPUWARDEN_RUNTIME_DIR=$WORK/run ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
DATA=$WORK/data
PORT=$(free_port)
cat >"$WORK/agent.yaml" <<YAML
listen: 127.0.0.1:$PORT
sampling:
  fast_interval: 250ms
YAML

# One agent on SCENARIO runs job ID on all eight GPUs for about 3 s, then stops.
run_job() {  # SCENARIO ID
  "$GW" serve --simulate "$1" --data-dir "$DATA" --config "$WORK/agent.yaml" >>"$WORK/agent.log" 2>&1 &
  local pid=$!
  wait_http "http://127.0.0.1:$PORT/metrics" 30 || fail "the agent on $1 did not start"
  # The first install record is written by the inventory thread: wait for it before the job.
  local end=$((SECONDS + 30))
  local want
  want="\"driver_version\": \"$(expected_driver "$1")\""
  until [[ $("$GW" records --data-dir "$DATA" --json --limit 1) == *"$want"* ]]; do
    ((SECONDS < end)) || fail "no install record for $1"
    sleep 0.2
  done
  SLURM_JOB_ID=$2 SLURM_JOB_GPUS=0,1,2,3,4,5,6,7 "$GW" slurm prolog --data-dir "$DATA" || fail "prolog of $2"
  sleep 3
  SLURM_JOB_ID=$2 SLURM_JOB_GPUS=0,1,2,3,4,5,6,7 "$GW" slurm epilog --data-dir "$DATA" 2>/dev/null || fail "epilog of $2"
  kill "$pid"
  wait "$pid" || true
}
expected_driver() { case $1 in *new-driver | driver-regression) echo 560.28.03 ;; *) echo 550.54.15 ;; esac; }

run_job dgx-h100 a
run_job driver-regression b
"$GW" records --data-dir "$DATA" --kind install >"$WORK/records.txt"
[[ $(wc -l <"$WORK/records.txt") == 2 ]] || fail "install records: $(cat "$WORK/records.txt")"
grep -q '^#2  .*  install  agent  driver_version 550.54.15 -> 560.28.03; nvml_version 12.550.54.15 -> 12.560.28.03$' \
  "$WORK/records.txt" || fail "the second install record: $(cat "$WORK/records.txt")"
grep -q '^#1  .*  install  agent  first record: driver 550.54.15, 8 GPU(s)$' "$WORK/records.txt" || fail "the first install record"

set +e
"$GW" job compare a b --data-dir "$DATA" --json >"$WORK/ab.json"
rc=$?
set -e
[[ $rc == 1 ]] || fail "job compare a b exited $rc: $(cat "$WORK/ab.json")"
python3 - "$WORK/ab.json" <<'PY' || fail "job compare a b: $(cat "$WORK/ab.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["verdict"] == "driver_regression", c["verdict"]
assert c["install_changed"] and {"what": "driver_version", "a": "550.54.15", "b": "560.28.03"} in c["changes"], c["changes"]
assert len(c["gpus"]) == 8 and len(c["slower_gpus"]) == 8 and c["ageing_gpus"] == [], c
for g in c["gpus"]:
    assert -16 < g["change_pct"] < -8, g
assert c["summary"].startswith("driver regression: 8 of 8 shared GPUs are slower at load"), c["summary"]
PY

run_job ageing-gpu c
run_job ageing-gpu-new-driver d
uuid5=$("$GW" job show c --data-dir "$DATA" --json | python3 -c 'import json,sys; print([g["uuid"] for g in json.load(sys.stdin)["gpus"] if g["index"] == 5][0])')
set +e
"$GW" job compare c d --data-dir "$DATA" --json >"$WORK/cd.json"
rc=$?
set -e
[[ $rc == 1 ]] || fail "job compare c d exited $rc: $(cat "$WORK/cd.json")"
python3 - "$WORK/cd.json" "$uuid5" <<'PY' || fail "job compare c d: $(cat "$WORK/cd.json")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["verdict"] == "ageing_hardware", c["verdict"]
assert c["install_changed"] and c["ageing_gpus"] == [sys.argv[2]] and c["slower_gpus"] == [], c
assert "ageing hardware: GPU 5 (" in c["summary"] and c["summary"].endswith("against its peers in both runs, across installs"), c["summary"]
PY
# Jobs on the same healthy install: no difference, exit 0.
run_job dgx-h100 e
"$GW" job compare a e --data-dir "$DATA" >"$WORK/ae.txt" || fail "job compare a e: $(cat "$WORK/ae.txt")"
grep -q '^jobs a and e: no difference: ' "$WORK/ae.txt" || fail "job compare a e: $(cat "$WORK/ae.txt")"
echo PASS
