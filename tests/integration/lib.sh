# Shared by the integration scripts (sourced): a scratch folder removed at exit with every
# process in PIDS, fail() that shows the logs, a free local port and wait_http.
WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  for f in "$WORK"/*.log; do echo "--- $f"; tail -n 30 "$f"; done
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Waits until URL answers 2xx, for at most SECONDS; fails (1) otherwise.
wait_http() {  # URL SECONDS
  local end=$((SECONDS + $2))
  until curl -sf -o /dev/null "$1"; do
    ((SECONDS < end)) || return 1
    sleep 0.2
  done
}
