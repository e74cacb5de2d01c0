# Shared by the whole-process benchmarks (sourced by bench/top_cpu.sh and bench/agent/*.sh): a
# scratch folder removed at exit with every process in PIDS, a free local port, waiting for an
# endpoint, a process's CPU, and an agent started on a simulated scenario. GW must be set to the
# gpuwarden binary before start_agent.
WORK=$(mktemp -d)
PIDS=()
TICKS=$(getconf CLK_TCK)
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export GPUWARDEN_RUNTIME_DIR=${GPUWARDEN_RUNTIME_DIR:-$WORK/run}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
# Waits until URL answers 2xx, for at most 20 s; fails (1) otherwise.
wait_http() { for _ in $(seq 200); do curl -sf -o /dev/null "$1" && return 0; sleep 0.1; done; return 1; }
# The CPU PID used over the next SECONDS, in percent of one core (two decimals).
cpu_percent() {  # PID SECONDS
  local a b
  a=$(cpu_ticks "$1")
  sleep "$2"
  b=$(cpu_ticks "$1")
  awk -v a="$a" -v b="$b" -v t="$TICKS" -v d="$2" 'BEGIN { printf "%.2f", (b - a) / t / d * 100 }'
}
# Starts `gpuwarden serve --simulate SCENARIO` with its data in $WORK/NAME and waits for it:
# AGENT_PORT and AGENT_PID name it afterwards (and PORT_<NAME>, PID_<NAME>, with _ for any
# character a variable name cannot hold). Further arguments go
# to serve; without --config it listens on a free port of 127.0.0.1, with one the caller sets
# AGENT_PORT to the port the configuration names first.
start_agent() {  # NAME SCENARIO [SERVE ARGS...]
  local name=$1 scenario=$2
  shift 2
  local listen=()
  if [[ " $* " != *" --config "* ]]; then
    AGENT_PORT=$(free_port)
    listen=(--listen "127.0.0.1:$AGENT_PORT")
  fi
  "$GW" serve --simulate "$scenario" --data-dir "$WORK/$name" "${listen[@]}" "$@" 2>"$WORK/$name.log" &
  AGENT_PID=$!
  PIDS+=("$AGENT_PID")
  local var=${name//[^A-Za-z0-9_]/_}
  eval "PORT_$var=\$AGENT_PORT PID_$var=\$AGENT_PID"
  wait_http "http://127.0.0.1:$AGENT_PORT/healthz" || { echo "agent $name did not start:" >&2; tail "$WORK/$name.log" >&2; exit 1; }
}
