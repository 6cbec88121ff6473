#!/usr/bin/env bash
# Several configs in one command, on the CPU: `sweep A.yaml B.yaml` and a suite file make one
# run per config in one process (one set of workers, started once, serves every config), with
# each report and --out holding them all; a bad suite is refused (exit 2, one line, nothing
# written); --providers and --filter leave out a config they match nothing of; an interrupted
# suite prints the command that continues it and that command completes it, no point lost or
# doubled; a signal before the first point exits 130 with nothing stored; the compiled
# provider's python probe runs only when that provider is asked for, and once per machine.
# Usage: suite_cli_test.sh OPBENCH PYTHON (a python with torch, for the probe)
set -u
bin=$1 python=$2
. "$(dirname "$0")/cli_lib.sh"

printf '%s\n' 'op: lrpe_rotate' 'x: {n: [16, 32, 64]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: [fwd, bwd], metric: speed}' \
  'providers: {torch: to}' 'timing: {warmup_ms: 2, rep_ms: 20, rounds: 2}' >"$work/a.yaml"
printf '%s\n' 'op: act' 'x: {n: [16, 32]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: fwd, metric: [speed, memory]}' \
  'variants: [{act: relu}, {act: silu}]' 'providers: {torch: to, cuda: tr}' \
  'timing: {warmup_ms: 2, rep_ms: 20, rounds: 2}' >"$work/b.yaml"
printf 'configs:\n  - a.yaml\n  - b.yaml\n' >"$work/suite.yaml"
a_points=6 b_points=8
runs_state() { # "status:points:config ..." of every run, in id order
  python3 - "$1" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
rows = c.execute("SELECT status, (SELECT COUNT(DISTINCT title || '|' || x_value || '|' || provider) FROM points"
                 " WHERE run_id = runs.id), (SELECT COUNT(*) FROM points WHERE run_id = runs.id), config_path"
                 " FROM runs ORDER BY id").fetchall()
print(" ".join("%s:%d:%d:%s" % (s, d, n, os.path.basename(p)) for s, d, n, p in rows))
PY
}

# Two configs named, and a suite file: one run each, every point once; the reports printed and
# written to --out one after another.
check two-configs 0 "$bin" sweep "$work/a.yaml" "$work/b.yaml" --db "$work/two.db" --device cpu --providers torch \
  --progress none --out "$work/two.md"
[ "$(runs_state "$work/two.db")" = "done:$a_points:$a_points:a.yaml done:$b_points:$b_points:b.yaml" ] && echo "ok   two-configs-two-runs" ||
  { echo "FAIL two configs: $(runs_state "$work/two.db")"; fails=$((fails+1)); }
[ "$(grep -c '^# .* benchmark$' "$work/out")" = 2 ] && echo "ok   two-reports-printed" || { echo "FAIL reports printed"; fails=$((fails+1)); }
[ "$(grep -c '^# .* benchmark$' "$work/two.md")" = 2 ] && echo "ok   out-holds-both" || { echo "FAIL --out"; fails=$((fails+1)); }
contains two-configs-summary "$work/err" "2 runs (1, 2): 14 points measured"
check suite-file 0 "$bin" sweep "$work/suite.yaml" --db "$work/suite.db" --devices cpu,cpu --no-report --progress lines
[ "$(runs_state "$work/suite.db")" = "done:$a_points:$a_points:a.yaml done:$b_points:$b_points:b.yaml" ] && echo "ok   suite-file-two-runs" ||
  { echo "FAIL suite file: $(runs_state "$work/suite.db")"; cat "$work/err"; fails=$((fails+1)); }
contains suite-file-shares "$work/err" "  cpu#2: "
contains suite-file-skips-cuda "$work/err" "skipping provider cuda: cpu"
check suite-config-paths 0 "$bin" runs --db "$work/suite.db" --format json
pycheck suite-runs-record-shares '
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["config"] for r in runs] == [sys.argv[2] + "/a.yaml", sys.argv[2] + "/b.yaml"], [r["config"] for r in runs]
for r in runs:
    assert [d["device"] for d in r["devices"]] == ["cpu", "cpu#2"], r["devices"]
    assert sum(d["points"] for d in r["devices"]) == r["points"], r
' "$work/out" "$work"

