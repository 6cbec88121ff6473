#!/usr/bin/env bash
# opbench ab on the CPU: two builds of the toy op (tests/toy_op; the head planted 10x as slow)
# measured together give two runs, paired with each other, whose every speed point is SLOWER
# and every memory point SAME, each point's rounds paired one for one (one worker process a
# side); with three worker processes a side and the head slowed in two of them
# only (an offset of processes, not of the code) no point is SLOWER: judged over the pairs of
# processes (on a loaded 2-core machine the three pairs scatter too much to test detection
# here: tests/unit/device_verdict_test.cpp does, on synthetic rounds); the bandwidth probe waits
# while another process holds its lock; workers of protocol 2 read no config, a build of
# protocol 1 is started with the configs; a base revision that
# does not build is refused (exit 2, naming the build's log) with nothing stored; a revision
# that names no commit too.
# Usage: ab_cli_test.sh OPBENCH OPBENCH_TOY TOY_DIR SOURCE_DIR
set -u
bin=$1; toy=$2; toydir=$3; src=$4
. "$(dirname "$0")/cli_lib.sh"

# --- two builds of the toy, the head planted slower --------------------------------------
mkdir -p "$work/head"
cp "$toy" "$work/head/opbench_toy"
sed 's/rounds: 2/rounds: 6/' "$toydir/toy_scale.yaml" >"$work/toy.yaml"  # six pairs of rounds at most
check ab-planted 1 "$toy" ab HEAD HEAD "$work/toy.yaml" --device cpu --db "$work/ab.db" --label pl \
  --base-bin "$toy" --head-bin "$work/head/opbench_toy" --head-env OPBENCH_PLANT=torch:slow=9 --processes 1 \
  --format json --out "$work/diff.json" --progress none --fail-on-regression
contains ab-counts "$work/err" "regression"
pycheck ab-paired-verdicts '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["paired"] is True, d.keys()
speed = [p for p in d["points"] if p["metric"] == "speed"]
memory = [p for p in d["points"] if p["metric"] == "memory"]
assert len(speed) == 8 and len(memory) == 8, (len(speed), len(memory))
for p in speed:
    assert p["verdict"] == "SLOWER", (p["title"], p["x"], p["verdict"], p.get("reason"))
    # round r of head against round r of base: every round paired
    assert p["pairs"] >= 2 and p["rounds"] == [p["pairs"], p["pairs"]], (p["pairs"], p["rounds"])
    assert p["pair_units"] == p["pairs"], p["pair_units"]  # one process a side: each pair a unit
for p in memory:
    assert p["verdict"] == "SAME", (p["title"], p["verdict"])
# the 8 points, and torch SLOWER as a whole against the control (on a CPU) where it was judged so
whole = sum(1 for s in d["summary"] if (s.get("whole") or {}).get("verdict") == "SLOWER")
assert d["regressions"] == 8 + whole, (d["regressions"], whole)
assert d["processes"] == 1, d.get("processes")
' "$work/diff.json"
check ab-runs 0 "$bin" runs --db "$work/ab.db" --format json
pycheck ab-runs-pair '
import json, sys
runs = {r["label"]: r for r in json.load(open(sys.argv[1]))}
b, h = runs["pl/base"], runs["pl/head"]
assert b["side"] == "base" and h["side"] == "head", (b["side"], h["side"])
assert b["pair"] == h["uuid"] and h["pair"] == b["uuid"], (b["pair"], h["pair"])
assert b["status"] == h["status"] == "done", (b["status"], h["status"])
' "$work/out"
# diff finds the pairing by itself
check ab-diff 0 "$bin" diff label:pl/base label:pl/head --db "$work/ab.db" --threshold 2
contains ab-diff-paired "$work/out" "paired"

# --- the head slowed in its processes 0 and 1 alone: three worker processes a side, no SLOWER --
"$toy" ab HEAD HEAD "$work/toy.yaml" --device cpu --db "$work/po.db" --label po --base-bin "$toy" --processes 3 \
  --head-bin "$work/head/opbench_toy" --head-env OPBENCH_PLANT=torch:slow=20@0,torch:slow=20@1 \
  --format json --out "$work/po.json" --progress none --fail-on-regression >"$work/po-out" 2>"$work/po-err" &
pid=$!
seen=""
while kill -0 "$pid" 2>/dev/null; do seen="$seen $(pgrep -P "$pid" -f -- '--worker' | tr '\n' ' ')"; sleep 0.2; done
wait "$pid"; code=$?
n=$(echo "$seen" | tr ' ' '\n' | sort -u | grep -c .)
[ "$code" = 0 ] && [ "$n" = 6 ] && echo "ok   ab-process-offset" ||
  { echo "FAIL ab-process-offset: exit $code, $n worker processes (expected 0, 6)"; tail -5 "$work/po-err"; fails=$((fails+1)); }
pycheck ab-process-offset-verdicts '
import json, sys
d = json.load(open(sys.argv[1]))
speed = [p for p in d["points"] if p["metric"] == "speed"]
assert len(speed) == 8, len(speed)
for p in speed:
    assert p["verdict"] != "SLOWER" and p["pair_units"] == 3, (p["title"], p["x"], p["verdict"], p["pair_units"])
