#!/usr/bin/env bash
# The include-graph check must fail when a lower layer includes a higher one: a copy of src/ with
# one such include added is checked and must be refused, naming the file and line.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/src" "$tmp/src"
"$here/include_graph.py" "$tmp/src" "$root/docs/design.md" >/dev/null  # the real tree passes
printf '#include "server/agent.h"\n' >> "$tmp/src/platform/clock.h"
if out=$("$here/include_graph.py" "$tmp/src" "$root/docs/design.md"); then
  echo "FAIL: platform/ including server/ was not caught"; exit 1
fi
grep -q 'src/platform/clock.h:[0-9]*: platform/ may not include "server/agent.h"' <<<"$out" || {
  echo "FAIL: the violation was not named: $out"; exit 1; }
printf '#include "nvml/nvml.h"\n' >> "$tmp/src/sim/world.h"
sed -i '$d' "$tmp/src/platform/clock.h"
if "$here/include_graph.py" "$tmp/src" "$root/docs/design.md" >/dev/null; then
  echo "FAIL: the simulator including nvml/nvml.h was not caught"; exit 1
fi
echo "include graph self-test passed"