# One set of workers serves every config: two workers for the whole command.
printf '%s\n' 'op: lrpe_rotate' 'x: {n: [16, 32, 64, 128]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: [fwd, bwd], metric: speed}' \
  'providers: {torch: to}' 'timing: {warmup_ms: 5, rep_ms: 400, rounds: 2, interleave: 1, processes: 1}' \
  >"$work/slow.yaml"
cp "$work/slow.yaml" "$work/slow2.yaml"
"$bin" sweep "$work/slow.yaml" "$work/slow2.yaml" --db "$work/w.db" --devices cpu,cpu --no-report --progress lines \
  2>"$work/w-err" &
wpid=$!
seen=""
# Workers only: the sweep also runs short-lived helpers (the shell of `git rev-parse`).
while kill -0 "$wpid" 2>/dev/null; do seen="$seen $(pgrep -P "$wpid" -f -- '--worker' | tr '\n' ' ')"; sleep 0.2; done
wait "$wpid"; code=$?
n=$(echo "$seen" | tr ' ' '\n' | sort -u | grep -c .)
[ "$code" = 0 ] && [ "$n" = 2 ] && echo "ok   workers-started-once" || { echo "FAIL workers: exit $code, $n processes"; fails=$((fails+1)); }

# Bad suites: exit 2, one line naming the file and field, nothing written.
printf 'configs: []\n' >"$work/empty.yaml"
check suite-empty 2 "$bin" sweep "$work/empty.yaml" --db "$work/bad.db"
contains suite-empty-msg "$work/err" "empty.yaml: configs: must be a non-empty list of config files"
printf 'configs: [a.yaml]\nlabel: x\n' >"$work/extra.yaml"
check suite-unknown-key 2 "$bin" sweep "$work/extra.yaml" --db "$work/bad.db"
contains suite-unknown-key-msg "$work/err" "extra.yaml: label: unknown key"
printf 'configs: [suite.yaml]\n' >"$work/nested.yaml"
check suite-nested 2 "$bin" sweep "$work/nested.yaml" --db "$work/bad.db"
contains suite-nested-msg "$work/err" "nested.yaml: configs[0]: $work/suite.yaml is a suite"
check config-twice 2 "$bin" sweep "$work/suite.yaml" "$work/a.yaml" --db "$work/bad.db"
contains config-twice-msg "$work/err" "names $work/a.yaml again (as $work/a.yaml): one run per config"
printf 'configs: [a.yaml, missing.yaml]\n' >"$work/missing-suite.yaml"
check suite-missing-config 2 "$bin" sweep "$work/missing-suite.yaml" --db "$work/bad.db"
contains suite-missing-config-msg "$work/err" "missing.yaml: no such file"
check suite-unknown-provider 2 "$bin" sweep "$work/suite.yaml" --db "$work/bad.db" --providers torhc
contains suite-unknown-provider-msg "$work/err" "--providers: torhc: not a provider of any config of the command"
[ "$(wc -l <"$work/err")" = 1 ] && echo "ok   suite-errors-one-line" || { echo "FAIL not one line"; fails=$((fails+1)); }
[ -e "$work/bad.db" ] && { echo "FAIL a bad suite created a database"; fails=$((fails+1)); }

# --filter and --providers leave out the configs they match nothing of; --dry-run lists each.
check suite-filter 0 "$bin" sweep "$work/suite.yaml" --dry-run --device cpu --filter act_silu
contains suite-filter-skip "$work/err" "skipping $work/a.yaml: none of its tables matches --filter"
contains suite-filter-kept "$work/out" "b.yaml: act on cpu, 2 tables, 4 points"
check suite-filter-none 2 "$bin" sweep "$work/suite.yaml" --dry-run --device cpu --filter nothing-like-this
check suite-dry-run 0 "$bin" sweep "$work/suite.yaml" --dry-run --device cpu --providers torch
contains suite-dry-run-a "$work/out" "a.yaml: lrpe_rotate on cpu, 2 tables, $a_points points"
contains suite-dry-run-b "$work/out" "b.yaml: act on cpu, 4 tables, $b_points points"
[ "$(grep -c '^estimated time: ' "$work/out")" = 2 ] && echo "ok   suite-dry-run-estimates" || { echo "FAIL estimates"; fails=$((fails+1)); }

# An interrupted suite: the run under way interrupted, the command that continues it printed;
# that command completes it (the first config's run resumed, the next one new), nothing lost.
db=$work/int.db
setsid "$bin" sweep "$work/slow.yaml" "$work/slow2.yaml" --db "$db" --device cpu --no-report --progress lines \
  2>"$work/i-err" &