# the offset is in the values (two rounds in three 21x as slow), not in a verdict
assert max(p["ratio"] for p in speed) > 3, [p["ratio"] for p in speed]
assert d["regressions"] == 0, d["regressions"]
assert d["processes"] == 3, d.get("processes")
' "$work/po.json"
check ab-diff-processes-run 0 "$bin" diff label:po/base label:po/head --db "$work/po.db" --threshold 2
contains ab-diff-processes "$work/out" "spread over 3 worker processes"

# --- worker protocols --------------------------------------------------------------------------
# A build's workers are told the configs and handed the points (worker protocol 2): they read no
# config, here removed as they start. A build from before protocol 2 (it refuses
# --print-worker-protocol, as an older CLI does) is started the old way and reads the configs
# (protocol 1), paired with one of protocol 2.
cp "$toydir/toy_scale.yaml" "$work/gone.yaml"
printf '#!/usr/bin/env bash\ncase " $* " in *" --worker "*) rm -f "%s";; esac\nexec "%s" "$@"\n' \
  "$work/gone.yaml" "$toy" >"$work/vanishing"
printf '#!/usr/bin/env bash\ncase " $* " in *" --print-worker-protocol "*) echo "unknown option" >&2; exit 2;; esac\nexec "%s" "$@"\n' \
  "$toy" >"$work/older"
chmod +x "$work/vanishing" "$work/older"
check ab-protocol-probe 0 "$toy" sweep - --print-worker-protocol
contains ab-protocol-2 "$work/out" "2"
check ab-told 0 "$toy" ab HEAD HEAD "$work/gone.yaml" --device cpu --db "$work/told.db" --label told --processes 1 \
  --base-bin "$work/vanishing" --head-bin "$work/vanishing" --progress none --format json --out "$work/told.json"
if [ -e "$work/gone.yaml" ]; then echo "FAIL ab-told-config-gone: the workers did not start"; fails=$((fails+1));
else echo "ok   ab-told-config-gone"; fi
check ab-older 0 "$toy" ab HEAD HEAD "$work/toy.yaml" --device cpu --db "$work/older.db" --label older --processes 1 \
  --base-bin "$work/older" --head-bin "$toy" --progress none --format json --out "$work/older.json"
contains ab-older-protocol "$work/err" "its workers reading the configs (worker protocol 1)"
pycheck ab-protocols-measure-every-point '
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    assert d["paired"] is True, path
    assert len(d["points"]) == 16, (path, len(d["points"]))
    assert all(p["verdict"] != "ERROR" for p in d["points"]), path
' "$work/told.json" "$work/older.json"

# --- the bandwidth probe, one process of the host at a time --------------------------------
# Workers that start side by side probe the device's bandwidth under a lock: while another
# process holds it, a sweep waits for it (its peak is not measured sharing the device).
sed 's/rounds: 2}/rounds: 2, processes: 1}/' "$toydir/toy_scale.yaml" >"$work/alone.yaml"  # this process probes first
flock "$work/opbench-bandwidth-cpu.lock" sleep 12 &
holder=$!
sleep 0.5
check lock-sweep 0 env TMPDIR="$work" "$toy" sweep "$work/alone.yaml" --device cpu --db "$work/lock.db" --no-report \
  --progress none
wait "$holder"
check lock-export 0 "$bin" export 1 --db "$work/lock.db" --out "$work/lock.json"
# the sweep's own probe (its stage `bandwidth`, about a second unlocked) waited for the holder
pycheck bandwidth-probe-waits-for-the-lock '
import json, sys
s = json.load(open(sys.argv[1]))["runs"][0]["stages"]["bandwidth"]
assert s >= 3, s
' "$work/lock.json"

# --- a base that does not build --------------------------------------------------------------
git clone -q --shared "$src" "$work/tree" || { echo "FAIL clone: $src is not a git tree"; exit 1; }
(cd "$work/tree" && printf 'message(FATAL_ERROR "broken on purpose")\n' | cat - CMakeLists.txt >CMakeLists.new &&
  mv CMakeLists.new CMakeLists.txt && git -c user.name=t -c user.email=t@t commit -qam broken) ||
  { echo "FAIL commit"; exit 1; }
broken=$(git -C "$work/tree" rev-parse HEAD)
check ab-broken 2 "$bin" ab "$broken" HEAD "$src/configs/quick.yaml" --device cpu --tree "$work/tree" \
  --builds "$work/builds" --db "$work/broken.db" --progress none
contains ab-broken-what "$work/err" "does not build"
contains ab-broken-commit "$work/err" "${broken:0:12}"
contains ab-broken-log "$work/err" "$work/builds/"
if [ -e "$work/broken.db" ]; then echo "FAIL ab-broken-nothing-stored: $work/broken.db exists"; fails=$((fails+1));
else echo "ok   ab-broken-nothing-stored"; fi
# the same build is not tried twice in a way that hides the failure: refused again
check ab-broken-again 2 "$bin" ab "$broken" HEAD "$src/configs/quick.yaml" --device cpu --tree "$work/tree" \
  --builds "$work/builds" --db "$work/broken.db" --progress none
check ab-no-commit 2 "$bin" ab no-such-revision HEAD "$src/configs/quick.yaml" --device cpu --db "$work/broken.db"
contains ab-no-commit-msg "$work/err" "no-such-revision"

[ "$fails" = 0 ] && echo "ab_cli_test: all ok" || echo "ab_cli_test: $fails failed"
[ "$fails" = 0 ]
