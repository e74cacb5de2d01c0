#!/usr/bin/env bash
# The agent behind a web configuration (TLS + basic auth, the Prometheus exporters' format):
# Debian's Prometheus scrapes it over HTTPS with a password; a job with the wrong password is
# refused (401), plain HTTP gets no answer on the TLS port, /healthz alone is open, and a second
# agent that requires client certificates serves only a client signed by its CA.
# Usage: prometheus_tls_test.sh GPUWARDEN_BINARY. Exit 77 (skipped) when prometheus or openssl is
# not installed.
set -euo pipefail

GW=${1:?usage: prometheus_tls_test.sh GPUWARDEN_BINARY}
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
for tool in "$PROMETHEUS" /usr/bin/openssl /usr/bin/curl; do
  [[ -x $tool ]] || { echo "SKIP: $tool missing (scripts/setup installs it)"; exit 77; }
done

source "$(dirname "$0")/lib.sh"
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" || true; }

# A CA, the server's certificate for 127.0.0.1, and a client certificate signed by the CA.
cd "$WORK"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj "/CN=test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
  -extfile san.ext 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout client.key -out client.csr -subj "/CN=prometheus" 2>/dev/null
openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout other.key -out other.pem -days 2 -subj "/CN=stranger" 2>/dev/null

HASH=$(printf 's3cret' | "$GW" hash-password --cost 6)
[[ $HASH == '$2b$06$'* ]] || fail "hash-password printed '$HASH'"
cat >web.yml <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server.key
basic_auth_users:
  prometheus: '$HASH'
YAML
cat >web-mtls.yml <<YAML
tls_server_config:
  cert_file: server.pem
  key_file: server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.pem
YAML

AGENT_PORT=$(free_port)
MTLS_PORT=$(free_port)
PROM_PORT=$(free_port)
"$GW" serve --simulate dgx-h100 --listen "127.0.0.1:$AGENT_PORT" --data-dir "$WORK/data" \
  --web.config.file "$WORK/web.yml" >"$WORK/agent.log" 2>&1 &
PIDS+=($!)
"$GW" serve --simulate dgx-h100 --listen "127.0.0.1:$MTLS_PORT" --data-dir "$WORK/data-mtls" \
  --web.config.file "$WORK/web-mtls.yml" >"$WORK/agent-mtls.log" 2>&1 &
PIDS+=($!)

TLS=(--cacert "$WORK/ca.pem")
end=$((SECONDS + 30))
until [[ $(code "${TLS[@]}" "https://127.0.0.1:$AGENT_PORT/healthz") == 200 ]]; do
  ((SECONDS < end)) || fail "the TLS agent did not answer /healthz"
  sleep 0.3
done

# Authentication on every endpoint but /healthz; the right password is served.
[[ $(code "${TLS[@]}" "https://127.0.0.1:$AGENT_PORT/metrics") == 401 ]] || fail "/metrics without a password is not 401"
[[ $(code "${TLS[@]}" "https://127.0.0.1:$AGENT_PORT/api/v1/events") == 401 ]] || fail "/api/v1/events without a password is not 401"
[[ $(code "${TLS[@]}" -u prometheus:wrong "https://127.0.0.1:$AGENT_PORT/metrics") == 401 ]] || fail "a wrong password is not 401"
[[ $(code "${TLS[@]}" -u nobody:s3cret "https://127.0.0.1:$AGENT_PORT/metrics") == 401 ]] || fail "an unknown user is not 401"
[[ $(code "${TLS[@]}" -u prometheus:s3cret "https://127.0.0.1:$AGENT_PORT/api/v1/gpus") == 200 ]] || fail "the right password is not served"
curl -s -D "$WORK/h401" -o /dev/null "${TLS[@]}" "https://127.0.0.1:$AGENT_PORT/metrics"
grep -qi '^WWW-Authenticate: Basic' "$WORK/h401" || fail "401 without WWW-Authenticate: $(cat "$WORK/h401")"
# No plain HTTP on the TLS port.
if curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$AGENT_PORT/healthz"; then fail "plain HTTP was answered on the TLS port"; fi

# Client certificates: required and checked against the CA.
until [[ $(code "${TLS[@]}" --cert client.pem --key client.key "https://127.0.0.1:$MTLS_PORT/healthz") == 200 ]]; do
  ((SECONDS < end)) || fail "the mTLS agent did not serve a client signed by its CA"
  sleep 0.3
done
[[ $(code "${TLS[@]}" "https://127.0.0.1:$MTLS_PORT/metrics") != 200 ]] || fail "served without a client certificate"
[[ $(code "${TLS[@]}" --cert other.pem --key other.key "https://127.0.0.1:$MTLS_PORT/metrics") != 200 ]] ||
  fail "served a client certificate the CA did not sign"

# Prometheus over TLS with basic auth; a second job with the wrong password must be refused.
cat >prometheus.yml <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuwarden
    scheme: https
    tls_config: {ca_file: $WORK/ca.pem}
    basic_auth: {username: prometheus, password: s3cret}
    static_configs: [{targets: ['127.0.0.1:$AGENT_PORT']}]
  - job_name: wrong-password
    scheme: https
    tls_config: {ca_file: $WORK/ca.pem}
    basic_auth: {username: prometheus, password: guess}
    static_configs: [{targets: ['127.0.0.1:$AGENT_PORT']}]
  - job_name: mtls
    scheme: https
    tls_config: {ca_file: $WORK/ca.pem, cert_file: $WORK/client.pem, key_file: $WORK/client.key}
    static_configs: [{targets: ['127.0.0.1:$MTLS_PORT']}]
YAML
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)

end=$((SECONDS + 40))
until curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/targets" >"$WORK/targets.json" 2>/dev/null &&
  python3 - "$WORK/targets.json" <<'PY'
import json, sys
t = {x["labels"]["job"]: x for x in json.load(open(sys.argv[1]))["data"]["activeTargets"]}
ok = t.get("gpuwarden", {}).get("health") == "up" and t.get("mtls", {}).get("health") == "up"
bad = t.get("wrong-password", {})
refused = bad.get("health") == "down" and "401" in bad.get("lastError", "")
sys.exit(0 if ok and refused else 1)
PY
do
  ((SECONDS < end)) || fail "targets: $(cat "$WORK/targets.json" 2>/dev/null)"
  sleep 0.5
done
n=$(curl -sf -G "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode 'query=count(DCGM_FI_DEV_GPU_TEMP{job="gpuwarden"})' |
  python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
[[ $n == 8 ]] || fail "Prometheus holds $n temperature series from the TLS agent, expected 8"
echo "PASS: Prometheus scraped 8 GPUs over TLS with basic auth and with a client certificate; wrong password refused (401); no plain HTTP on the TLS port"
