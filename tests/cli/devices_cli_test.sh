#!/usr/bin/env bash
# A sweep on several devices through the command line, on the CPU (`--devices cpu,cpu`: two
# worker processes): one queue (both workers measure, every point once), one writer (the parent
# holds the run; no worker opens the database), the device column and the report's devices
# line; a worker killed mid-cell has its cell measured again; SIGINT to the process group, or
# to the parent alone, stops after the cells under way, the run interrupted with a resume
# command that repeats --devices, and the resume completes it with no point lost or doubled.
# Usage: devices_cli_test.sh OPBENCH
set -u
bin=$1
. "$(dirname "$0")/cli_lib.sh"

printf '%s\n' 'op: lrpe_rotate' 'x: {n: [16, 32, 64, 128, 256, 512]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: [fwd, bwd], metric: speed}' \
  'providers: {torch: to, cuda: tr}' 'timing: {warmup_ms: 5, rep_ms: 200, rounds: 2, flush_l2: false}' \
  >"$work/slow.yaml"
cells=12
wait_for() { # wait_for FILE TEXT: up to 60 s
  for _ in $(seq 600); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1
}
# db-state DB: "status points distinct devices..." of the only run
db_state() {
  python3 - "$1" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
status = c.execute("SELECT status FROM runs").fetchall()
n, distinct = c.execute("SELECT COUNT(*), COUNT(DISTINCT title || '|' || x_value || '|' || provider) FROM points").fetchone()
failed = c.execute("SELECT COUNT(*) FROM points WHERE error <> ''").fetchone()[0]
devices = sorted(d for (d,) in c.execute("SELECT DISTINCT device FROM points"))
print(len(status), status[0][0] if status else "-", n, distinct, failed, ",".join(devices))
PY
}
no_workers_left() { # no_workers_left NAME PID...: none of these workers outlives its sweep (a zombie is gone)
  local name=$1 left=""; shift
  sleep 0.5
  for w in "$@"; do ps -o stat= -p "$w" 2>/dev/null | grep -qv '^Z' && left="$left $w"; done
  if [ -n "$left" ]; then echo "FAIL $name: workers left running:$left"; fails=$((fails+1)); else echo "ok   $name"; fi
}

# Bad input: one line naming the option, exit 2, nothing written.
check devices-empty 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --devices ""
contains devices-empty-msg "$work/err" "opbench: --devices: names no device"
[ "$(wc -l <"$work/err")" = 1 ] && echo "ok   devices-empty-one-line" || { echo "FAIL not one line"; fails=$((fails+1)); }
check devices-absent 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --devices cuda:9
contains devices-absent-msg "$work/err" "--devices: cuda:9: no such CUDA device"
check devices-with-device 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --devices cpu,cpu --device cpu
contains devices-with-device-msg "$work/err" "--devices: cpu,cpu: cannot be given with --device"
check devices-twice 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --devices cuda:0,cuda:0
check devices-unknown 2 "$bin" sweep "$work/slow.yaml" --db "$work/none.db" --devices tpu
contains devices-unknown-msg "$work/err" "--devices: tpu: unknown device"
[ -e "$work/none.db" ] && { echo "FAIL bad --devices created a database"; fails=$((fails+1)); }
check devices-dry-run 0 "$bin" sweep "$work/slow.yaml" --devices cpu,cpu --dry-run
contains devices-dry-run-where "$work/out" "on cpu,cpu, 2 tables, 12 points"
contains devices-dry-run-estimate "$work/out" "on 2 devices about"

# One queue, one writer, the device column, the devices line.
db=$work/q.db
"$bin" sweep "$work/slow.yaml" --db "$db" --devices cpu,cpu --label q --progress lines --out "$work/q.md" \
  >"$work/q-out" 2>"$work/q-err" &
