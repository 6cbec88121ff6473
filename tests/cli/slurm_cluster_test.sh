#!/usr/bin/env bash
# scripts/slurm-sweep.sbatch under a real Slurm: a one-node cluster of Debian's packages (munge,
# slurmctld, slurmd; scripts/bootstrap --slurm installs them) started in the test's own folder
# on free ports, its config written here: one CPU partition on a cluster that knows GPUs
# (GresTypes=gpu) but has none, so the script's GPU line must be dropped (--gres=none).
# configs/quick.yaml is submitted with sbatch as a job array of 3 tasks whose ids start at 0
# and step by 2 (--array=0-4:2), from a submit folder that is not the project, on the CPU
# providers. One task is cancelled halfway through its shard (scancel) and requeued (scontrol
# requeue): it continues its shard's run. The task that finds every shard measured submits the
# join once, as a job depending on the array; the joined run holds every point of a
# single-process sweep once, the shards recorded, and its report has that sweep's tables.
# Every daemon, job and file the test started is gone when it ends, also when it fails. A
# missing package fails the test (scripts/bootstrap --slurm installs them).
# Usage: slurm_cluster_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"
started=$SECONDS
# Shards join only when measured at one commit: pin it (the jobs inherit the environment).
export OPBENCH_GIT_COMMIT=0123456789abcdef0123456789abcdef01234567
for tool in munged slurmctld slurmd sbatch scontrol scancel squeue sinfo; do
  command -v "$tool" >/dev/null || { echo "FAIL $tool is not installed (scripts/bootstrap --slurm installs Slurm)"; exit 1; }
done

