#!/usr/bin/env bash
# Measures the running agent on the simulated DGX H100 (8 GPUs, every numeric field):
#   1. CPU time per second and peak RSS at fast_interval 1 s and 100 ms (10 Hz), over DURATION s,
#      from /proc/<pid>/stat (utime+stime) and /proc/<pid>/status (VmHWM). The simulator runs
#      inside the agent; its own cost per pass comes from agent_bench (BM_SimulatorOnly) and is
#      reported beside, and subtracted.
#   2. /metrics latency p50/p99 and requests/s at 1, 16 and 64 connections with wrk, and the same
#      against Debian's prometheus-node-exporter, as CPU time per exported series.
# Usage: bench/agent/run.sh BUILD_DIR   (BUILD_DIR configured with -DGW_BUILD_BENCH=ON for step 1's
# simulator figure; without agent_bench that figure is skipped). DURATION=30 WRK_SECONDS=10.
set -euo pipefail
BUILD=${1:?usage: run.sh BUILD_DIR}
GW=$BUILD/bin/gpuwarden
DURATION=${DURATION:-30}
WRK_SECONDS=${WRK_SECONDS:-10}
source "$(dirname "$0")/../lib.sh"

start_at() {  # FAST_INTERVAL PORT → pid in AGENT_PID
  cat >"$WORK/agent-$1.yaml" <<YAML
listen: 127.0.0.1:$2
sampling: {fast_interval: $1}
YAML
  AGENT_PORT=$2
  start_agent "agent-$1" dgx-h100 --config "$WORK/agent-$1.yaml"
}

sim_us_per_pass=""
if [[ -x $BUILD/bin/agent_bench ]]; then
  "$BUILD/bin/agent_bench" --benchmark_format=json --benchmark_min_time=1 >"$WORK/bench.json" 2>/dev/null
  read -r sim_us_per_pass agent_us_per_pass render_us render_gz_us tail_us tail_gz_us < <(python3 - "$WORK/bench.json" <<'PY'
import json, sys
b = {x["name"]: x for x in json.load(open(sys.argv[1]))["benchmarks"]}
def us(n): return round(b[n]["cpu_time"], 2)  # microseconds (Unit kMicrosecond)
print(us("BM_SimulatorOnly"), us("BM_SamplingPass/prof:1"), us("BM_RenderMetrics/gzip:0"), us("BM_RenderMetrics/gzip:1"),
      us("BM_ScrapeCachedPage/gzip:0"), us("BM_ScrapeCachedPage/gzip:1"))
PY
)
  echo "== per pass (agent_bench): simulator alone ${sim_us_per_pass} us, sampling pass incl. simulator ${agent_us_per_pass} us; /metrics page render ${render_us} us, +gzip ${render_gz_us} us (once per pass); per scrape of a rendered page ${tail_us} us, gzip ${tail_gz_us} us"
fi

echo "== agent CPU and memory, 8 GPUs x every numeric field, ${DURATION}s each"
for interval in 1s 100ms; do
  port=$(free_port)
  start_at "$interval" "$port"
  sleep 3  # past start-up and the first enumeration
  t0=$(cpu_ticks "$AGENT_PID")
  sleep "$DURATION"
  t1=$(cpu_ticks "$AGENT_PID")
  hwm=$(hwm_kb "$AGENT_PID")
  passes_per_s=$(python3 -c "print(1/($(echo "$interval" | sed 's/ms$/\/1000/; s/s$//')))")
  python3 - "$t0" "$t1" "$TICKS" "$DURATION" "$hwm" "$interval" "${sim_us_per_pass:-}" "$passes_per_s" <<'PY'
import sys
t0, t1, ticks, dur, hwm = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
interval, sim, pps = sys.argv[6], sys.argv[7], float(sys.argv[8])
cpu = (t1 - t0) / ticks / dur * 100
line = f"fast_interval {interval}: CPU {cpu:.3f} % of one core (incl. simulator), peak RSS {hwm/1024:.1f} MiB"
if sim:
    s = float(sim) * pps / 1e6 * 100
    line += f"; simulator alone ~{s:.3f} %, agent without simulator ~{max(cpu - s, 0):.3f} %"
print(line)
PY
  kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true
done

if ! command -v wrk >/dev/null; then echo "wrk missing (apt-get install wrk): skipping latency"; exit 0; fi

wrk_run() {  # URL CONNECTIONS PID SERIES LABEL
  local t0 t1
  t0=$(cpu_ticks "$3")
  wrk -t "$(( $2 < 4 ? $2 : 4 ))" -c "$2" -d "${WRK_SECONDS}s" --latency "$1" >"$WORK/wrk.txt" 2>&1
  t1=$(cpu_ticks "$3")
  python3 - "$WORK/wrk.txt" "$t0" "$t1" "$TICKS" "$4" "$5" "$2" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
t0, t1, ticks, series, label, conns = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
def lat(p):
    m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", txt, re.M)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", txt).group(1))
reqs = int(re.search(r"(\d+) requests in", txt).group(1))
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", txt)
cpu_per_scrape_us = (t1 - t0) / ticks / max(reqs, 1) * 1e6
print(f"{label:14s} c={conns:>2}: p50 {lat(50):.3f} ms  p99 {lat(99):.3f} ms  {rps:9.0f} req/s  "
      f"server CPU {cpu_per_scrape_us:7.1f} us/scrape = {cpu_per_scrape_us*1000/series:6.1f} ns/series ({series} series)"
      + (f"  NON-2xx {errors.group(1)}" if errors else ""))
PY
}

series_of() { curl -s "$1" | grep -vc '^#'; }

echo "== /metrics under load (wrk, ${WRK_SECONDS}s per run; the server and wrk share this machine's $(nproc) CPUs)"
port=$(free_port)
start_at 1s "$port"
sleep 2
n=$(series_of "http://127.0.0.1:$port/metrics")
for c in 1 16 64; do wrk_run "http://127.0.0.1:$port/metrics" "$c" "$AGENT_PID" "$n" gpuwarden; done
kill "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null || true

NE=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
# node_exporter refuses more than --web.max-requests (default 40) concurrent scrapes with 503; its
# c=64 row is only meaningful with the limit raised, as done here.
if [[ -x $NE ]]; then
  port=$(free_port)
  "$NE" --web.listen-address="127.0.0.1:$port" --web.max-requests=0 >"$WORK/ne.log" 2>&1 &
  NE_PID=$!
  PIDS+=("$NE_PID")
  wait_http "http://127.0.0.1:$port/metrics"
  n=$(series_of "http://127.0.0.1:$port/metrics")
  for c in 1 16 64; do wrk_run "http://127.0.0.1:$port/metrics" "$c" "$NE_PID" "$n" node_exporter; done
else
  echo "prometheus-node-exporter missing: skipping the comparison"
fi
