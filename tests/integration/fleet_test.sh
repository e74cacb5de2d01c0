#!/usr/bin/env bash
# `gpuwarden fleet` against Debian's Prometheus scraping three agents on the simulator, each naming
# its node with metrics.host_value (docs/fleet.md):
#  - node-a: fault-straggler 40 s in (GPU 5's worker has stopped), job 17 on its eight GPUs;
#  - node-b: fault-xid-48 40 s in (GPU 2 critical: ecc_dbe, xid), job 17 also on Slurm's GPUs 4, 5;
#  - node-c: zero-rpm-idle (four idle RTX 4090s).
# The report must count 3 nodes, 20 GPUs, 4 idle, 1 unhealthy with its findings, and name
# node-a's GPU 5 as job 17's straggler across its two nodes.
# Usage: fleet_test.sh GPUWARDEN_BINARY. Exit 77 (skipped) when prometheus is not installed.
set -euo pipefail

GW=$(readlink -f "${1:?usage: fleet_test.sh GPUWARDEN_BINARY}")
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
if [[ ! -x $PROMETHEUS ]]; then
  echo "SKIP: $PROMETHEUS missing (apt-get install prometheus)"
  exit 77
fi
source "$(dirname "$0")/lib.sh"
export GPUWARDEN_RUNTIME_DIR=$WORK/run ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}

targets=()
start_node() {  # NAME SCENARIO SIM_START
  local port
  port=$(free_port)
  printf 'listen: 127.0.0.1:%s\nsampling:\n  fast_interval: 500ms\nmetrics:\n  host_value: %s\n' "$port" "$1" \
    >"$WORK/$1.yaml"
  GPUWARDEN_SIM_START=$3 "$GW" serve --simulate "$2" --config "$WORK/$1.yaml" --data-dir "$WORK/$1" \
    >"$WORK/$1.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$port/healthz" 30 || fail "the agent of $1 did not start"
  targets+=("'127.0.0.1:$port'")
}
start_node node-a fault-straggler 40
start_node node-b fault-xid-48 40
start_node node-c zero-rpm-idle 0

SLURM_JOB_ID=17 SLURM_JOB_GPUS=0,1,2,3,4,5,6,7 "$GW" slurm prolog --data-dir "$WORK/node-a" || fail "prolog on node-a"
SLURM_JOB_ID=17 SLURM_JOB_GPUS=4,5 "$GW" slurm prolog --data-dir "$WORK/node-b" || fail "prolog on node-b"

PROM_PORT=$(free_port)
cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuwarden
    static_configs:
      - targets: [$(IFS=,; echo "${targets[*]}")]
YAML
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$PROM_PORT/-/ready" 30 || fail "prometheus did not become ready"

# Until every node's GPUs, its health and node-b's finding are in, with a few samples each.
end=$((SECONDS + 60))
until set +e; "$GW" fleet --prometheus "http://127.0.0.1:$PROM_PORT" --window 10s --json >"$WORK/fleet.json" 2>"$WORK/fleet.err"
  rc=$?
  set -e
  python3 - "$WORK/fleet.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(1)
sys.exit(0 if r["totals"]["gpus"] == 20 and r["totals"]["unhealthy"] == 1 and len(r["jobs"]) == 1
         and r["jobs"][0]["slowest"] and r["jobs"][0]["slowest"]["straggler"] else 1)
PY
do
  ((SECONDS < end)) || fail "the fleet report never settled (exit $rc): $(cat "$WORK/fleet.err" "$WORK/fleet.json")"
  sleep 1
done
[[ $rc == 2 ]] || fail "fleet exited $rc with an unhealthy GPU (2 expected)"
python3 - "$WORK/fleet.json" <<'PY' || fail "the fleet report: $(cat "$WORK/fleet.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["naming"] == "dcgm" and r["host_label"] == "Hostname", (r["naming"], r["host_label"])
assert r["totals"] == {"nodes": 3, "gpus": 20, "idle": 4, "unhealthy": 1}, r["totals"]
nodes = {n["node"]: n for n in r["nodes"]}
assert nodes["node-a"] == {"node": "node-a", "gpus": 8, "idle": 0, "unhealthy": 0}, nodes["node-a"]
assert nodes["node-b"] == {"node": "node-b", "gpus": 8, "idle": 0, "unhealthy": 1}, nodes["node-b"]
assert nodes["node-c"] == {"node": "node-c", "gpus": 4, "idle": 4, "unhealthy": 0}, nodes["node-c"]
bad = [g for g in r["unhealthy"] if g["state"] in ("critical", "fatal")]
assert len(bad) == 1 and bad[0]["node"] == "node-b" and bad[0]["gpu"] == "2", bad
rules = sorted(f["rule"] for f in bad[0]["findings"])
assert "ecc_dbe" in rules and all(f["severity"] in ("critical", "fatal") for f in bad[0]["findings"] if f["rule"] == "ecc_dbe"), rules
assert sorted(i["node"] for i in r["idle"]) == ["node-c"] * 4, r["idle"]
job = r["jobs"][0]
assert (job["job"], job["label"], job["nodes"], job["gpus"]) == ("17", "hpc_job", 2, 10), job
s = job["slowest"]
assert (s["node"], s["gpu"], s["straggler"]) == ("node-a", "5", True), s
assert s["utilization_pct"] <= 5 and s["peers_median_pct"] >= 50, s
assert r["top"][0]["job"] == "17" and job["power_w"] > 1000, job
print("fleet:", r["totals"], "straggler", s)
PY
# The text report says the same.
set +e
"$GW" fleet --prometheus "http://127.0.0.1:$PROM_PORT" --window 10s >"$WORK/fleet.txt"
set -e
grep -q "^3 node(s), 20 GPU(s): 4 idle, 1 unhealthy (mean over 10s)$" "$WORK/fleet.txt" || fail "text: $(cat "$WORK/fleet.txt")"
grep -q "node-a GPU 5: .* STRAGGLER" "$WORK/fleet.txt" || fail "text: $(cat "$WORK/fleet.txt")"
# Prometheus gone: said, exit 3.
set +e
"$GW" fleet --prometheus "http://127.0.0.1:1" --timeout 2 >/dev/null 2>"$WORK/gone.err"
rc=$?
set -e
[[ $rc == 3 ]] || fail "fleet against no Prometheus exited $rc"
grep -q "cannot ask http://127.0.0.1:1" "$WORK/gone.err" || fail "no Prometheus: $(cat "$WORK/gone.err")"
echo PASS