qpid=$!
wait_for "$work/q-err" "[1/$cells points]" || { echo "FAIL no progress"; cat "$work/q-err"; fails=$((fails+1)); }
check runs-holder 0 "$bin" runs --db "$db" --format json
pycheck parent-holds-the-run 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert r["holder"]["pid"] == int(sys.argv[2]), r' "$work/out" "$qpid"
opened=0
for w in $(pgrep -P "$qpid"); do
  for fd in "/proc/$w/fd/"*; do case $(readlink "$fd") in *q.db*) opened=1 ;; esac; done
done
[ "$(pgrep -P "$qpid" | wc -l)" = 2 ] && echo "ok   two-workers" || { echo "FAIL not two workers"; fails=$((fails+1)); }
[ "$opened" = 0 ] && echo "ok   workers-never-open-the-database" || { echo "FAIL a worker opened the database"; fails=$((fails+1)); }
wait "$qpid"; code=$?
[ "$code" = 0 ] && echo "ok   devices-sweep" || { echo "FAIL devices sweep: exit $code"; tail -5 "$work/q-err"; fails=$((fails+1)); }
read -r nruns status n distinct failed devices <<<"$(db_state "$db")"
[ "$status $n $distinct $failed $devices" = "done $cells $cells 0 cpu,cpu#2" ] && echo "ok   every-point-once-on-both-workers" ||
  { echo "FAIL state: $status $n $distinct $failed $devices"; fails=$((fails+1)); }
# the provider that cannot run here is skipped once, for the run (not per worker); the reason
# depends on the build (no CUDA device, or kernels not built)
[ "$(grep -c 'skipping provider cuda: ' "$work/q-err")" = 1 ] && echo "ok   skipped-once" ||
  { echo "FAIL skipped-once: $(grep -c 'skipping provider cuda: ' "$work/q-err") lines 'skipping provider cuda: '"; fails=$((fails+1)); }
contains devices-run-line "$work/q.md" ", cpu,cpu, commit"
pycheck devices-line '
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^devices: cpu \((.+?)\) (\d+) cells?, [\d.]+ s busy, CPUs [^;]*; cpu#2 \(\1\) (\d+) cells?, [\d.]+ s busy, CPUs .*$", text, re.M)
assert m and int(m.group(2)) + int(m.group(3)) == int(sys.argv[2]) and int(m.group(2)) and int(m.group(3)), text[:600]
' "$work/q.md" "$cells"
contains progress-names-device "$work/q-err" " on cpu#2 in "
check export-devices 0 "$bin" export latest --db "$db" --out "$work/q.json"
pycheck export-has-devices '
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert [d["device"] for d in run["devices"]] == ["cpu", "cpu#2"], run["devices"]
assert sum(d["cells"] for d in run["devices"]) == len({(p["title"], p["x_value"]) for p in run["points"]}), run["devices"]
assert all(d["busy_s"] > 0 and d["cpus"] and d["threads"] == 1 and d["memory"] for d in run["devices"]), run["devices"]
assert {p["device"] for p in run["points"]} == {"cpu", "cpu#2"}
assert {"name": "devices", "value": "cpu,cpu"} in run["options"], run["options"]
' "$work/q.json"

# A worker killed in the middle of a cell: the cell is measured again, nothing fails.
db=$work/k.db
"$bin" sweep "$work/slow.yaml" --db "$db" --devices cpu,cpu --providers torch --no-report --progress lines 2>"$work/k-err" &
kpid=$!
wait_for "$work/k-err" "[1/$cells points]"
victim=$(pgrep -P "$kpid" | head -1)
kill -KILL "$victim"
wait "$kpid"; code=$?
[ "$code" = 0 ] && echo "ok   killed-worker-sweep" || { echo "FAIL killed-worker sweep: exit $code"; tail -5 "$work/k-err"; fails=$((fails+1)); }
read -r nruns status n distinct failed devices <<<"$(db_state "$db")"
[ "$status $n $distinct $failed" = "done $cells $cells 0" ] && echo "ok   killed-worker-cell-measured-again" ||
  { echo "FAIL after a killed worker: $status $n $distinct $failed"; fails=$((fails+1)); }

