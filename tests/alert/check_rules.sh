#!/bin/sh
# promtool check + unit tests of deploy/prometheus/gpuwarden-rules.yml. Fails (never skips)
# when promtool is missing.
set -eu
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v promtool >/dev/null 2>&1; then
  echo "promtool not found: install it with 'apt-get install -y prometheus' (Debian ships promtool there)" >&2
  exit 1
fi
promtool check rules "$root/deploy/prometheus/gpuwarden-rules.yml"
promtool test rules "$root/tests/alert/rules_test.yml"
