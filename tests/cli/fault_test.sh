#!/usr/bin/env bash
# Fault injection: a small CPU sweep stopped at random moments (SIGKILL; SIGTERM from timeout,
# which signals the process and then its group; one SIGINT; two SIGINTs) and on a full disk (a
# file-size limit: the process killed by SIGXFSZ, or its writes failing), resumed each time.
# After every fault: PRAGMA integrity_check is ok, no stored point is lost or doubled, the run's
# status says what happened (abandoned after a kill or a full disk, interrupted after a signal)
# with the resume command repeating the run's options; the last resume completes the run.
# Then: the round processes of a sweep (timing.processes) killed while they measure (the point
# measured again, else lost and measured by the resume, never stored failed), and a merge of
# a run being measured (refused) or interrupted (copied, completed by a later merge).
# Usage: fault_test.sh OPBENCH [SEED]
set -u
bin=$1
seed=${2:-$(( $(date +%s) % 100000 ))}
. "$(dirname "$0")/cli_lib.sh"
RANDOM=$seed
echo "fault_test: seed $seed (fault_test.sh OPBENCH $seed repeats it)"

cat >"$work/tiny.yaml" <<'EOF'
op: tpa_decode
x: {m: [8, 16, 32, 64]}
params: {batch: [1, 2], head: 2, rank: 2, dim: 16, dtype: fp32, mode: fwd, metric: [speed, memory]}
providers: {torch: to, torch_naive: ton}
timing: {warmup_ms: 5, rep_ms: 40, rounds: 2, flush_l2: false}
EOF
db=$work/fault.db
sweep=("$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --providers torch,torch_naive --no-report --progress lines)
expected=$("$bin" sweep "$work/tiny.yaml" --device cpu --dry-run | sed -n 's/.* \([0-9]*\) points$/\1/p' | head -1)
[ -n "$expected" ] || { echo "FAIL no point count from the dry run"; exit 1; }

# state: "integrity points distinct run status holder" of the database (run: the only run, 0
# if none; holder: the pid holding it, 0 if none)
state() {
  [ -e "$db" ] || { echo "ok 0 0 0 - 0"; return; }
  python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
integrity = c.execute("PRAGMA integrity_check").fetchone()[0]
n, distinct = c.execute("SELECT COUNT(*), COUNT(DISTINCT run_id || '|' || title || '|' || x_value || '|' || provider) FROM points").fetchone()
runs = c.execute("SELECT id, status FROM runs").fetchall()
assert len(runs) <= 1, runs
holder = c.execute("SELECT pid FROM run_locks").fetchall() if runs else []
print(integrity, n, distinct, runs[0][0] if runs else 0, runs[0][1] if runs else "-", holder[0][0] if holder else 0)
PY
}

# the status `opbench runs` shows, and its resume command
shown() {
  "$bin" runs --db "$db" --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)[0]
print(r["status"], r.get("resume", "-"))'
}

