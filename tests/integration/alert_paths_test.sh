#!/usr/bin/env bash
# One alert, two routes (docs/alerts.md): the agent pushes its incidents to a real Alertmanager
# (Debian's prometheus-alertmanager), and a real Prometheus evaluates deploy/prometheus/gpuwarden-rules.yml
# over the same agent with the alert_relabel_configs of deploy/prometheus/prometheus.yml and sends
# to the same Alertmanager. The same fault (fault-ecc-dbe: GPU 4's uncorrectable ECC errors) must
# end as one alert per condition there: same alertname, same labels, Prometheus' copy merged into
# the agent's.
# Usage: alert_paths_test.sh GPUWARDEN_BINARY SOURCE_DIR. Exit 77 (skipped) when a program is missing.
set -euo pipefail

GW=${1:?usage: alert_paths_test.sh GPUWARDEN_BINARY SOURCE_DIR}
SRC=$(cd "${2:?usage: alert_paths_test.sh GPUWARDEN_BINARY SOURCE_DIR}" && pwd)
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
ALERTMANAGER=${ALERTMANAGER:-/usr/bin/prometheus-alertmanager}
for p in "$PROMETHEUS" "$ALERTMANAGER"; do
  if [[ ! -x $p ]]; then
    echo "SKIP: $p missing (apt-get install prometheus prometheus-alertmanager)"
    exit 77
  fi
done

source "$(dirname "$0")/lib.sh"

wait_http() {  # URL SECONDS
  local end=$((SECONDS + $2))
  until curl -sf -o /dev/null "$1"; do
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
}

AGENT_PORT=$(free_port)
PROM_PORT=$(free_port)
AM_PORT=$(free_port)
AM="http://127.0.0.1:$AM_PORT"

cat >"$WORK/alertmanager.yml" <<YAML
route:
  receiver: null-receiver
  group_by: [alertname, instance, gpu]
receivers:
  - name: null-receiver
YAML
"$ALERTMANAGER" --config.file="$WORK/alertmanager.yml" --storage.path="$WORK/am" --cluster.listen-address= \
  --web.listen-address="127.0.0.1:$AM_PORT" --log.level=warn >"$WORK/alertmanager.log" 2>&1 &
PIDS+=($!)
wait_http "$AM/-/ready" 30 || fail "alertmanager did not become ready"

# Route 1: the agent's own alertmanager sink. GPU 4's errors come at t=30 s; start past them.
cat >"$WORK/agent.yaml" <<YAML
listen: 127.0.0.1:$AGENT_PORT
sampling:
  fast_interval: 200ms
  slow_interval: 1s
alerts:
  sinks:
    - type: alertmanager
      url: $AM
      generator_url: http://gpuwarden-agent.invalid/
YAML
GPUWARDEN_SIM_START=40 "$GW" serve --simulate fault-ecc-dbe --config "$WORK/agent.yaml" --data-dir "$WORK/data" \
  >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$AGENT_PORT/healthz" 30 || fail "agent did not become healthy"

# Every alert Alertmanager holds, as "alertname gpu code severity generator" lines; checks that no
# two of them are the same condition and that each carries only the agent's labels.
alerts() {
  curl -sf "$AM/api/v2/alerts" | python3 -c '
import json, sys
alerts = json.load(sys.stdin)
agent_labels = {"alertname", "severity", "component", "instance", "gpu", "UUID", "code"}
seen = {}
for a in alerts:
    l = a["labels"]
    extra = set(l) - agent_labels
    if extra:
        sys.exit(f"labels beyond the agent set {sorted(extra)} in {l}")
    key = (l["alertname"], l.get("gpu", ""), l.get("code", ""))
    if key in seen:
        sys.exit(f"one condition, two alerts:\n{seen[key]}\n{l}")
    seen[key] = l
    print(l["alertname"], l.get("gpu", "-"), l.get("code", "-"), l["severity"], l.get("component", "-"),
          l.get("instance", "-"), a.get("generatorURL", ""))
'
}