ipid=$!
for _ in $(seq 600); do grep -qF "points] " "$work/i-err" 2>/dev/null && break; sleep 0.1; done
kill -INT -- "-$ipid"
wait "$ipid"; code=$?
[ "$code" = 130 ] && echo "ok   suite-interrupted-exit" || { echo "FAIL interrupted suite: exit $code"; tail -3 "$work/i-err"; fails=$((fails+1)); }
cont="opbench sweep $work/slow.yaml $work/slow2.yaml --db $db --device cpu --resume 1"
contains suite-continue-command "$work/i-err" "interrupted: continue with \`$cont\`"
check suite-continue 0 "$bin" ${cont#opbench } --no-report --progress none
[ "$(runs_state "$db")" = "done:8:8:slow.yaml done:8:8:slow2.yaml" ] && echo "ok   suite-continued-nothing-lost" ||
  { echo "FAIL after continuing: $(runs_state "$db")"; fails=$((fails+1)); }
check resume-not-in-suite 2 "$bin" sweep "$work/a.yaml" "$work/b.yaml" --db "$db" --resume 1
contains resume-not-in-suite-msg "$work/err" "--resume: 1: run 1 measured $work/slow.yaml, which this command does not name"

# A signal before the first point, while the parent waits on the compiled provider's python
# probe (made slow here; the probe goes to the process group's signal too): exit 130, nothing
# stored.
sed 's/providers: {torch: to}/providers: {torch: to, torch_compile: toc}/' "$work/a.yaml" >"$work/c.yaml"
cat >"$work/slowpy" <<EOF
#!/usr/bin/env bash
case "\$*" in *"import torch"*) touch "$work/probing"; sleep 60 ;; esac
exec "$python" "\$@"
EOF
chmod +x "$work/slowpy"
OPBENCH_PYTHON=$work/slowpy OPBENCH_CACHE_DIR=$work/early-cache setsid "$bin" sweep "$work/c.yaml" \
  --db "$work/early.db" --device cpu --no-report 2>"$work/e-err" &
epid=$!
for _ in $(seq 600); do [ -e "$work/probing" ] && break; sleep 0.1; done
kill -INT -- "-$epid"
wait "$epid"; code=$?
[ "$code" = 130 ] && echo "ok   early-signal-exits-130" || { echo "FAIL early signal: exit $code"; cat "$work/e-err"; fails=$((fails+1)); }
contains early-signal-msg "$work/e-err" "interrupted before the run started: nothing stored"
[ ! -e "$work/early.db" ] && echo "ok   early-signal-nothing-stored" || { echo "FAIL early signal stored"; fails=$((fails+1)); }
[ ! -e "$work/early-cache" ] || [ -z "$(ls "$work/early-cache")" ] && echo "ok   interrupted-probe-not-cached" ||
  { echo "FAIL an interrupted probe was cached"; fails=$((fails+1)); }

# The python probe of torch_compile: not run for a sweep without it; run once for one with it,
# then read from the cache.
cat >"$work/python" <<EOF
#!/usr/bin/env bash
case "\$*" in *"import torch"*) echo probe >>"$work/probes" ;; esac
exec "$python" "\$@"
EOF
chmod +x "$work/python"
export OPBENCH_PYTHON=$work/python OPBENCH_CACHE_DIR=$work/cache
check no-probe-without-compiled 0 "$bin" sweep "$work/c.yaml" --db "$work/p.db" --device cpu --providers torch --dry-run
[ ! -e "$work/probes" ] && echo "ok   probe-not-run" || { echo "FAIL the probe ran for --providers torch"; fails=$((fails+1)); }
check probe-with-compiled 0 "$bin" sweep "$work/c.yaml" --db "$work/p.db" --device cpu --dry-run
[ "$(wc -l <"$work/probes" 2>/dev/null)" = 1 ] && echo "ok   probe-run-once" || { echo "FAIL probes: $(cat "$work/probes" 2>/dev/null | wc -l)"; fails=$((fails+1)); }
check probe-cached 0 "$bin" list --op lrpe_rotate --device cpu
[ "$(wc -l <"$work/probes")" = 1 ] && echo "ok   probe-read-from-cache" || { echo "FAIL probe not cached"; fails=$((fails+1)); }
unset OPBENCH_PYTHON OPBENCH_CACHE_DIR

echo "suite_cli_test: $fails failed"
[ "$fails" = 0 ]