# Runs a command as a job with SIGINT at its default (a shell's background jobs ignore it).
job() { exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@"; }
# Waits until the sweep finished its first table cell (it holds the run), or it ended.
running() {
  for _ in $(seq 600); do grep -q "^\[[0-9]*/" "$work/err" 2>/dev/null && return; kill -0 "$1" 2>/dev/null || return; sleep 0.1; done
}

last_points=0
run=0
shown_before=-
holder_before=0
# FAULT:WHEN: early = at a random moment from the start (loading, measuring the bandwidth,
# taking the run); running = at a random moment after the first table cell.
faults=(kill:early term:running int1:running kill:running int2:running full_killed full_failed term:early
        int2:early kill:running int1:early)
for i in "${!faults[@]}"; do
  fault=${faults[$i]%%:*}
  when=${faults[$i]#*:}
  args=("${sweep[@]}")
  [ "$run" != 0 ] && args+=(--resume "$run")
  delay=$(( RANDOM % 25 ))  # tenths of a second
  pid=0
  rm -f "$work/err"
  case $fault in
    kill|int1|int2|term)
      # term: timeout forwards the TERM it gets to the sweep and then to the process group
      if [ "$fault" = term ]; then timeout -s TERM 600 "${args[@]}" >"$work/out" 2>"$work/err" &
      else job "${args[@]}" >"$work/out" 2>"$work/err" &
      fi
      pid=$!
      [ "$when" = running ] && running "$pid"
      sleep "$((delay / 10)).$((delay % 10))"
      case $fault in
        kill) kill -KILL "$pid" 2>/dev/null ;;
        term) kill -TERM "$pid" 2>/dev/null ;;
        int1) kill -INT "$pid" 2>/dev/null ;;
        int2) kill -INT "$pid" 2>/dev/null; sleep 0.5; kill -INT "$pid" 2>/dev/null ;;
      esac
      wait "$pid"; code=$?
      [ "$fault" = term ] && pid=0 ;;  # the sweep was timeout's child
    full_killed|full_failed)
      # 96 KiB a file: room in the write-ahead log for a table cell or a few (a sweep that
      # ends cleanly folds its log into the database and removes it)
      (
        size=96
        ulimit -f "$size"
        [ "$fault" = full_failed ] && trap '' XFSZ
        exec "${args[@]}" >"$work/out" 2>"$work/err"
      ) &
      pid=$!
      wait "$pid"; code=$? ;;
  esac
  read -r integrity points distinct run status holder < <(state)
  read -r shown resume < <("$bin" runs --db "$db" --format json 2>/dev/null |
    python3 -c 'import json, sys; r = (json.load(sys.stdin) or [{}])[0]; print(r.get("status", "-"), r.get("resume", "-"))' 2>/dev/null ||
    echo "- -")
  echo "fault $i $fault ($when + ${delay}00 ms): exit $code, $points points stored, status $status (shown $shown), holder $holder"
  [ "$integrity" = ok ] || { echo "FAIL $fault: integrity_check: $integrity"; fails=$((fails+1)); }
  [ "$points" = "$distinct" ] || { echo "FAIL $fault: $points points, $distinct distinct"; fails=$((fails+1)); }
  [ "$points" -ge "$last_points" ] || { echo "FAIL $fault: points lost ($last_points -> $points)"; fails=$((fails+1)); }
  [ "$points" -le "$expected" ] || { echo "FAIL $fault: $points points, more than $expected"; fails=$((fails+1)); }
  last_points=$points
  # What runs must show: a process that died holding the run leaves it abandoned; one that
  # was signalled (or whose write failed) lets go of it, interrupted (done if it finished
  # first); one stopped before it took the run leaves it as it was.
  if [ "$holder" != 0 ] && [ "$holder" != "$holder_before" ]; then
    want=abandoned
    case $fault in
      kill|full_killed|full_failed) [ "$holder" = "$pid" ] ||
        { echo "FAIL $fault: the run is held by $holder, not by the stopped $pid"; fails=$((fails+1)); } ;;
      *) echo "FAIL $fault: a signalled sweep left its lock"; fails=$((fails+1)) ;;
    esac
  elif [ "$holder" != 0 ]; then
    want=$shown_before  # held by the process of an earlier fault: this one never took it
  else
    case $fault in
      kill|full_killed) want=done ;;
      *) want="interrupted done" ;;
    esac
    [ "$holder_before" = 0 ] && want="$want $shown_before"
  fi
  case " $want " in
    *" $shown "*) ;;
    *) echo "FAIL $fault: runs shows $shown, expected one of: $want"; sed 's/^/  | /' "$work/err" | tail -5; fails=$((fails+1)) ;;
  esac
  if [ "$shown" = interrupted ] || [ "$shown" = abandoned ]; then
    case $resume in
      *"--device cpu --providers torch,torch_naive --resume $run") ;;
      *) echo "FAIL $fault: resume command '$resume'"; fails=$((fails+1)) ;;
    esac
  fi
  if { [ "$code" = 130 ] || [ "$code" = 124 ]; } && [ -s "$work/err" ]; then  # signalled: it says how to go on
    grep -qE "continue with \`opbench sweep .*--resume [0-9]+\`|interrupted before the run started|^stopped$" "$work/err" ||
      { echo "FAIL $fault: no resume line on stderr"; sed 's/^/  | /' "$work/err" | tail -5; fails=$((fails+1)); }
  fi
  # One request to stop (a single SIGINT; timeout's TERM, which reaches the sweep twice: sent
  # to it and to its process group) finishes the cell: never the stop-at-once of a second.
  if { [ "$fault" = int1 ] || [ "$fault" = term ]; } && grep -q "^stopped" "$work/err"; then
    echo "FAIL $fault: one request to stop was taken for two"; sed 's/^/  | /' "$work/err" | tail -3; fails=$((fails+1))
  fi
  shown_before=$shown
  holder_before=$holder
done

# Finish the run: every point exactly once.
args=("${sweep[@]}")
[ "$run" != 0 ] && args+=(--resume "$run")
check finish 0 "${args[@]}"
read -r integrity points distinct run status holder < <(state)
[ "$integrity" = ok ] && [ "$points" = "$expected" ] && [ "$distinct" = "$expected" ] && [ "$status" = done ] &&
  echo "ok   complete: $points of $expected points, status $status" ||
  { echo "FAIL complete: integrity $integrity, $points points ($distinct distinct) of $expected, status $status"; fails=$((fails+1)); }

