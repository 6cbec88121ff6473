#!/usr/bin/env bash
# Checks and times the 1d kernels on a CUDA machine in one go: the correctness test, the
# benchmark, then compute-sanitizer memcheck on a small subset. Uses build-k1d/ (built by
# tests/gpu/build_kernels_1d.sh, here or carried). Logs and the CSV go to $1 (or $OUT).
# Usage from the repo root: tests/gpu/run_kernels_1d.sh [outdir]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUTDIR=${1:-${OUT:-/tmp/k1d}}
B=${BUILD_DIR:-build-k1d}
mkdir -p "$OUTDIR"
if [ ! -x "$B/kernels_1d_test" ] || [ ! -x "$B/kernels_1d_bench" ]; then
  tests/gpu/build_kernels_1d.sh || exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
  --format=csv 2>&1 | tee "$OUTDIR/gpu.txt"
for pf in 1 0; do  # every kernel with and without its L2 prefetch
  echo "== test (K1D_PREFETCH=$pf)"
  K1D_PREFETCH=$pf timeout 150 "$B/kernels_1d_test" --gtest_brief=1 > "$OUTDIR/test_pf$pf.log" 2>&1
  echo "test rc=$?" | tee -a "$OUTDIR/test_pf$pf.log"
  grep -E "^\[kernels_1d_test\]|FAILED|PASSED|rel " "$OUTDIR/test_pf$pf.log" | head -30
done
echo "== bench"
timeout 100 "$B/kernels_1d_bench" "$OUTDIR/bench.csv" > "$OUTDIR/bench.log" 2>&1
echo "bench rc=$?" | tee -a "$OUTDIR/bench.log"
if command -v compute-sanitizer > /dev/null; then
  echo "== memcheck (subset)"
  timeout 80 compute-sanitizer --tool memcheck --print-limit 5 "$B/kernels_1d_test" \
    --gtest_filter='Kernels1d.Sanitize:Kernels1d.Errors' --gtest_brief=1 \
    > "$OUTDIR/memcheck.log" 2>&1
  echo "memcheck rc=$?" | tee -a "$OUTDIR/memcheck.log"
  grep -E "ERROR SUMMARY|Invalid|PASSED|FAILED" "$OUTDIR/memcheck.log" | head -10
fi
echo "== bench summary"
sed -n '1,3p' "$OUTDIR/bench.log"
sed -n '/^SUMMARY/,$p' "$OUTDIR/bench.log"