# SIGINT to the whole process group (as a terminal's Ctrl-C), then to the parent alone: each
# time the run is interrupted after the cells under way; the resume completes it.
db=$work/int.db
for target in group parent; do
  rm -f "$work/i-err"
  args=("$bin" sweep "$work/slow.yaml" --db "$db" --devices cpu,cpu --providers torch --no-report --progress lines)
  [ "$target" = parent ] && args+=(--resume 1)
  before=$(db_state "$db" 2>/dev/null | awk '{print $3}'); before=${before:-0}
  setsid "${args[@]}" 2>"$work/i-err" &
  ipid=$!
  wait_for "$work/i-err" "points] " || { echo "FAIL no progress before SIGINT"; cat "$work/i-err"; }
  workers=$(pgrep -P "$ipid")
  if [ "$target" = group ]; then kill -INT -- "-$ipid"; else kill -INT "$ipid"; fi
  wait "$ipid"; code=$?
  [ "$code" = 130 ] && echo "ok   sigint-$target-exit" || { echo "FAIL SIGINT to the $target: exit $code"; tail -3 "$work/i-err"; fails=$((fails+1)); }
  contains sigint-$target-resume "$work/i-err" "interrupted: continue with \`opbench sweep $work/slow.yaml --db $db --devices cpu,cpu --providers torch --resume 1\`"
  read -r nruns status n distinct failed devices <<<"$(db_state "$db")"
  [ "$status" = interrupted ] && [ "$n" = "$distinct" ] && [ "$n" -gt "$before" ] && [ "$n" -lt "$cells" ] && [ "$failed" = 0 ] &&
    echo "ok   sigint-$target-stored-what-came-back" || { echo "FAIL after SIGINT to the $target: $status $n $distinct $failed (before $before)"; fails=$((fails+1)); }
  # shellcheck disable=SC2086
  no_workers_left "sigint-$target-no-workers-left" $workers
done
# A second SIGINT stops at once: the run still marked interrupted, the workers gone with the parent.
# The workers are held (SIGSTOP) before the signals, as hung ones: their cells under way cannot
# end between the two signals, however short they are.
"$bin" sweep "$work/slow.yaml" --db "$work/two.db" --devices cpu,cpu --providers torch --no-report --progress lines 2>"$work/t-err" &
tpid=$!
wait_for "$work/t-err" "points] "
workers=$(pgrep -P "$tpid")
# shellcheck disable=SC2086
kill -STOP $workers
kill -INT "$tpid"; sleep 0.4; kill -INT "$tpid"
wait "$tpid"; code=$?
[ "$code" = 130 ] && echo "ok   second-sigint-exit" || { echo "FAIL second SIGINT: exit $code"; fails=$((fails+1)); }
contains second-sigint-msg "$work/t-err" "stopped: run 1 interrupted; continue with \`opbench sweep $work/slow.yaml --db $work/two.db --devices cpu,cpu --providers torch --resume 1\`"
# shellcheck disable=SC2086
no_workers_left second-sigint-no-workers-left $workers

check resume-other-devices 2 "$bin" sweep "$work/slow.yaml" --db "$db" --resume 1 --devices cpu
contains resume-other-devices-msg "$work/err" "run 1 was measured with --devices cpu,cpu"
check resume-device-instead 2 "$bin" sweep "$work/slow.yaml" --db "$db" --resume 1 --device cpu
check runs-resume-command 0 "$bin" runs --db "$db" --format json
pycheck runs-resume-repeats-devices 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert "--devices cpu,cpu" in r["resume"], r' "$work/out"
check devices-resume 0 "$bin" sweep "$work/slow.yaml" --db "$db" --resume 1 --no-report --progress none
read -r nruns status n distinct failed devices <<<"$(db_state "$db")"
[ "$nruns $status $n $distinct $failed" = "1 done $cells $cells 0" ] && echo "ok   resume-completes-no-point-lost-or-doubled" ||
  { echo "FAIL after the resume: $nruns $status $n $distinct $failed"; fails=$((fails+1)); }

echo "devices_cli_test: $fails failed"
[ "$fails" = 0 ]
