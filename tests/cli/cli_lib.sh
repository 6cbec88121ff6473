# Helpers for the command-line tests (sourced): a scratch folder, a failure count, and
# check / contains / pycheck, each printing one "ok" or "FAIL" line; quartered, a baseline
# document 4x better than a report; same_tables, two databases' reports alike in shape;
# joined_points_are_the_sweeps, a joined run of shards against the single-process sweep;
# tiny_sweep, the config of a tiny CPU sweep for scripts/ci-report.
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fails=0
check() { # check NAME EXPECTED_STATUS COMMAND...: the command's output lands in $work/out, err
  local name=$1 want=$2; shift 2
  "$@" >"$work/out" 2>"$work/err"; local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"; sed 's/^/  | /' "$work/err" | tail -5; fails=$((fails+1))
  else echo "ok   $name"; fi
}
contains() { # contains NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then echo "ok   $1"; else echo "FAIL $1: '$3' not in $2"; sed 's/^/  | /' "$2" | head -20; fails=$((fails+1)); fi
}
pycheck() { # pycheck NAME SCRIPT ARGS...: a python assertion script
  local name=$1 script=$2; shift 2
  if python3 -c "$script" "$@" 2>"$work/pyerr"; then echo "ok   $name"; else echo "FAIL $name"; sed 's/^/  | /' "$work/pyerr" | tail -5; fails=$((fails+1)); fi
}
same_tables() { # same_tables DB_A DB_B: their reports hold the same tables, rows and columns
  # (figures, column widths, run lines and timing notes left out)
  local side
  for side in 1 2; do
    "$bin" report --db "${!side}" | sed -E 's/[0-9]+\.[0-9]+//g; s/ +/ /g; s/-+/-/g' |
      grep -v '^run \|^- \|^Noisy points\|^speed points stopped\|^time: \|^$' >"$work/shape-$side"
  done
  if cmp -s "$work/shape-1" "$work/shape-2"; then echo "ok   joined-report-has-the-sweeps-tables"
  else echo "FAIL joined report differs in shape"; diff "$work/shape-1" "$work/shape-2" | head; fails=$((fails+1)); fi
}
joined_points_are_the_sweeps() { # joined_points_are_the_sweeps WHOLE.json JOINED.json SHARDS LABEL SAME_SEQ:
  # the exports of the single-process sweep and of the joined run: every point of the sweep once,
  # the run done, labelled LABEL, its options the shard count and no shard; SAME_SEQ 1: the
  # points in the sweep's order too
  pycheck joined-points-are-the-sweeps '
import json, sys
whole = json.load(open(sys.argv[1]))["runs"]
joined = json.load(open(sys.argv[2]))["runs"]
assert len(whole) == 1 and len(joined) == 1, (len(whole), len(joined))
key = lambda p: (p["title"], p["x_value"], p["provider"])
w = [key(p) for p in whole[0]["points"]]
j = [key(p) for p in joined[0]["points"]]
assert len(j) == len(set(j)), "a point twice"
assert sorted(w) == sorted(j), set(w) ^ set(j)
if sys.argv[5] == "1":
    assert [p["seq"] for p in joined[0]["points"]] == [p["seq"] for p in whole[0]["points"]]
options = {o["name"]: o["value"] for o in joined[0]["options"]}
assert options["shards"] == sys.argv[3] and "shard" not in options, options
assert joined[0]["status"] == "done" and joined[0]["label"] == sys.argv[4], (joined[0]["status"], joined[0]["label"])
' "$@"
}
tiny_sweep() { # tiny_sweep FILE REP_MS: a config of a tiny CPU sweep for scripts/ci-report (lrpe_rotate
  # on torch, speed and memory at n = 16 and 32), each point repeated for REP_MS ms
  cat >"$1" <<YAML
op: lrpe_rotate
x: {n: [16, 32]}
params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: fwd, metric: [speed, memory]}
variants: [{act: none}]
providers: {torch: to}
timing: {warmup_ms: 1, rep_ms: $2, stat: median, flush_l2: false}
YAML
}
quartered() { # quartered IN.md OUT.md: a report with every table value divided by 4 (a baseline 4x better)
  python3 - "$1" "$2" <<'PY'
import re, sys
out, fence = [], False
for line in open(sys.argv[1]).read().split("\n"):
    if line.startswith("```"): fence = not fence
    elif fence and re.match(r"^\d+ ", line):
        cells = line.split()
        line = "  ".join(cells[:2] + ["%.6f" % (float(c) / 4) for c in cells[2:]])
    out.append(line)
open(sys.argv[2], "w").write("\n".join(out))
PY
}