chmod 755 "$work"
cluster=$work/cluster
pids=()
cluster_down() { # the jobs (their processes outlive slurmd), then the daemons, each waited for
  if [ ${#pids[@]} = 3 ] && kill -0 "${pids[1]}" 2>/dev/null; then
    timeout 10 scancel --user="$(id -un)" 2>/dev/null
    local t0=$SECONDS
    while [ -n "$(timeout 5 squeue -h -t R,CG,CF 2>/dev/null)" ] && [ $((SECONDS - t0)) -lt 20 ]; do sleep 0.2; done
  fi
  local i
  for (( i=${#pids[@]}-1; i>=0; i-- )); do kill "${pids[$i]}" 2>/dev/null; wait "${pids[$i]}" 2>/dev/null; done
  pids=()
}
trap 'cluster_down; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# A free port each for slurmctld and slurmd.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
mkdir -p "$cluster/munge" "$cluster/state" "$cluster/spool"
chmod 755 "$cluster/munge"
head -c 1024 /dev/urandom >"$cluster/munge/key" && chmod 600 "$cluster/munge/key"
host=$(hostname -s)
user=$(id -un)
cat >"$cluster/slurm.conf" <<EOF
ClusterName=opbench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$cluster/munge/socket,cred_expire=5
StateSaveLocation=$cluster/state
SlurmdSpoolDir=$cluster/spool
SlurmctldPidFile=$cluster/slurmctld.pid
SlurmdPidFile=$cluster/slurmd.pid
SlurmctldLogFile=$cluster/slurmctld.log
SlurmdLogFile=$cluster/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=5
GresTypes=gpu
NodeName=opbench-cpu NodeHostname=$host NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=cpu Nodes=opbench-cpu Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$cluster/slurm.conf
munged -F --force --socket="$cluster/munge/socket" --key-file="$cluster/munge/key" \
  --pid-file="$cluster/munge/pid" --log-file="$cluster/munge/log" --seed-file="$cluster/munge/seed" \
  >"$cluster/munged.out" 2>&1 &
pids+=($!)
slurmctld -D -i -f "$SLURM_CONF" >"$cluster/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N opbench-cpu -f "$SLURM_CONF" >"$cluster/slurmd.out" 2>&1 &
pids+=($!)
dump_cluster() { # the daemons' last words, for a failure
  for f in slurmctld.log slurmd.log munge/log; do echo "  -- $f"; tail -n 15 "$cluster/$f" 2>/dev/null | sed 's/^/  | /'; done
  squeue -a -t all -o '%i %j %T %r' 2>/dev/null | sed 's/^/  | /'
  for f in "$work"/submit/opbench-*.log; do [ -e "$f" ] && { echo "  -- $f"; tail -n 8 "$f" | sed 's/^/  | /'; }; done
}
give_up() { echo "FAIL $1 ($((SECONDS - started)) s)"; dump_cluster; exit 1; }

# The single-process sweep to compare with, while the cluster starts.
submit=$work/submit
mkdir -p "$submit"
# quick.yaml with two table cells a block instead of the CPU's 64 (all of a shard's), so that a
# shard stores its points as it goes and the cancelled task leaves some behind.
sed -E 's/^timing: \{(.*)\}$/timing: {\1, interleave: 2}/' "$src/configs/quick.yaml" >"$submit/quick.yaml"
grep -q '^timing: {.*, interleave: 2}$' "$submit/quick.yaml" || give_up "configs/quick.yaml: no one-line timing to add interleave to"
"$bin" sweep "$submit/quick.yaml" --device cpu --providers torch --label slurm --db "$work/whole.db" \
  --progress none --no-report >"$work/whole.out" 2>&1 || { cat "$work/whole.out"; give_up "the single-process sweep failed"; }

# Bounded polls: until NAME's command succeeds, at most SECONDS.
wait_for() { # wait_for NAME SECONDS COMMAND...
  local name=$1 limit=$2 t0=$SECONDS; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -ge "$limit" ] && give_up "$name: not within $limit s"
    sleep 0.2
  done
  echo "ok   $name ($((SECONDS - t0)) s)"
}
node_idle() { [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]; }
wait_for cluster-up 30 node_idle

# The array: ids 0, 2 and 4 (shards 1/3, 2/3, 3/3), submitted from a folder that is not the
# project, the config's path relative to it. Without OPBENCH the script finds the project's
# build/opbench from its own submitted path (Slurm runs a copy of it).
cd "$submit"
if [ "$bin" -ef "$src/build/opbench" ]; then unset OPBENCH; else export OPBENCH=$bin; fi
export OPBENCH_ARGS="--device cpu --providers torch"
unset OPBENCH_OUT OPBENCH_STEP OPBENCH_SUBMIT_JOIN
out=$submit/results/shards/quick
check sbatch-array 0 sbatch --parsable --array=0-4:2 --gres=none --cpus-per-task=1 \
  "$src/scripts/slurm-sweep.sbatch" quick.yaml --label slurm
array=$(cut -d';' -f1 "$work/out")
[ -n "$array" ] || give_up "sbatch gave no job id"
log() { echo "$submit/opbench-sweep-${array}_$1.log"; }
state() { scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }

# Task 2 (shard 2/3) cancelled once it has measured a cell, then requeued.
has_a_cell() { grep -q '^\[1/' "$(log 2)"; }
wait_for task-2-measuring 60 has_a_cell
check scancel-task-2 0 scancel "${array}_2"
cancelled() { [ "$(state "${array}_2")" = CANCELLED ]; }
wait_for task-2-cancelled 20 cancelled
wait_for task-2-stopped 20 eval '[ -z "$(squeue -h -t CG -j "${array}_2")" ]'
check shard-2-left 0 "$bin" runs --db "$out/shard-2-of-3.db" --format json
pycheck shard-2-left-part 'import json, sys; r = json.load(open(sys.argv[1])); assert len(r) == 1 and r[0]["status"] != "done" and 0 < r[0]["points"] < 12, r' "$work/out"
check requeue-task-2 0 scontrol requeue "${array}_2"

# The join: submitted by the task that found every shard measured, once, after the array.
join_done() {
  local id
  id=$(squeue -h -a -t all -n opbench-join -o %i 2>/dev/null | head -1)
  [ -n "$id" ] && [ "$(state "$id")" = COMPLETED ]
}
wait_for joined 90 join_done
for task in 0 2 4; do
  [ "$(state "${array}_$task")" = COMPLETED ] && echo "ok   task-$task-completed" ||
    { echo "FAIL task $task: $(state "${array}_$task")"; fails=$((fails+1)); }
done
joins=$(squeue -h -a -t all -n opbench-join -o %i | wc -l)
[ "$joins" = 1 ] && echo "ok   one-join-job" || { echo "FAIL $joins join jobs"; fails=$((fails+1)); }
join_id=$(squeue -h -a -t all -n opbench-join -o %i | head -1)
# It started once every task had ended (its dependency, afterany on the array, is met and gone).
pycheck join-after-the-array '
import re, subprocess, sys
def times(job):
    line = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True).stdout
    return re.findall(r"(StartTime|EndTime)=(\S+)", line)
start = dict(times(sys.argv[1]))["StartTime"]
ends = [t for job in sys.argv[2:] for k, t in times(job) if k == "EndTime"]
assert len(ends) == 3 and all(start >= e for e in ends), (start, ends)
' "$join_id" "${array}_0" "${array}_2" "${array}_4"
contains join-log "$submit/opbench-join-$join_id.log" "joined 3 shards (36 points) into results/shards/quick/all.db as run 1"
contains task-2-continued "$(log 2)" "shard 2/3: continuing run 1 of results/shards/quick/shard-2-of-3.db"
contains task-2-rerun "$(log 2)" "shard 2/3: task 2 of array job $array on $(hostname), restart 1"
contains task-4-is-shard-3 "$(log 4)" "shard 3/3: task 4 of array job $array"
for i in 1 2 3; do
  check "shard-$i-runs" 0 "$bin" runs --db "$out/shard-$i-of-3.db" --format json
  pycheck "shard-$i-one-run-done" 'import json, sys; r = json.load(open(sys.argv[1])); assert len(r) == 1 and r[0]["status"] == "done" and r[0]["shard"] == sys.argv[2], r' "$work/out" "$i/3"
done

# The joined run against the single-process sweep: every point once, the same tables.
check export-whole 0 "$bin" export --all --db "$work/whole.db" --out "$work/whole.json"
check export-joined 0 "$bin" export --all --db "$out/all.db" --out "$work/all.json"
joined_points_are_the_sweeps "$work/whole.json" "$work/all.json" 3 slurm 0
same_tables "$work/whole.db" "$out/all.db"

[ "$fails" = 0 ] || dump_cluster
echo "slurm_cluster_test: $fails failed ($((SECONDS - started)) s)"
[ "$fails" = 0 ]
