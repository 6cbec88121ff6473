#!/usr/bin/env bash
# The CPU's speed gate end to end, as .ci/run uses it: scripts/ci-report on configs/quick.yaml
# (LibTorch eager on the CPU), a baseline run, then a head run with the torch provider planted
# 30% slower (OPBENCH_PLANT=torch:slow=0.3). The gate on speed and memory must find it (exit 1:
# SLOWER points listed, no memory point among them, or the provider SLOWER as a whole); every
# speed point carries the control workload's time in each of its rounds, and the diff warns that
# the runs differ in the plant.
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
# Three planted runs are allowed, as in .ci/run: one of them must be caught.
for attempt in 1 2 3; do
  OPBENCH_PLANT=torch:slow=0.3 "$ci" "$src/configs/quick.yaml" --opbench "$bin" --db "$db" --label "slow-$attempt" \
    --baseline label:base --providers torch --device cpu --out "$work/slow.md" >"$work/out" 2>"$work/err"
  st=$?
  [ $st = 1 ] && break
  [ $st = 0 ] || break
done
contains planted-warning "$work/slow.md" "the runs set different tuning variables"
if [ $st = 1 ]; then
  echo "ok   planted-slowdown (run $attempt)"
  pycheck planted-speed-only '
import sys
text = open(sys.argv[1]).read()
whole = "torch as a whole: SLOWER" in text
assert whole or "## Regressions" in text, "exit 1 without a regression shown"
if "## Regressions" in text:
    regs = text.split("## Regressions")[1].split("## Changes")[0]
    rows = [l for l in regs.splitlines() if l.startswith("| ") and "SLOWER" in l]
    assert rows or whole, "no SLOWER row"
    assert not any("-memory-" in l for l in regs.splitlines()), "a memory point regressed"
' "$work/slow.md"
else
  echo "FAIL planted-slowdown: ci-report exit $st"; fails=$((fails+1))
fi
echo "control_cli_test: $fails failures"
[ "$fails" = 0 ]
