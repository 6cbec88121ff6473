#!/usr/bin/env bash
# Checks and times the kernels on a CUDA machine in one go, from binaries built by
# tests/gpu/build_kernels.sh (in BUILD_DIR, default build-kernels/; built first when missing).
# Logs and CSVs go to OUTDIR (default BUILD_DIR/logs), packed into OUTDIR.tgz at the end.
# Usage from the repo root: tests/gpu/run_kernels.sh [step ...]
# Steps (default: all but ncu-tpa and memcheck):
#   test-1d       kernels_1d_test, every kernel with its L2 prefetch and without
#   test-md-tpa   kernels_md_tpa_test
#   bench-1d      kernels_1d_bench, every op (read flush)
#   bench-act     kernels_1d_bench --op act with the write flush (what opbench's timer does)
#   bench-md      kernels_md_tpa_bench --only md
#   bench-tpa     kernels_md_tpa_bench --only tpa
#   trace-tpa     kernels_md_tpa_trace --only tpa --trace: timelines of the bn variants
#   bench-small   kernels_1d_bench --small with the write flush (the harness's): small calls
#   test-resident kernels_1d_test's tunings of the resident and l2 strategies, the benchmark
#                 shape's slabs and the errors
#   test-seq      kernels_1d_test once, default tuning (softmax over n: every strategy and the
#                 resident strategy's tunings)
#   bench-seq     kernels_1d_bench --seq (softmax over n, every strategy, n = 256 .. 32768), read
#                 flush, then the write flush with samples queued back to back (the harness's)
#   ncu-tpa       Nsight Compute sections of the tpa kernels (one call per configuration)
#   ncu-seq       Nsight Compute sections of act's softmax over n kernels at n = 32768 (every
#                 strategy, default configurations)
#   memcheck      compute-sanitizer memcheck on small subsets of both tests
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build-kernels}
OUTDIR=${OUTDIR:-$B/logs}
mkdir -p "$OUTDIR"
if [ ! -x "$B/kernels_md_tpa_bench" ]; then tests/gpu/build_kernels.sh || exit 1; fi
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(test-1d test-md-tpa bench-1d bench-act bench-md bench-tpa)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,power.limit \
  --format=csv 2>&1 | tee "$OUTDIR/gpu.txt"
