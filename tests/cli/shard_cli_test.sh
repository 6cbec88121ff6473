#!/usr/bin/env bash
# Shards of a sweep through the command line: `--shard 1/2` and `--shard 2/2` (one of them
# exported to JSON, as a host without a shared disk would) joined with
# `merge --join-shards` give exactly the points of one unsharded sweep (same titles, x values
# and providers, none twice, the same tables in the report); the shard is shown with its run
# and repeated by its resume command; a missing or doubled shard and bad --shard values are
# refused with one line naming them; scripts/slurm-sweep.sbatch runs its array tasks and the
# join on a machine without Slurm, and refuses array ids that are not a range.
# Usage: shard_cli_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"
# Shards join only when measured at one commit: pin it, so that a source tree edited while the
# test runs does not split the sweep.
export OPBENCH_GIT_COMMIT=0123456789abcdef0123456789abcdef01234567
one_line() { [ "$(wc -l <"$work/err")" = 1 ] && echo "ok   $1-one-line" || { echo "FAIL $1 not one line"; cat "$work/err"; fails=$((fails+1)); }; }

printf '%s\n' 'op: lrpe_rotate' 'x: {n: [16, 32, 64, 128]}' \
  'params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: [fwd, bwd], metric: [speed, memory]}' \
  'variants: [{act: none}, {act: silu}]' 'providers: {torch: to, cuda: tr}' \
  'timing: {warmup_ms: 1, rep_ms: 3, rounds: 2, flush_l2: false}' >"$work/t.yaml"
sweep=("$bin" sweep "$work/t.yaml" --device cpu --providers torch --label nightly --progress none --no-report)

# Bad --shard: one line naming the option, exit 2, nothing written.
for bad in 0/2 3/2 x "" 1/0 2/; do
  check "shard-bad-'$bad'" 2 "${sweep[@]}" --db "$work/none.db" --shard "$bad"
  contains "shard-bad-'$bad'-msg" "$work/err" "opbench: --shard: "
  one_line "shard-bad-'$bad'"
done
contains shard-range-msg "$work/err" "--shard: 2/: expected i/N"
check shard-0-msg-range 2 "${sweep[@]}" --db "$work/none.db" --shard 0/2
contains shard-0-range "$work/err" "--shard: 0/2: the shard i must be 1 to 2"
[ -e "$work/none.db" ] && { echo "FAIL bad --shard created a database"; fails=$((fails+1)); }

# The dry run of a shard lists its part.
check shard-dry-run 0 "$bin" sweep "$work/t.yaml" --device cpu --providers torch --shard 2/2 --dry-run
contains shard-dry-run-part "$work/out" "on cpu, shard 2/2: 8 of 8 tables, 16 of 32 points"

check whole 0 "${sweep[@]}" --db "$work/whole.db"
check shard1 0 "${sweep[@]}" --db "$work/s1.db" --shard 1/2
check shard2 0 "${sweep[@]}" --db "$work/s2.db" --shard 2/2 --out "$work/s2.md"
contains shard-report-line "$work/s2.md" ", cpu, shard 2/2, "
check runs-shard 0 "$bin" runs --db "$work/s2.db"
contains runs-shard-line "$work/out" "run 1: shard 2/2 of its sweep"
check runs-shard-json 0 "$bin" runs --db "$work/s2.db" --format json
pycheck runs-shard-json-field 'import json, sys; r = json.load(open(sys.argv[1]))[0]; assert r["shard"] == "2/2", r' "$work/out"
check export-shard2 0 "$bin" export --all --db "$work/s2.db" --out "$work/s2.json"

# Missing and doubled shards: refused, naming them, nothing written.
check join-missing 2 "$bin" merge --join-shards "$work/s1.db" --db "$work/none.db"
contains join-missing-msg "$work/err" "--join-shards: shard 2/2: missing"
one_line join-missing
check join-doubled 2 "$bin" merge --join-shards "$work/s1.db" "$work/s2.db" "$work/s2.json" --db "$work/none.db"
contains join-doubled-msg "$work/err" "--join-shards: shard 2/2: given twice (run 1 in $work/s2.db, run 1 in $work/s2.json)"
one_line join-doubled
check join-not-a-shard 2 "$bin" merge --join-shards "$work/s1.db" "$work/s2.db" "$work/whole.db" --db "$work/none.db"
contains join-not-a-shard-msg "$work/err" "whole.db: run 1: is not a shard (swept without --shard)"
[ -e "$work/none.db" ] && { echo "FAIL a refused join created a database"; fails=$((fails+1)); }

check join 0 "$bin" merge --join-shards "$work/s1.db" "$work/s2.json" --db "$work/all.db"
contains join-says "$work/out" "joined 2 shards (32 points) into $work/all.db as run 1"
check join-again 0 "$bin" merge --join-shards "$work/s1.db" "$work/s2.json" --db "$work/all.db"
contains join-again-says "$work/out" "already in $work/all.db as run 1"
check export-whole 0 "$bin" export --all --db "$work/whole.db" --out "$work/whole.json"
check export-all 0 "$bin" export --all --db "$work/all.db" --out "$work/all.json"
joined_points_are_the_sweeps "$work/whole.json" "$work/all.json" 2 nightly 1
# The joined run's report has the whole sweep's tables, in its order (the figures aside, and
# the lines of what each run measured: its stops and where its time went).
same_tables "$work/whole.db" "$work/all.db"
check report-joined 0 "$bin" report --db "$work/all.db"
contains report-joined-line "$work/out" ", cpu, joined from 2 shards, "

# An interrupted shard resumes as that shard: the resume command repeats --shard.
check shard-resume-other 2 "${sweep[@]}" --db "$work/s1.db" --resume 1 --shard 2/2
contains shard-resume-other-msg "$work/err" "--shard: 2/2: run 1 was measured with --shard 1/2"

# The Slurm job script, run as its array's tasks would be, then its join step.
export OPBENCH="$bin" OPBENCH_OUT="$work/slurm" OPBENCH_ARGS="--device cpu --providers torch"
for i in 1 2 3; do
  check "slurm-task-$i" 0 env SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 bash "$src/scripts/slurm-sweep.sbatch" "$work/t.yaml"
done
# Array ids that are not a range with a step (--array=1,4,9) are refused by every task.
check slurm-id-list 2 env SLURM_ARRAY_TASK_ID=4 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 SLURM_ARRAY_TASK_STEP=1 \
  SLURM_ARRAY_TASK_COUNT=3 bash "$src/scripts/slurm-sweep.sbatch" "$work/t.yaml"
contains slurm-id-list-msg "$work/err" "slurm-sweep: task 4: the array's 3 ids are not the range 1-9:1"
one_line slurm-id-list
check slurm-join 0 env OPBENCH_STEP=join SLURM_ARRAY_TASK_COUNT=3 bash "$src/scripts/slurm-sweep.sbatch" "$work/t.yaml"
check slurm-joined-runs 0 "$bin" runs --db "$work/slurm/all.db" --format json
pycheck slurm-joined-all-points 'import json, sys; r = json.load(open(sys.argv[1])); assert len(r) == 1 and r[0]["points"] == 32 and r[0]["shards"] == 3, r' "$work/out"

echo "shard_cli_test: $fails failed"
[ "$fails" = 0 ]
