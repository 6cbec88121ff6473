#!/usr/bin/env bash
# The check against the truth on a GPU, at odd shapes (tests/data/odd/OP.yaml): each op swept
# with our kernels and the eager baselines must give no failed point, no unchecked point and no
# check failure; swept again with each fault planted in every provider (OPBENCH_PLANT='*:element',
# '*:scale', '*:tail') every point must fail its check (every size there is odd, so a dropped
# tail block shows everywhere). Prints per op and provider the points and the largest error
# against its tolerance (with a fault, the smallest). Exits 77 (skipped) without a CUDA device.
#
# Usage: tests/gpu/odd_shapes_test.sh OPBENCH DATA_DIR [OP ...]   (default: every config there)
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
  if [ $st != 0 ] && grep -qE "no such CUDA device \(0 present\)|LibTorch without CUDA" "$work/$label.log"; then
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
# (every point's check failed). Prints a line per provider.
judge() {
  "$py" - "$1" "$2" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2]
points = json.load(open(path))["runs"][0]["points"]
floors = {"bf16": 2**-7, "fp16": 2**-10, "fp32": 2**-16}
def tol(p, ref):
    return max(floors[p["params"]["dtype"]], 2 * ref) if ref >= 0 else floors[p["params"]["dtype"]]
# clean: the largest error against its tolerance; fault: the smallest (how clearly the
# faintest fault failed)
bad, by = [], {}
for p in points:
    s = by.setdefault(p["provider"], {"points": 0, "failed": 0, "worst": None, "where": ""})
    s["points"] += 1
    name = f'{p["title"]} {p["x_name"]}={p["x_value"]} {p["provider"]}'
    if p["error"]:
        bad.append(f"{name}: error: {p['error']}")
        continue
    if p["rel_err"] is None or p["rel_err"] < 0:
        bad.append(f"{name}: not checked")
        continue
    s["failed"] += p["check_failed"]
    r = max(p["rel_err"] / tol(p, p["ref_err"]), p["max_err"] / tol(p, p["ref_max_err"]))
    if s["worst"] is None or (r > s["worst"] if want == "clean" else r < s["worst"]):
        s["worst"], s["where"] = r, f'{p["title"]} {p["x_name"]}={p["x_value"]}'
    if want == "clean" and p["check_failed"]:
        bad.append(f'{name}: check failed: error {p["rel_err"]:.3g} (reference code {p["ref_err"]:.3g}), '
                   f'largest element {p["max_err"]:.3g} (reference code {p["ref_max_err"]:.3g})')
    if want == "fault" and not p["check_failed"]:
        bad.append(f'{name}: the planted fault passed: error {p["rel_err"]:.3g}, largest element {p["max_err"]:.3g}')
for prov, s in sorted(by.items()):
    which = "largest" if want == "clean" else "smallest"
    print(f'  {prov}: {s["points"]} points, {s["failed"]} check failures, {which} error / tolerance '
          f'{s["worst"] or 0:.3g} ({s["where"]})')
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
  sweep "$op-clean" "$config" || continue
  judge "$work/$op-clean.json" clean || failures=$((failures + 1))
  for fault in element scale tail; do
    sweep "$op-$fault" "$config" "OPBENCH_PLANT=*:$fault" || continue
    judge "$work/$op-$fault.json" fault || failures=$((failures + 1))
  done
done
echo "odd shapes: ${#ops[@]} ops, $failures failures"
[ $failures = 0 ]