# --- A round process killed while it measures (timing.processes): the point is measured again --
cat >"$work/spread.yaml" <<'EOF'
op: tpa_decode
x: {m: [8, 16, 32, 64]}
params: {batch: 1, head: 2, rank: 2, dim: 16, dtype: fp32, mode: fwd, metric: speed}
providers: {torch: to, torch_naive: ton}
timing: {warmup_ms: 5, rep_ms: 400, rounds: 4, processes: 2, interleave: 1, flush_l2: false}
EOF
sdb=$work/spread.db
spread=("$bin" sweep "$work/spread.yaml" --db "$sdb" --device cpu --no-report --progress lines)
# the points stored, those failed because a process ended, all those failed, the run's status
spread_state() {
  python3 - "$sdb" <<'PY'
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
n = c.execute("SELECT COUNT(*) FROM points").fetchone()[0]
ended = c.execute("SELECT COUNT(*) FROM points WHERE error LIKE '%ended%'").fetchone()[0]
failed = c.execute("SELECT COUNT(*) FROM points WHERE error != ''").fetchone()[0]
print(n, ended, failed, c.execute("SELECT status FROM runs ORDER BY id DESC").fetchone()[0])
PY
}
workers_of() { pgrep -P "$1" -f -- "--worker" 2>/dev/null; }
# Once: the round is measured again in a new process; the run completes with every point.
job "${spread[@]}" >"$work/out" 2>"$work/err" &
pid=$!
running "$pid"
killed=0
for _ in $(seq 100); do
  w=$(workers_of "$pid" | head -1)
  if [ -n "$w" ]; then kill -KILL "$w"; killed=1; break; fi
  sleep 0.1
done
wait "$pid"; code=$?
read -r n ended failed status < <(spread_state)
echo "round process killed once: exit $code, $n points, $ended failed as ended, status $status"
[ "$killed" = 1 ] && [ "$code" = 0 ] && [ "$n" = 8 ] && [ "$ended" = 0 ] && [ "$failed" = 0 ] && [ "$status" = done ] &&
  echo "ok   round-process-killed-once" ||
  { echo "FAIL round-process-killed-once"; sed 's/^/  | /' "$work/err" | tail -5; fails=$((fails+1)); }
# Every time: each point whose process ends twice is lost (not stored), the run ends
# interrupted (exit 3) and a resume measures them.
rm -f "$sdb" "$sdb-wal" "$sdb-shm"
job "${spread[@]}" >"$work/out" 2>"$work/err" &
pid=$!
running "$pid"
while kill -0 "$pid" 2>/dev/null; do
  for w in $(workers_of "$pid"); do kill -KILL "$w" 2>/dev/null; done
  sleep 0.05
done
wait "$pid"; code=$?
read -r n ended failed status < <(spread_state)
echo "round processes killed each time: exit $code, $n points, $ended failed as ended, status $status"
[ "$code" = 3 ] && [ "$n" -lt 8 ] && [ "$ended" = 0 ] && [ "$status" = interrupted ] &&
  grep -q "point lost: .*round process 1 ended while measuring this point, twice" "$work/err" &&
  grep -q "continue with \`opbench sweep .* --resume 1\`" "$work/err" &&
  echo "ok   round-processes-killed-lose-points" ||
  { echo "FAIL round-processes-killed-lose-points"; sed 's/^/  | /' "$work/err" | tail -5; fails=$((fails+1)); }
check round-processes-resume 0 "${spread[@]}" --resume 1
read -r n ended failed status < <(spread_state)
[ "$n" = 8 ] && [ "$failed" = 0 ] && [ "$status" = done ] && echo "ok   round-processes-resumed-complete" ||
  { echo "FAIL round-processes-resumed-complete: $n points, $failed failed, status $status"; fails=$((fails+1)); }

# --- merge while a run is measured: refused; a copy of an unfinished run completes later ------
mdb=$work/merge-src.db
dest=$work/merge-dest.db
sed 's/rep_ms: 40/rep_ms: 1500, stop: budget, interleave: 1/' "$work/tiny.yaml" > "$work/slow.yaml"  # a sweep still running when merged
slow=("$bin" sweep "$work/slow.yaml" --db "$mdb" --device cpu --providers torch,torch_naive --no-report --progress lines)
job "${slow[@]}" >"$work/out" 2>"$work/err" &
pid=$!
running "$pid"
check merge-while-measured 2 "$bin" merge "$mdb" --db "$dest"
contains merge-while-measured-msg "$work/err" "run 1: is being measured (pid $pid on"
[ -e "$dest" ] && { echo "FAIL merge-while-measured-no-db"; fails=$((fails+1)); } || echo "ok   merge-while-measured-no-db"
kill -INT "$pid"; wait "$pid"
check merge-interrupted 0 "$bin" merge "$mdb" --db "$dest"
contains merge-interrupted-warning "$work/err" "run 1 is interrupted: copied as it stands"
count() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT COUNT(*) FROM points").fetchone()[0], c.execute("SELECT status FROM runs").fetchone()[0])' "$1"; }
before=$(count "$dest")
check merge-source-resumed 0 "${slow[@]}" --resume 1
check merge-again 0 "$bin" merge "$mdb" --db "$dest"
contains merge-again-completed "$work/out" "0 runs copied, 1 completed"
[ "$(count "$dest")" = "$expected done" ] && echo "ok   merge-completed ($before -> $(count "$dest"))" ||
  { echo "FAIL merge-completed: $before -> $(count "$dest"), expected $expected done"; fails=$((fails+1)); }
check merge-third 0 "$bin" merge "$mdb" --db "$dest"
contains merge-third-skipped "$work/out" "0 runs copied (0 points), 1 already in"

echo "fault_test: $fails failed"
[ "$fails" = 0 ]
