#!/usr/bin/env bash
# /metrics under wrk for two gpuwarden binaries, alternating so that both see the same machine:
# ROUNDS rounds of c=1/16/64, SECONDS each, on the simulated DGX H100 sampled every second.
# Prints one line per run: latency p50/p99, requests/s and the server's CPU per scrape (from
# /proc/PID/stat). Usage: bench/agent/compare.sh OLD_BINARY NEW_BINARY   (ROUNDS=3 SECONDS=5)
# IDLE_SOCKETS=1000: the same, while bench/agent/idle_sockets.py holds that many idle connections.
# TLS=1: the NEW agent behind a web configuration (self-signed TLS + basic auth), scraped over
# HTTPS with the password (the OLD one stays plain: the figures are TLS beside plain HTTP).
set -euo pipefail
OLD=${1:?usage: compare.sh OLD_BINARY NEW_BINARY}
NEW=${2:?usage: compare.sh OLD_BINARY NEW_BINARY}
ROUNDS=${ROUNDS:-3}
IDLE=${IDLE_SOCKETS:-0}
TLS=${TLS:-0}
SECS=${SECONDS_PER_RUN:-5}
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
if [[ $TLS == 1 ]]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/key.pem" -out "$WORK/cert.pem" -days 1 \
    -subj /CN=127.0.0.1 2>/dev/null
  printf 'tls_server_config: {cert_file: cert.pem, key_file: key.pem}\nbasic_auth_users: {bench: %s}\n' \
    "'$(printf bench | "$NEW" hash-password)'" >"$WORK/web.yml"
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

run() {  # BINARY LABEL
  local port pid
  port=$(free_port)
  rm -rf "$WORK/data-$2"
  printf 'listen: 127.0.0.1:%s\nsampling: {fast_interval: 1s}\n' "$port" >"$WORK/$2.yaml"
  local scheme=http web=() auth=()
  if [[ $TLS == 1 && $2 == new ]]; then
    scheme=https web=(--web.config.file "$WORK/web.yml") auth=(-H "Authorization: Basic $(printf bench:bench | base64)")
  fi
  "$1" serve --simulate dgx-h100 --config "$WORK/$2.yaml" --data-dir "$WORK/data-$2" "${web[@]}" 2>/dev/null &
  pid=$!
  for _ in $(seq 100); do curl -ksf -o /dev/null "$scheme://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  sleep 2
  local holder=""
  if ((IDLE > 0)); then
    python3 "$HERE/idle_sockets.py" "$port" "$IDLE" >"$WORK/holder.txt" &
    holder=$!
    for _ in $(seq 100); do grep -q holding "$WORK/holder.txt" 2>/dev/null && break; sleep 0.1; done
  fi
  for c in 1 16 64; do
    local t0 t1
    t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    wrk -t "$(( c < 2 ? 1 : 2 ))" -c "$c" -d "${SECS}s" --timeout 2s --latency "${auth[@]}" \
      "$scheme://127.0.0.1:$port/metrics" >"$WORK/wrk.txt" 2>&1 || true
    t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    python3 - "$WORK/wrk.txt" "$t0" "$t1" "$(getconf CLK_TCK)" "$2" "$c" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
t0, t1, ticks, label, c = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
def ms(p):
    v, u = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)", txt, re.M).groups()
    return float(v) / 1000 if u == "us" else float(v) * 1000 if u == "s" else float(v)
m = re.search(r"(\d+) requests in", txt)
n = int(m.group(1)) if m else 0
bad = re.search(r"Non-2xx or 3xx responses: (\d+)", txt)
errs = re.search(r"Socket errors: (.*)", txt)
ok = n - (int(bad.group(1)) if bad else 0)
if ok <= 0:
    print(f"{label:4s} c={c:>2}: no scrape answered ({errs.group(1) if errs else 'no requests completed'})")
    sys.exit(0)
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", txt).group(1))
extra = f"  errors: {errs.group(1)}" if errs else ""
if bad:
    extra += f"  non-2xx: {bad.group(1)} of {n}"
print(f"{label:4s} c={c:>2}: p50 {ms(50):.3f} ms  p99 {ms(99):.3f} ms  {rps:8.0f} req/s  server CPU {(t1-t0)/ticks/n*1e6:6.1f} us/scrape{extra}")
PY
  done
  [[ -n $holder ]] && { kill "$holder"; wait "$holder" 2>/dev/null || true; }
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

for _ in $(seq "$ROUNDS"); do run "$OLD" old; run "$NEW" new; done
