#!/usr/bin/env bash
# The check against the truth on a GPU, at odd shapes (tests/data/odd/OP.yaml): each op swept
# with our kernels and the eager baselines must give no failed point, no unchecked point and no
# check failure; swept again with each fault planted in every provider (OPBENCH_PLANT='*:element',
# '*:scale', '*:tail') every point where the fault shows must fail its check (judge, below).
# Prints per op and provider the points and the largest error against its tolerance (with a
# fault, the smallest where it shows). Exits 77 (skipped) without a CUDA device.
#
# Usage: tests/gpu/odd_shapes_test.sh OPBENCH DATA_DIR [OP ...]   (default: every config there)
# Environment: ODD_SHAPES_RUNS, the sweeps to make of each op (default "clean element scale
# tail"; a subset repeats part of the test).
set -uo pipefail
bin=$1 data=$2
shift 2
ops=("$@")
if [ ${#ops[@]} -eq 0 ]; then
  for f in "$data"/*.yaml; do ops+=("$(basename "$f" .yaml)"); done
fi
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/odd-shapes.XXXXXX")
trap 'rm -rf "$work"' EXIT
db=$work/odd.db
failures=0

# One sweep into $db, labelled; $work/LABEL.json holds the run. Extra arguments: NAME=VALUE
# settings of its environment.
sweep() {
  local label=$1 config=$2
  shift 2
  local t0=$SECONDS
  env "$@" "$bin" sweep "$config" --device cuda --db "$db" --label "$label" --no-report --progress none \
    >"$work/$label.log" 2>&1
  local st=$?
  if [ $st != 0 ] && grep -qE "no such CUDA device \(0 (are )?present\)|LibTorch without CUDA" "$work/$label.log"; then
    echo "SKIP: no CUDA device"
    exit 77
  fi
  if [ $st != 0 ]; then
    echo "FAIL $label: the sweep exited $st"
    tail -5 "$work/$label.log"
    failures=$((failures + 1))
    return 1
  fi
  "$bin" export "label:$label" --db "$db" --out "$work/$label.json" || { failures=$((failures + 1)); return 1; }
  echo "$label: $((SECONDS - t0)) s"
}

# Checks a run: `clean` (no failure, every point checked and within tolerance) or `fault`
# (every point where the fault shows fails its check). A fault shows at a point where the same
# fault planted in the reference code (the `torch` provider) errs by more than three times the
# tolerance in either figure: a provider's own error is within one tolerance of the truth (its
# clean run passes), so by the triangle inequality its faulted output is then more than one
# tolerance away and must fail. Where a fault hides inside the dtype's own error (a softmax so
# peaked that bf16 rounding moves it by more than the fault) no check could see it; the fault
# must still show at most points. Prints a line per provider.
judge() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2]
points = json.load(open(path))["runs"][0]["points"]
floors = {"bf16": 2**-7, "fp16": 2**-10, "fp32": 2**-16}
def tol(p, ref):
    return max(floors[p["params"]["dtype"]], 2 * ref) if ref >= 0 else floors[p["params"]["dtype"]]
def ratio(p):  # the larger of the two figures against its tolerance
    return max(p["rel_err"] / tol(p, p["ref_err"]), p["max_err"] / tol(p, p["ref_max_err"]))
reference = {(p["title"], p["x_value"]): p for p in points if p["provider"] == "torch"}
def shows(p):
    r = reference.get((p["title"], p["x_value"]))
    return r is not None and not r["error"] and r["rel_err"] >= 0 and ratio(r) > 3
# clean: the largest error against its tolerance; fault: the smallest where the fault shows
bad, by = [], {}
for p in points:
    s = by.setdefault(p["provider"], {"points": 0, "failed": 0, "hidden": 0, "worst": None, "where": ""})
    s["points"] += 1
    name = f'{p["title"]} {p["x_name"]}={p["x_value"]} {p["provider"]}'
    if p["error"]:
        bad.append(f"{name}: error: {p['error']}")
        continue
    if p["rel_err"] is None or p["rel_err"] < 0:
        bad.append(f"{name}: not checked")
        continue
    s["failed"] += p["check_failed"]
    if want == "fault" and not shows(p):
        s["hidden"] += 1
        continue
    r = ratio(p)
    if s["worst"] is None or (r > s["worst"] if want == "clean" else r < s["worst"]):
        s["worst"], s["where"] = r, f'{p["title"]} {p["x_name"]}={p["x_value"]}'
    if want == "clean" and p["check_failed"]:
        bad.append(f'{name}: check failed: error {p["rel_err"]:.3g} (reference code {p["ref_err"]:.3g}), '
                   f'largest element {p["max_err"]:.3g} (reference code {p["ref_max_err"]:.3g})')
    if want == "fault" and not p["check_failed"]:
        bad.append(f'{name}: the planted fault passed: error {p["rel_err"]:.3g}, largest element {p["max_err"]:.3g}')
for prov, s in sorted(by.items()):
    which = "largest" if want == "clean" else "smallest"
    hidden = f', the fault hidden at {s["hidden"]}' if want == "fault" else ""
    print(f'  {prov}: {s["points"]} points, {s["failed"]} check failures{hidden}, {which} error / tolerance '
          f'{s["worst"] or 0:.3g} ({s["where"]})')
    if want == "fault" and s["hidden"] * 2 > s["points"]:
        bad.append(f"{prov}: the fault hidden at more than half the points")
for b in bad[:20]:
    print("  " + b)
if len(bad) > 20:
    print(f"  ... and {len(bad) - 20} more")
sys.exit(1 if bad or not points else 0)
PY
}

for op in "${ops[@]}"; do
  config=$data/$op.yaml
  [ -f "$config" ] || { echo "FAIL $op: no config $config"; failures=$((failures + 1)); continue; }
  for kind in ${ODD_SHAPES_RUNS:-clean element scale tail}; do
    if [ "$kind" = clean ]; then
      sweep "$op-clean" "$config" || continue
      judge "$work/$op-clean.json" clean || failures=$((failures + 1))
    else
      sweep "$op-$kind" "$config" "OPBENCH_PLANT=*:$kind" || continue
      judge "$work/$op-$kind.json" fault || failures=$((failures + 1))
    fi
  done
done
echo "odd shapes: ${#ops[@]} ops, $failures failures"
[ $failures = 0 ]
