#!/usr/bin/env bash
# An op added the way docs/adding-an-op.md says, end to end on the CPU: the test-only op
# toy_scale (tests/toy_op/: its spec, its eager provider, its config) in opbench_toy, a build of
# opbench with the toy linked in. It lists with its facts, sweeps, reports in the reference
# format with its own titles and bytes, and its report reads back through import.
# Usage: toy_op_test.sh OPBENCH_TOY TOY_DIR
set -u
bin=$1; toy=$2
. "$(dirname "$0")/cli_lib.sh"
db=$work/toy.db
title=toy_scale-speed-fwd-batch2-dim16-scale3-fp32

# its facts, from its OpSpec alone
check list 0 "$bin" list --op toy_scale --device cpu
contains list-op "$work/out" "toy_scale: a test-only op: o = scale * x; x (b, n, d)"
contains list-provider "$work/out" "torch: LibTorch eager [runs here]"
check list-json 0 "$bin" list --format json --device cpu --op toy_scale --at n=8
pycheck list-json-facts '
import json, sys
op = json.load(open(sys.argv[1]))["ops"][0]
assert op["name"] == "toy_scale" and op["modes"] == ["fwd", "bwd"] and op["x_axes"] == ["n"], op
assert [t["shape"] for t in op["inputs"]] == [[2, 8, 16]], op["inputs"]
' "$work/out"
# the real ops are still there: the toy is one more op, not a replacement
check list-all 0 "$bin" list --format json --device cpu
pycheck list-all-ops 'import json,sys; n=[o["name"] for o in json.load(open(sys.argv[1]))["ops"]]; assert "toy_scale" in n and "act" in n, n' "$work/out"

# a bad axis value is refused by the op's own validation, naming the field
printf 'op: toy_scale\nx: {n: [8]}\nparams: {scale: 5000}\n' >"$work/bad.yaml"
check bad-scale 2 "$bin" sweep "$work/bad.yaml" --device cpu --db "$work/none.db" --dry-run
contains bad-scale-msg "$work/err" "scale"

# swept on the CPU and reported
check sweep 0 "$bin" sweep "$toy/toy_scale.yaml" --device cpu --db "$db" --label toy --progress none --out "$work/report.md"
contains report-notation "$work/report.md" "- to: torch"
contains report-title "$work/report.md" "$title:"
for t in speed-fwd speed-bwd memory-fwd memory-bwd; do
  for s in 2 3; do contains "report-$t-scale$s" "$work/report.md" "toy_scale-$t-batch2-dim16-scale$s-fp32:"; done
done
# every point measured, none failed, its bytes from the spec's min_bytes (2 |x|, fp32)
check csv 0 "$bin" report --db "$db" --format csv
pycheck csv-points '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2 * 2 * 2 * 2, len(rows)  # scales x modes x metrics x n
for r in rows:
    assert r["error"] == "" and float(r["value"]) > 0, r
    if r["title"].startswith("toy_scale-speed"):
        assert float(r["bytes"]) == 2 * 2 * int(r["x"]) * 16 * 4, r
' "$work/out"
# the report is a reference-format document: it reads back as the same tables
check import 0 "$bin" import "$work/report.md" --db "$work/back.db"
check report-back 0 "$bin" report --db "$work/back.db"
pycheck report-back-tables '
import sys
def tables(path):
    out, cur = [], None
    for line in open(path).read().split("\n"):
        if line.startswith("toy_scale-") and line.endswith(":"):
            cur = [line]; out.append(cur)
        elif cur is not None and line and not line.startswith("```"):
            cur.append(line)
        else:
            cur = None
    return out
a, b = tables(sys.argv[1]), tables(sys.argv[2])
assert len(a) == 8 and a == b, (len(a), len(b))
' "$work/report.md" "$work/out"

echo "toy_op_test: $fails failed"
[ "$fails" = 0 ]
