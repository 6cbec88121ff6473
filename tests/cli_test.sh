#!/usr/bin/env bash
# End to end through the command line: sweep -> runs -> report, exit codes, bad input.
# Usage: cli_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"

db=$work/r.db
check version 0 "$bin" --version
contains version-text "$work/out" "opbench "
check list 0 "$bin" list
contains list-ops "$work/out" "lrpe_cosine_md"
check list-json 0 "$bin" list --format json
python3 - "$work/out" <<'PY' && echo "ok   list-json-facts" || { echo "FAIL list-json-facts"; fails=$((fails+1)); }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["ops"], doc
for op in doc["ops"]:
    for k in ("name", "axes", "modes", "x_axes", "title", "inputs", "providers"):
        assert op[k], (op["name"], k)
    names = {a["name"] for a in op["axes"]}
    assert set(op["x_axes"]) <= names and all("runs_here" in p for p in op["providers"]), op["name"]
PY
check dry-run 0 "$bin" sweep "$src/configs/quick.yaml" --dry-run --db "$db"
contains dry-run-tables "$work/out" "lrpe_rotate-speed-fwd-batch2-head4-dim64-act_silu-fp32"
[ -e "$db" ] && { echo "FAIL dry-run wrote $db"; fails=$((fails+1)); }

check sweep 0 "$bin" sweep "$src/configs/quick.yaml" --db "$db" --providers torch --label ci --out "$work/report.md"
contains sweep-report "$work/out" "lrpe_rotate-memory-bwd-batch2-head4-dim64-act_softmax-dim_1-fp32:"
contains sweep-notation "$work/out" "- to: torch"
cmp -s "$work/out" "$work/report.md" && echo "ok   report-file" || { echo "FAIL report-file differs"; fails=$((fails+1)); }

check runs-json 0 "$bin" runs --db "$db" --format json
python3 - "$work/out" <<'PY' && echo "ok   runs-json-fields" || { echo "FAIL runs-json-fields"; exit 1; }
import json, sys
runs = json.load(open(sys.argv[1]))
assert len(runs) == 1, runs
r = runs[0]
for k in ("id", "label", "gpu", "torch", "started_at", "points"):
    assert k in r, k
assert r["label"] == "ci" and r["points"] == 36 and r["status"] == "done", r
PY
[ $? = 0 ] || fails=$((fails+1))
check report 0 "$bin" report --db "$db" --run label:ci
contains report-table "$work/out" "lrpe_rotate-speed-bwd-batch2-head4-dim64-act_none-fp32:"
check report-pct 0 "$bin" report --db "$db" --show pct
contains report-pct-text "$work/out" "% of the measured peak bandwidth"

# Bad input: exit 2, one line naming the file and field, nothing written.
printf 'op: lrpe_rotate\nx: {n: [8]}\nparams: {dim: 15}\n' > "$work/odd.yaml"
check bad-dim 2 "$bin" sweep "$work/odd.yaml" --db "$work/none.db"
contains bad-dim-msg "$work/err" "odd.yaml: params.dim"
[ "$(wc -l < "$work/err")" = 1 ] && echo "ok   bad-dim-one-line" || { echo "FAIL bad-dim not one line"; fails=$((fails+1)); }
[ -e "$work/none.db" ] && { echo "FAIL bad config created a database"; fails=$((fails+1)); }
printf 'op: lrpe_rotate\nx: {n: [8]}\ntiming: {flush_l2: memset}\n' > "$work/badflush.yaml"
check bad-flush 2 "$bin" sweep "$work/badflush.yaml" --db "$work/none.db"
contains bad-flush-msg "$work/err" "badflush.yaml: timing.flush_l2"

# The read flush (the cache read, not written, before each sample): a point measured with it.
printf 'op: lrpe_rotate\nx: {n: [64]}\nparams: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: fwd, metric: speed}\nproviders: {torch: to}\ntiming: {warmup_ms: 1, rep_ms: 5, flush_l2: read}\n' > "$work/readflush.yaml"
check sweep-read-flush 0 "$bin" sweep "$work/readflush.yaml" --db "$work/rf.db" --label rf
contains sweep-read-flush-table "$work/out" "lrpe_rotate-speed-fwd-batch1-head2-dim16"
check missing-config 2 "$bin" sweep "$work/nope.yaml" --db "$work/none.db"
check unknown-provider 2 "$bin" sweep "$src/configs/quick.yaml" --db "$work/none.db" --providers triton
check bad-device 2 "$bin" sweep "$src/configs/quick.yaml" --db "$work/none.db" --device tpu
check missing-db 2 "$bin" report --db "$work/none.db"
check bad-selector 2 "$bin" report --db "$db" --run label:nope
check bad-flag 2 "$bin" sweep --frobnicate
[ -e "$work/none.db" ] && { echo "FAIL a failed command created a database"; fails=$((fails+1)); }
check runs-unchanged 0 "$bin" runs --db "$db" --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert len(r)==1" "$work/out" && echo "ok   no-run-added" || { echo "FAIL runs added by bad input"; fails=$((fails+1)); }

echo "cli_test: $fails failed"
[ "$fails" = 0 ]
