#!/usr/bin/env bash
# What `gpuwarden top` costs while it watches: top on the simulated DGX H100 (8 GPUs) at the default
# 1 s refresh, in a detached tmux session of 120x40 (a real terminal: curses draws every frame),
# CPU from /proc/<pid>/stat (utime+stime) over DURATION s once the first frame is on screen.
# Target: at most 1 % of one core. Usage: bench/top_cpu.sh BUILD_DIR   (DURATION=60 DELAY=1)
set -euo pipefail
BUILD=${1:?usage: top_cpu.sh BUILD_DIR}
GW=$(cd "$BUILD/bin" && pwd)/gpuwarden
DURATION=${DURATION:-60}
DELAY=${DELAY:-1}
source "$(dirname "$0")/lib.sh"
SOCK=$WORK/tmux.sock
trap 'tmux -S "$SOCK" kill-server 2>/dev/null || true; cleanup' EXIT
command -v tmux >/dev/null || { echo "tmux is missing (scripts/setup installs it)" >&2; exit 1; }

tmux -S "$SOCK" new-session -d -s top -x 120 -y 40 "exec '$GW' top --simulate dgx-h100 -d $DELAY"
PID=$(tmux -S "$SOCK" display-message -p -t top '#{pane_pid}')
end=$((SECONDS + 60))
until tmux -S "$SOCK" capture-pane -p -t top | grep -q 'q quit'; do
  ((SECONDS < end)) || { echo "no frame on screen after 60 s" >&2; exit 1; }
  sleep 0.2
done
[[ $(cat "/proc/$PID/comm") == gpuwarden ]] || { echo "pane process $PID is not gpuwarden" >&2; exit 1; }
pct=$(cpu_percent "$PID" "$DURATION")
tmux -S "$SOCK" send-keys -t top q
echo "gpuwarden top: ${pct} % of one core (8 GPUs, every ${DELAY} s, 120x40, ${DURATION} s, $(basename "$BUILD"))"