end=$((SECONDS + 30))
until alerts >"$WORK/am-agent.txt" 2>"$WORK/am-check.log" && grep -q '^GpuEccDbe 4 - critical gpu ' "$WORK/am-agent.txt"; do
  ((SECONDS < end)) || fail "the agent's GpuEccDbe for GPU 4 never reached Alertmanager: $(cat "$WORK/am-agent.txt" "$WORK/am-check.log")"
  sleep 0.5
done
grep -q 'gpuwarden-agent.invalid' "$WORK/am-agent.txt" || fail "the alert did not come from the agent: $(cat "$WORK/am-agent.txt")"
host=$(awk '$1 == "GpuEccDbe" {print $6}' "$WORK/am-agent.txt")
[[ $host == "$(hostname)" ]] || fail "the agent's instance is '$host', not the host name $(hostname)"
echo "agent route:"; cat "$WORK/am-agent.txt"

# Route 2: Prometheus over the shipped rules and alert relabelling, sending to the same Alertmanager.
python3 - "$SRC/deploy/prometheus/prometheus.yml" "$WORK/prometheus.yml" "$SRC/deploy/prometheus/gpuwarden-rules.yml" \
  "127.0.0.1:$AGENT_PORT" "127.0.0.1:$AM_PORT" <<'PY'
import sys, yaml
src, dst, rules, agent, am = sys.argv[1:]
c = yaml.safe_load(open(src))
# An ASan build on a loaded machine can take over a second to answer: a generous scrape timeout.
c["global"] = {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"}
c["global"]["scrape_interval"] = c["global"]["scrape_timeout"] = "3s"
c["scrape_configs"] = [{"job_name": "gpuwarden", "static_configs": [{"targets": [agent]}]}]
c["rule_files"] = [rules]
c["alerting"]["alertmanagers"] = [{"static_configs": [{"targets": [am]}]}]
yaml.safe_dump(c, open(dst, "w"))
PY
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$PROM_PORT/-/ready" 30 || fail "prometheus did not become ready"

# Prometheus' copy lands on the agent's alert: the one alert now carries Prometheus' generatorURL
# (Alertmanager keeps the latest copy's), and no second GpuEccDbe appears.
end=$((SECONDS + 90))
until alerts >"$WORK/am-both.txt" 2>"$WORK/am-check.log" &&
  grep -q "^GpuEccDbe 4 - critical gpu $host http://[^ ]*:$PROM_PORT/" "$WORK/am-both.txt"; do
  [[ -s $WORK/am-check.log ]] && fail "$(cat "$WORK/am-check.log")"
  ((SECONDS < end)) || fail "Prometheus' GpuEccDbe never merged into the agent's: $(cat "$WORK/am-both.txt")
prometheus alerts: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts")
prometheus targets: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets")"
  sleep 0.5
done
# Prometheus did fire it (and sent it): the merge above is not the agent's copy alone.
curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | python3 -c '
import json, sys
a = [x for x in json.load(sys.stdin)["data"]["alerts"] if x["labels"]["alertname"] == "GpuEccDbe"]
assert len(a) == 1 and a[0]["state"] == "firing" and a[0]["labels"]["gpu"] == "4", a
' || fail "Prometheus does not show GpuEccDbe firing for GPU 4"
n=$(grep -c '^GpuEccDbe ' "$WORK/am-both.txt")
[[ $n == 1 ]] || fail "$n GpuEccDbe alerts in Alertmanager: $(cat "$WORK/am-both.txt")"
# The healthy GPUs raise nothing on either route.
if awk '$2 != "4" && $2 != "-"' "$WORK/am-both.txt" | grep -q .; then
  fail "alerts for GPUs other than 4: $(cat "$WORK/am-both.txt")"
fi
echo "both routes:"; cat "$WORK/am-both.txt"
echo "PASS: the agent's and Prometheus' GpuEccDbe for GPU 4 are one alert in Alertmanager"
