#!/usr/bin/env bash
# no_skips.py must fail a run with a skipped test that is not allowed, and pass one whose skips are.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/junit.xml" <<'XML'
<testsuite><testcase name="A.Runs" status="run"/>
<testcase name="B.Skipped" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/></testcase></testsuite>
XML
: >"$W/none.txt"
printf '# comment\nB\\.Skipped needs a machine with X\n' >"$W/allowed.txt"
printf 'B\\.Skipped\n' >"$W/noreason.txt"
if python3 "$HERE/no_skips.py" "$W/junit.xml" "$W/none.txt" >"$W/out" 2>&1; then
  echo "FAIL: a skip that is not allowed passed"; cat "$W/out"; exit 1
fi
grep -q "B.Skipped" "$W/out" || { echo "FAIL: the skipped test is not named"; cat "$W/out"; exit 1; }
python3 "$HERE/no_skips.py" "$W/junit.xml" "$W/allowed.txt" >"$W/out" 2>&1 || { echo "FAIL: an allowed skip failed"; cat "$W/out"; exit 1; }
if python3 "$HERE/no_skips.py" "$W/junit.xml" "$W/noreason.txt" >"$W/out" 2>&1; then
  echo "FAIL: an allowed skip without a reason was accepted"; exit 1
fi
echo "PASS"
