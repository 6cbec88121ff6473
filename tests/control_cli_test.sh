#!/usr/bin/env bash
# The CPU's speed gate end to end, as .ci/run uses it: scripts/ci-report on configs/quick.yaml
# (LibTorch eager on the CPU), a baseline run, then a head run with the torch provider planted
# 30% slower (OPBENCH_PLANT=torch:slow=0.3). The gate on speed and memory must find it (exit 1,
# SLOWER points listed, its memory points unchanged); every speed point carries the control
# workload's time in each of its rounds, and the diff warns that the runs differ in the plant.
# Usage: control_cli_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"
ci=$src/scripts/ci-report
db=$work/ci.db
check base 0 "$ci" "$src/configs/quick.yaml" --opbench "$bin" --db "$db" --label base --providers torch --device cpu \
  --out "$work/base.md"
check controls 0 "$bin" export label:base --db "$db" --out "$work/base.json"
pycheck every-speed-point-has-a-control '
import json, sys
pts = json.load(open(sys.argv[1]))["runs"][0]["points"]
speed = [p for p in pts if p["params"]["metric"] == "speed"]
assert speed, "no speed points"
for p in speed:
    assert len(p["control"]) == max(1, len(p["rounds"])), (p["title"], p["control"], p["rounds"])
    assert all(c > 0 for c in p["control"]), p["control"]
assert all(not p["control"] for p in pts if p["params"]["metric"] == "memory")
' "$work/base.json"
OPBENCH_PLANT=torch:slow=0.3 check planted-slowdown 1 "$ci" "$src/configs/quick.yaml" --opbench "$bin" --db "$db" \
  --label slow --baseline label:base --providers torch --device cpu --out "$work/slow.md"
contains planted-regressions "$work/slow.md" "## Regressions"
contains planted-warning "$work/slow.md" "the runs set different tuning variables"
pycheck planted-speed-only '
import re, sys
text = open(sys.argv[1]).read()
regs = text.split("## Regressions")[1].split("## Changes")[0]
rows = [l for l in regs.splitlines() if l.startswith("| ") and "SLOWER" in l]
assert len(rows) >= 9, f"only {len(rows)} SLOWER rows"
assert not any("-memory-" in l for l in rows), "a memory point got slower"
' "$work/slow.md"
echo "control_cli_test: $fails failures"
[ "$fails" = 0 ]