run() {  # name timeout command...
  local name=$1 limit=$2; shift 2
  local t0=$(date +%s)
  timeout "$limit" "$@" > "$OUTDIR/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $(( $(date +%s) - t0 )) s"
  return $rc
}
for step in "${steps[@]}"; do
  case "$step" in
    test-1d)  # every kernel with and without its L2 prefetch (both ship; the default picks per variant)
      for tu in prefetch=1 prefetch=0; do
        OPBENCH_TUNING_1D=$tu run "test-1d-${tu//=/}" 240 "$B/kernels_1d_test"
        grep -E "^\[kernels_1d_test\]|FAILED|PASSED" "$OUTDIR/test-1d-${tu//=/}.log" | head -20
      done
      # act's flat kernel in its other launch shapes (threads x units per thread) and load paths
      for tu in flat_units=2,flat_threads=512,plain_loads=1 flat_units=4,flat_threads=128,plain_loads=1 \
                plain_loads=0; do
        OPBENCH_TUNING_1D=$tu run "test-1d-${tu//[=,]/}" 120 "$B/kernels_1d_test" \
          --gtest_filter='Kernels1d.ActGrid:Kernels1d.ScalarPath:Kernels1d.Sanitize'
        grep -E "FAILED|PASSED" "$OUTDIR/test-1d-${tu//[=,]/}.log" | head -10
      done ;;
    test-md-tpa)
      run test-md-tpa 240 "$B/kernels_md_tpa_test"
      grep -E "FAILED|PASSED|Failure" "$OUTDIR/test-md-tpa.log" | head -20 ;;
    bench-1d)
      run bench-1d 150 "$B/kernels_1d_bench" "$OUTDIR/bench-1d.csv"
      sed -n '/^SUMMARY/,$p' "$OUTDIR/bench-1d.log" | head -60 ;;
    bench-act)
      OPBENCH_FLUSH=write run bench-act 150 "$B/kernels_1d_bench" "$OUTDIR/bench-act.csv" --op act
      grep -E "^(device|peak|empty|flush)" "$OUTDIR/bench-act.log" ;;
    bench-md)
      run bench-md 200 "$B/kernels_md_tpa_bench" "$OUTDIR/bench-md.csv" --only md
      grep -E "^(peak|md)" "$OUTDIR/bench-md.log" | cut -c1-130 ;;
    bench-tpa)
      run bench-tpa 200 "$B/kernels_md_tpa_bench" "$OUTDIR/bench-tpa.csv" --only tpa
      grep -E "^(peak|tpa)" "$OUTDIR/bench-tpa.log" | cut -c1-130 ;;
    trace-tpa)
      run trace-tpa 200 "$B/kernels_md_tpa_trace" "$OUTDIR/trace-tpa.csv" --only tpa --trace
      grep -E "^(peak|tpa|trace|launch)" "$OUTDIR/trace-tpa.log" | cut -c1-260 ;;
    test-resident)
      run test-resident 120 "$B/kernels_1d_test" \
        --gtest_filter='Kernels1d.ResidentTunings:Kernels1d.L2Tunings:Kernels1d.BenchShapeSlabs:Kernels1d.Errors'
      grep -E "^\[kernels_1d_test\]|FAILED|PASSED|Failure|rel " "$OUTDIR/test-resident.log" | head -40 ;;
    test-seq)
      run test-seq 300 "$B/kernels_1d_test"
      grep -E "^\[kernels_1d_test\]|FAILED|PASSED|Failure|rel " "$OUTDIR/test-seq.log" | head -40 ;;
    bench-seq)
      run bench-seq 150 "$B/kernels_1d_bench" "$OUTDIR/bench-seq.csv" --seq
      OPBENCH_FLUSH=write OPBENCH_SAMPLES=stream run bench-seq-write 150 "$B/kernels_1d_bench" \
        "$OUTDIR/bench-seq-write.csv" --seq
      for f in bench-seq bench-seq-write; do
        echo "-- $f"; grep -E "^(peak|empty)" "$OUTDIR/$f.log"; sed -n '/^SEQ SUMMARY/,$p' "$OUTDIR/$f.log"
      done ;;
    bench-small)
      OPBENCH_FLUSH=write run bench-small 200 "$B/kernels_1d_bench" "$OUTDIR/bench-small.csv" --small
      grep -E "^(peak|empty|flush)" "$OUTDIR/bench-small.log" ;;
    ncu-tpa)
      NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      if [ -z "$NCU" ]; then echo "ncu not found"; continue; fi
      run ncu-tpa 300 "$NCU" --clock-control none -k regex:tpa_ \
        --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis --section SchedulerStats \
        "$B/kernels_md_tpa_bench" --only tpa --quick --profile
      grep -E "tpa_|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|No Eligible|Active Warps Per Scheduler" \
        "$OUTDIR/ncu-tpa.log" | head -80 ;;
    ncu-seq)
      NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      if [ -z "$NCU" ]; then echo "ncu not found"; continue; fi
      run ncu-seq 240 "$NCU" --clock-control none -k regex:'seq_|rows_kernel' \
        --section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis --section SchedulerStats \
        "$B/kernels_1d_bench" --seq --profile --n 32768 --op act --configs default
      grep -E "seq_|rows_kernel|Duration|DRAM Throughput|L2 Hit Rate|Memory Throughput|Compute \(SM\)|Issued Warp|Warp Cycles Per Issued|Achieved Occupancy|Registers Per" \
        "$OUTDIR/ncu-seq.log" | cut -c1-150 | head -90 ;;
    memcheck)
      CS=$(command -v compute-sanitizer || true)
      if [ -z "$CS" ]; then echo "compute-sanitizer not found"; continue; fi
      run memcheck-1d 120 "$CS" --tool memcheck --print-limit 5 "$B/kernels_1d_test" \
        --gtest_filter='Kernels1d.Sanitize:Kernels1d.Errors'
      grep -E "ERROR SUMMARY|Invalid" "$OUTDIR/memcheck-1d.log" | head -5
      OPBENCH_TEST_QUICK=1 run memcheck-md-tpa 200 "$CS" --tool memcheck --print-limit 5 "$B/kernels_md_tpa_test" \
       
      grep -E "ERROR SUMMARY|Invalid" "$OUTDIR/memcheck-md-tpa.log" | head -5 ;;
    *) echo "unknown step $step" ;;
  esac
done
tar czf "$OUTDIR.tgz" -C "$(dirname "$OUTDIR")" "$(basename "$OUTDIR")"
echo "logs: $OUTDIR.tgz"
