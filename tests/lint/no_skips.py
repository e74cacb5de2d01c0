#!/usr/bin/env python3
"""Fails the run when a test was skipped that is not allowed to be: a skipped test leaves ctest
green, so a machine without Prometheus, libFuzzer or tmpfs would otherwise pass "100 %" having
tested less. scripts/setup installs everything the suite needs; a skip that is right on some
machines goes in tests/allowed_skips.txt with its reason.

Usage: no_skips.py CTEST_JUNIT_XML ALLOWED_SKIPS_FILE
"""
import re
import sys
import xml.etree.ElementTree as ET

junit, allowed_path = sys.argv[1], sys.argv[2]
allowed = []
for line in open(allowed_path, encoding="utf-8"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    name, _, reason = line.partition(" ")
    if not reason.strip():
        sys.exit(f"{allowed_path}: '{name}' needs a reason after the test name")
    allowed.append(re.compile(name))

try:
    root = ET.parse(junit).getroot()
except (OSError, ET.ParseError) as e:
    sys.exit(f"no_skips: cannot read {junit}: {e}")
skipped = [tc.get("name") for tc in root.iter("testcase") if tc.find("skipped") is not None]
bad = [n for n in skipped if not any(p.fullmatch(n) for p in allowed)]
for n in bad:
    print(f"SKIPPED, and not allowed to be: {n} (see its output above; scripts/setup should install what it needs)")
if bad:
    print(f"no_skips: {len(bad)} test(s) skipped; the run fails (tests/allowed_skips.txt lists the allowed ones)")
    sys.exit(1)
print(f"no_skips: {len(skipped)} skipped, all allowed")
