#!/usr/bin/env bash
# Real Prometheus against `gpuwarden serve --simulate dgx-h100`: Prometheus scrapes the agent every
# second; its HTTP API must then show 8 DCGM_FI_DEV_GPU_TEMP series with dcgm-exporter's labels and
# plausible values. `promtool check metrics` must accept the native exposition too.
# Usage: prometheus_test.sh GPUWARDEN_BINARY. Exit 77 (skipped) when prometheus is not installed.
set -euo pipefail

GW=${1:?usage: prometheus_test.sh GPUWARDEN_BINARY}
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
PROMTOOL=${PROMTOOL:-/usr/bin/promtool}
if [[ ! -x $PROMETHEUS || ! -x $PROMTOOL ]]; then
  echo "SKIP: $PROMETHEUS or $PROMTOOL missing (apt-get install prometheus)"
  exit 77
fi

source "$(dirname "$0")/lib.sh"

AGENT_PORT=$(free_port)
NATIVE_PORT=$(free_port)
PROM_PORT=$(free_port)

"$GW" serve --simulate dgx-h100 --listen "127.0.0.1:$AGENT_PORT" --data-dir "$WORK/data" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
"$GW" serve --simulate dgx-h100 --listen "127.0.0.1:$NATIVE_PORT" --data-dir "$WORK/data-native" \
  --metrics-naming native >"$WORK/agent-native.log" 2>&1 &
PIDS+=($!)

cat >"$WORK/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuwarden
    static_configs:
      - targets: ['127.0.0.1:$AGENT_PORT']
YAML
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

wait_http "http://127.0.0.1:$AGENT_PORT/healthz" 20 || fail "agent did not become healthy"
wait_http "http://127.0.0.1:$NATIVE_PORT/healthz" 20 || fail "native agent did not become healthy"
wait_http "http://127.0.0.1:$PROM_PORT/-/ready" 30 || fail "prometheus did not become ready"

# The target must be up (health "up" in /api/v1/targets).
end=$((SECONDS + 20))
until curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
sys.exit(0 if t and all(x["health"] == "up" for x in t) else 1)'; do
  ((SECONDS < end)) || fail "the scrape target never came up: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets")"
  sleep 0.5
done

# Eight temperature series with dcgm-exporter's labels and plausible values.
end=$((SECONDS + 15))
until curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query?query=DCGM_FI_DEV_GPU_TEMP" >"$WORK/query.json" &&
  python3 - "$WORK/query.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "success", r
series = r["data"]["result"]
if len(series) != 8:
    print(f"expected 8 series, got {len(series)}"); sys.exit(1)
gpus = sorted(int(s["metric"]["gpu"]) for s in series)
assert gpus == list(range(8)), gpus
for s in series:
    m = s["metric"]
    for label in ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "instance", "job"):
        assert m.get(label), f"label {label} missing in {m}"
    assert m["UUID"].startswith("GPU-"), m
    # "nvidia" + the minor number, which scenarios/dgx-h100.yaml sets apart from the index.
    assert m["device"] == "nvidia" + "23016745"[int(m["gpu"])], m
    assert "H100" in m["modelName"], m
    v = float(s["value"][1])
    assert 15 <= v <= 100, f"implausible temperature {v} in {m}"
uuids = {s["metric"]["UUID"] for s in series}
assert len(uuids) == 8, uuids
print("8 series, temperatures", sorted(float(s["value"][1]) for s in series))
PY
do
  ((SECONDS < end)) || fail "DCGM_FI_DEV_GPU_TEMP through Prometheus: $(cat "$WORK/query.json")"
  sleep 0.5
done

# Power and utilisation come through too (the dashboard's queries).
for q in 'count(DCGM_FI_DEV_POWER_USAGE)' 'count(DCGM_FI_DEV_GPU_UTIL)' 'count(DCGM_FI_DEV_FB_USED)' \
  'count(gpuwarden_gpu_state{state="up"}==1)'; do
  n=$(curl -sf -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$q" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
  [[ $n == 8 ]] || fail "$q = $n, expected 8"
done

# promtool accepts both namings (native is the one written to Prometheus' conventions).
curl -sf "http://127.0.0.1:$NATIVE_PORT/metrics" >"$WORK/native.prom" || fail "native /metrics"
grep -q '^gpuwarden_gpu_temperature_celsius{' "$WORK/native.prom" || fail "native output lacks gpuwarden_gpu_temperature_celsius"
if ! "$PROMTOOL" check metrics <"$WORK/native.prom" >"$WORK/promtool.log" 2>&1; then
  fail "promtool check metrics (native): $(cat "$WORK/promtool.log")"
fi
echo "PASS: Prometheus scraped 8 GPUs; promtool accepts the native exposition"
