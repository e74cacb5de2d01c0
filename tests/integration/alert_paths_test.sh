#!/usr/bin/env bash
# One alert, two routes (docs/alerts.md): the agent pushes its incidents to a real Alertmanager
# (Debian's prometheus-alertmanager), and a real Prometheus evaluates deploy/prometheus/gpuwarden-rules.yml
# over the same agent with the alert_relabel_configs of deploy/prometheus/prometheus.yml and sends
# to the same Alertmanager. The same fault (fault-xid-48: GPU 2's uncorrectable ECC error with its
# Xid 48) must end as one alert per condition there, GpuEccDbe and GpuXid{code="48"}: same
# alertname, same labels, Prometheus' copy merged into the agent's. The Xid goes through
# gpuwarden_xid_errors_total, whose new series shows 0 for metrics.xid_zero_hold first, so
# Prometheus' increase() sees the first Xid 48.
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

# The agent, with its own alertmanager sink (route 1). GPU 2's errors come at t = 30 s; the agent
# starts at 10 s, so Prometheus scrapes it before they come and its NVML event set is registered
# (as on a real node, an event from before registration is not delivered).
cat >"$WORK/agent.yaml" <<YAML
listen: 127.0.0.1:$AGENT_PORT
sampling:
  fast_interval: 200ms
  slow_interval: 1s
metrics:
  xid_zero_hold: 4s
alerts:
  sinks:
    - type: alertmanager
      url: $AM
      generator_url: http://gpuwarden-agent.invalid/
YAML
GPUWARDEN_SIM_START=10 "$GW" serve --simulate fault-xid-48 --config "$WORK/agent.yaml" --data-dir "$WORK/data" \
  >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$AGENT_PORT/healthz" 30 || fail "agent did not become healthy"

# Prometheus over the shipped rules and alert relabelling (route 2), scraping from the start but
# sending nowhere yet (its Alertmanager path is wrong), so that the agent's copies arrive first.
prometheus_config() {  # ALERTMANAGER_PATH_PREFIX
  python3 - "$SRC/deploy/prometheus/prometheus.yml" "$WORK/prometheus.yml" "$SRC/deploy/prometheus/gpuwarden-rules.yml" \
    "127.0.0.1:$AGENT_PORT" "127.0.0.1:$AM_PORT" "$1" <<'PY'
import sys, yaml
src, dst, rules, agent, am, prefix = sys.argv[1:]
c = yaml.safe_load(open(src))
# An ASan build on a loaded machine can take over a second to answer: a generous scrape timeout.
c["global"] = {"scrape_interval": "2s", "scrape_timeout": "2s", "evaluation_interval": "1s"}
c["scrape_configs"] = [{"job_name": "gpuwarden", "static_configs": [{"targets": [agent]}]}]
c["rule_files"] = [rules]
c["alerting"]["alertmanagers"] = [{"path_prefix": prefix, "static_configs": [{"targets": [am]}]}]
yaml.safe_dump(c, open(dst + ".new", "w"))
PY
  mv "$WORK/prometheus.yml.new" "$WORK/prometheus.yml"
}
prometheus_config /nowhere
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" --rules.alert.resend-delay=1s \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PROM_PID=$!
PIDS+=($PROM_PID)
wait_http "http://127.0.0.1:$PROM_PORT/-/ready" 30 || fail "prometheus did not become ready"

# Every alert Alertmanager holds, as "alertname gpu code severity component instance generator" lines;
# checks that no two of them are the same condition and that each carries only the agent's labels.
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

# Route 1 delivers.
end=$((SECONDS + 60))
until alerts >"$WORK/am-agent.txt" 2>"$WORK/am-check.log" && grep -q '^GpuEccDbe 2 - critical gpu ' "$WORK/am-agent.txt" &&
  grep -q '^GpuXid 2 48 critical gpu ' "$WORK/am-agent.txt"; do
  ((SECONDS < end)) || fail "the agent's GpuEccDbe and GpuXid for GPU 2 never reached Alertmanager: $(cat "$WORK/am-agent.txt" "$WORK/am-check.log")"
  sleep 0.5
done
n=$(grep -c 'gpuwarden-agent.invalid' "$WORK/am-agent.txt")
[[ $n == 2 ]] || fail "the alerts did not come from the agent: $(cat "$WORK/am-agent.txt")"
host=$(awk '$1 == "GpuEccDbe" {print $6}' "$WORK/am-agent.txt")
[[ $host == "$(hostname)" ]] || fail "the agent's instance is '$host', not the host name $(hostname)"
echo "agent route:"; cat "$WORK/am-agent.txt"

# Prometheus fires both: the Xid counter's series was there at 0 before Xid 48, so increase() saw it.
end=$((SECONDS + 60))
until curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/alerts" | python3 -c '
import json, sys
a = json.load(sys.stdin)["data"]["alerts"]
got = sorted((x["labels"]["alertname"], x["labels"]["gpu"], x["labels"].get("code", "-"), x["state"]) for x in a)
sys.exit(0 if got == [("GpuEccDbe", "2", "-", "firing"), ("GpuXid", "2", "48", "firing")] else 1)
'; do
  ((SECONDS < end)) || fail "Prometheus does not fire GpuEccDbe and GpuXid 48 for GPU 2: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts")
$(curl -s -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=gpuwarden_xid_errors_total[5m]')"
  sleep 0.5
done

# Route 2 delivers: point Prometheus at the Alertmanager (a reload keeps its alerts' state).
prometheus_config /
kill -HUP "$PROM_PID"

# Prometheus' copies land on the agent's alerts: each one alert now carries Prometheus' generatorURL
# (Alertmanager keeps the latest copy's), and no second one appears.
end=$((SECONDS + 90))
until alerts >"$WORK/am-both.txt" 2>"$WORK/am-check.log" &&
  grep -q "^GpuEccDbe 2 - critical gpu $host http://[^ ]*:$PROM_PORT/" "$WORK/am-both.txt" &&
  grep -q "^GpuXid 2 48 critical gpu $host http://[^ ]*:$PROM_PORT/" "$WORK/am-both.txt"; do
  [[ -s $WORK/am-check.log ]] && fail "$(cat "$WORK/am-check.log")"
  ((SECONDS < end)) || fail "Prometheus' GpuEccDbe and GpuXid never merged into the agent's: $(cat "$WORK/am-both.txt")
prometheus alerts: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/alerts")
prometheus targets: $(curl -s "http://127.0.0.1:$PROM_PORT/api/v1/targets")"
  sleep 0.5
done
for a in GpuEccDbe GpuXid; do
  n=$(grep -c "^$a " "$WORK/am-both.txt")
  [[ $n == 1 ]] || fail "$n $a alerts in Alertmanager: $(cat "$WORK/am-both.txt")"
done
# The healthy GPUs raise nothing on either route.
if awk '$2 != "2" && $2 != "-"' "$WORK/am-both.txt" | grep -q .; then
  fail "alerts for GPUs other than 2: $(cat "$WORK/am-both.txt")"
fi
echo "both routes:"; cat "$WORK/am-both.txt"
echo "PASS: the agent's and Prometheus' GpuEccDbe and GpuXid 48 for GPU 2 are one alert each in Alertmanager"
