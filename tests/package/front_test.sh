#!/usr/bin/env bash
# The two programs (src/cli/front_route.h): the front links little, answers its own commands
# without the full program, hands every other command line to gpuwarden-full unchanged (argv[0]
# included, so Slurm's hook names still pick their command), and the process keeps its PID and
# its name across the exec (systemd's Type=notify and pidof depend on both).
set -euo pipefail
BIN=$(cd "$1" && pwd)  # the build's bin/ (gpuwarden and gpuwarden-full)
fail() { echo "FAIL: $*" >&2; exit 1; }
WORK=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$WORK"' EXIT
pid=

# 1. What the front records as needed: the C library alone in a release build (the C++ runtime is
#    linked in, fmt is header-only); a sanitizer build adds its runtimes and the shared C++
#    runtime they need. None of the agent's libraries either way.
needed=$(readelf -d "$BIN/gpuwarden" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[[ -n $needed ]] || fail "readelf found no NEEDED entries in $BIN/gpuwarden"
if grep -q '^libasan' <<<"$needed"; then
  allowed='^(ld-linux-x86-64\.so\.2|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libasan\.so\.[0-9]+|libubsan\.so\.[0-9]+)$'
else
  allowed='^(ld-linux-x86-64\.so\.2|libm\.so\.6|libc\.so\.6)$'
fi
while read -r lib; do
  [[ $lib =~ $allowed ]] || fail "the front needs $lib (all: $(echo $needed))"
done <<<"$needed"
full_needed=$(readelf -d "$BIN/gpuwarden-full" | grep -c NEEDED)
(( full_needed > 10 )) || fail "gpuwarden-full needs only $full_needed libraries: is this test reading the right programs?"

# 2. The front's own commands work with no full program at all; every other one reaches for it and
#    says which paths it tried.
export GPUWARDEN_FULL=$WORK/missing
version=$("$BIN/gpuwarden" --version) || fail "--version needed the full program"
[[ $version =~ ^gpuwarden\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "--version printed '$version'"
# The front answers a lone --version before building its command line; with anything else CLI11
# does, and the full program too: all three print the same line.
[[ $("$BIN/gpuwarden" --version --json) == "$version" ]] || fail "--version --json printed something else"
[[ $("$BIN/gpuwarden-full" --version) == "$version" ]] || fail "the full program's --version differs"
rc=0
"$BIN/gpuwarden" --version >/dev/full 2>/dev/null || rc=$?
[[ $rc == 1 ]] || fail "--version into a full device exited $rc, not 1"
rows=$("$BIN/gpuwarden" --simulate dgx-h100 query --query-gpu=index,pci.bus_id --format=csv,noheader) ||
  fail "query needed the full program"
[[ $(wc -l <<<"$rows") == 8 ]] || fail "query from the front gave: $rows"
rc=0
"$BIN/gpuwarden" --simulate dgx-h100 discovery >"$WORK/out" 2>"$WORK/err" || rc=$?
[[ $rc == 3 ]] || fail "discovery without the full program exited $rc, not 3"
grep -q "cannot run the full program gpuwarden-full: tried $WORK/missing" "$WORK/err" ||
  fail "the error does not name the path: $(cat "$WORK/err")"
unset GPUWARDEN_FULL

# 3. Every other command line reaches the full program unchanged: global options before the command
#    and after it, and a Slurm hook's name in argv[0].
a=$("$BIN/gpuwarden" --simulate dgx-h100 discovery --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))')
b=$("$BIN/gpuwarden" discovery --json --simulate=dgx-h100 | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpus"]))')
[[ $a == 8 && $b == 8 ]] || fail "discovery through the front saw $a and $b GPUs, not 8"
ln -s "$BIN/gpuwarden" "$WORK/gpuwarden-slurm-healthcheck"
"$WORK/gpuwarden-slurm-healthcheck" --help | grep -q "healthcheck" || fail "argv[0] did not pick the Slurm healthcheck"
"$BIN/gpuwarden" --help | grep -q "serve" || fail "--help does not list the full program's commands"

# 4. Across the exec: same PID, the full program's image, and the name ps and pidof show.
"$BIN/gpuwarden" --simulate dgx-h100 dmon -d 1 -c 600 >/dev/null &
pid=$!
for _ in $(seq 200); do
  # The exec, then the rename at the top of the full program's main: wait for the second.
  [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == */gpuwarden-full && $(cat "/proc/$pid/comm" 2>/dev/null) == gpuwarden ]] && break
  sleep 0.05
done
[[ $(readlink "/proc/$pid/exe") == */gpuwarden-full ]] || fail "PID $pid did not become gpuwarden-full"
[[ $(cat "/proc/$pid/comm") == gpuwarden ]] || fail "the process is named '$(cat /proc/$pid/comm)', not gpuwarden"
echo "front: $(echo $needed | wc -w) libraries needed (full: $full_needed); routing, argv[0], PID and name kept"
