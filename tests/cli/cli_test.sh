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
check list-at 0 "$bin" list --op tpa_decode --at batch=8,m=1024
contains list-at-shape "$work/out" "    bk [8,1024,128] (storage)"
check list-unknown-op 2 "$bin" list --op nope
contains list-unknown-op-msg "$work/err" "--op: nope: no such op"
check list-at-without-op 2 "$bin" list --at batch=8
check dry-run 0 "$bin" sweep "$src/configs/quick.yaml" --dry-run --db "$db"
contains dry-run-tables "$work/out" "lrpe_rotate-speed-fwd-batch2-head4-dim64-act_silu-fp32"
dryrun_out=$work/dry-run-out; cp "$work/out" "$dryrun_out"
[ -e "$db" ] && { echo "FAIL dry-run wrote $db"; fails=$((fails+1)); }

check sweep 0 "$bin" sweep "$src/configs/quick.yaml" --db "$db" --providers torch --label ci --out "$work/report.md"
cp "$work/err" "$work/sweep-err"
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

# Progress on a pipe (auto = lines): one line per table cell with the elapsed time and an ETA.
contains progress-lines "$work/sweep-err" "[1/36 points] lrpe_rotate-speed-fwd-batch2-head4-dim64-act_none-fp32 n=64: 1 point in "
[ "$(grep -c '; elapsed .*, ETA ' "$work/sweep-err")" = 36 ] && echo "ok   progress-line-per-cell" ||
  { echo "FAIL progress: not one line per cell"; head -3 "$work/sweep-err"; fails=$((fails+1)); }
check progress-bad 2 "$bin" sweep "$src/configs/quick.yaml" --db "$work/none.db" --progress fancy
contains dry-run-estimate "$dryrun_out" "estimated time: "

# Runs that tell the truth: a run is held while measured (a second writer is refused, naming
# the holder), a killed one reads as abandoned with the command that continues it (every
# option that shaped it), a resume with other options is refused, the printed one completes it.
# Its points have a 2 s budget each (`stop: budget`), so that the run is still being measured
# while the commands below read it.
printf '%s\n' 'op: lrpe_rotate' 'x: {n: [16, 32, 64, 128, 256, 512]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: [fwd, bwd], metric: speed}' \
  'providers: {torch: to, cuda: tr}' 'timing: {warmup_ms: 10, rep_ms: 2000, stop: budget, rounds: 1, flush_l2: false, interleave: 1, processes: 1}' >"$work/slow.yaml"
sdb=$work/slow.db
wait_for() { # wait_for FILE TEXT: up to 120 s
  for _ in $(seq 1200); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1
}
"$bin" sweep "$work/slow.yaml" --db "$sdb" --device cpu --label slow --no-report --progress lines 2>"$work/a-err" &
apid=$!
wait_for "$work/a-err" "[1/12 points]" || { echo "FAIL slow sweep: no progress"; cat "$work/a-err"; fails=$((fails+1)); }
check second-writer 2 "$bin" sweep "$work/slow.yaml" --db "$sdb" --resume 1
contains second-writer-names-holder "$work/err" "run 1 is being measured by pid $apid on host $(hostname)"
check runs-running 0 "$bin" runs --db "$sdb"
contains runs-running-holder "$work/out" "run 1: measured by pid $apid on $(hostname)"
kill -KILL "$apid"; wait "$apid" 2>/dev/null
check runs-abandoned 0 "$bin" runs --db "$sdb" --format json
pycheck runs-abandoned-json '
import json, sys
r = json.load(open(sys.argv[1]))[0]
assert r["status"] == "abandoned", r
want = "opbench sweep %s --db %s --device cpu --providers torch --label slow --resume 1" % (sys.argv[2], sys.argv[3])
assert r["resume"] == want, (r["resume"], want)
assert r["holder"]["pid"] == int(sys.argv[4]), r
' "$work/out" "$work/slow.yaml" "$sdb" "$apid"
check report-abandoned 0 "$bin" report --db "$sdb"
contains report-abandoned-header "$work/out" "(abandoned)"
contains report-abandoned-hint "$work/err" "run 1 is abandoned: continue with \`opbench sweep"
check resume-other-providers 2 "$bin" sweep "$work/slow.yaml" --db "$sdb" --resume 1 --providers torch,cuda
contains resume-other-providers-msg "$work/err" "--providers: torch,cuda: run 1 was measured with --providers torch"
check resume-other-device 2 "$bin" sweep "$work/slow.yaml" --db "$sdb" --resume 1 --device cuda
check resume-missing-db 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --resume 1
[ -e "$work/none.db" ] && { echo "FAIL --resume created a database"; fails=$((fails+1)); }

# A second SIGINT stops now (not after the cell under way) and still marks the run interrupted.
# Its cells' budget is 60 s, so that both signals land inside the first cell however far the
# cell's estimate is off on a loaded machine; the signals go once the run is held.
sed 's/rep_ms: 2000/rep_ms: 60000/' "$work/slow.yaml" >"$work/slower.yaml"
"$bin" sweep "$work/slower.yaml" --db "$work/int.db" --device cpu --providers torch --no-report --progress lines 2>"$work/b-err" &
bpid=$!
for _ in $(seq 600); do "$bin" runs --db "$work/int.db" 2>/dev/null | grep -qF "measured by pid $bpid" && break; sleep 0.1; done
sleep 0.5
kill -INT "$bpid"; sleep 0.5; kill -INT "$bpid"
wait "$bpid"; code=$?
[ "$code" = 130 ] && echo "ok   second-sigint-exit" || { echo "FAIL second SIGINT: exit $code"; fails=$((fails+1)); }
contains second-sigint-msg "$work/b-err" "stopped: run 1 interrupted; continue with \`opbench sweep $work/slower.yaml --db $work/int.db --device cpu --providers torch --resume 1\`"
check second-sigint-status 0 "$bin" runs --db "$work/int.db" --format json
pycheck second-sigint-status-json 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert r["status"] == "interrupted" and "holder" not in r, r' "$work/out"

# The printed resume command completes the abandoned run.
cmd=$("$bin" runs --db "$sdb" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["resume"])')
check resume-printed 0 ${cmd/opbench/$bin} --no-report --progress none
check runs-done 0 "$bin" runs --db "$sdb" --format json
pycheck runs-done-json 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert r["status"] == "done" and r["points"] == 12 and "resume" not in r, r' "$work/out"

echo "cli_test: $fails failed"
[ "$fails" = 0 ]
