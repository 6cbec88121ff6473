#!/usr/bin/env bash
# Builds the kernel tests and benchmarks with nvcc alone (no CMake, no LibTorch) into
# build-kernels/ (ignored by git), so they can be built here and carried to a GPU host:
#   kernels_1d_test, kernels_1d_bench         act, lrpe_cosine, lrpe_rotate
#   kernels_md_tpa_test, kernels_md_tpa_bench lrpe_cosine_md, tpa_decode
#   kernels_md_tpa_trace                      the tpa bench with timeline stamps (--trace)
#   episodes_bench                            how a short call's time moves between episodes
# Needs nvcc and GoogleTest (libgtest-dev). The kernels get CMake's flags (KFLAGS, default
# "--use_fast_math -lineinfo"), so the benchmarks time what opbench runs. Objects newer than
# their source and every kernel header are kept. Usage from the repo root:
#   tests/gpu/build_kernels.sh                                   # sm_90a (H100/H200)
#   ARCH="-gencode=arch=compute_80,code=sm_80" tests/gpu/build_kernels.sh
# Each object's compiler output, ptxas's resource report for the kernels: build-kernels/<name>.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build-kernels}
ARCH=${ARCH:--gencode=arch=compute_90a,code=sm_90a}
KFLAGS=${KFLAGS:---use_fast_math -lineinfo}
F="-std=c++17 -O3 $ARCH -I. -Isrc"
jobs=${JOBS:-$(nproc)}
mkdir -p "$B"

compile() {  # source object [flags...]
  local src=$1 obj=$2; shift 2
  if [ "$obj" -nt "$src" ] && [ -z "$(find kernels src/measure tests/gpu -newer "$obj" \( -name '*.h' -o -name '*.cuh' \) -print -quit)" ]; then
    return 0
  fi
  nvcc $F "$@" -c "$src" -o "$obj" 2> "${obj%.o}.log" || { cat "${obj%.o}.log" >&2; return 1; }
}

pids=() fail=0
start() {  # at most $jobs compilations at a time
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || fail=1
    pids=("${pids[@]:1}")
  fi
  compile "$@" & pids+=($!)
}
for f in act lrpe_cosine lrpe_rotate lrpe_cosine_md tpa_decode; do
  start "kernels/$f.cu" "$B/$f.o" $KFLAGS -Xptxas -v
done
start src/measure/l2_flush.cu "$B/l2_flush.o" $KFLAGS -Xptxas -v
for t in kernels_1d_test kernels_1d_bench kernels_md_tpa_test kernels_md_tpa_bench episodes_bench; do
  start "tests/gpu/$t.cu" "$B/$t.o"
done
# tpa_decode with its timeline stamps (kernels_md_tpa_bench --trace)
start kernels/tpa_decode.cu "$B/tpa_decode_trace.o" $KFLAGS -DOPBENCH_TPA_TRACE
start tests/gpu/kernels_md_tpa_bench.cu "$B/kernels_md_tpa_bench_trace.o" -DOPBENCH_TPA_TRACE
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "build failed" >&2; exit 1; }

K1="$B/act.o $B/lrpe_cosine.o $B/lrpe_rotate.o $B/l2_flush.o"
K2="$B/lrpe_cosine_md.o $B/tpa_decode.o $B/l2_flush.o"
nvcc $ARCH "$B/kernels_1d_test.o" $K1 -o "$B/kernels_1d_test" -lgtest -lgtest_main -lpthread
nvcc $ARCH "$B/kernels_1d_bench.o" $K1 -o "$B/kernels_1d_bench"
nvcc $ARCH "$B/episodes_bench.o" $K1 -o "$B/episodes_bench"
nvcc $ARCH "$B/kernels_md_tpa_test.o" $K2 -o "$B/kernels_md_tpa_test" -lgtest -lgtest_main -lpthread
nvcc $ARCH "$B/kernels_md_tpa_bench.o" $K2 -o "$B/kernels_md_tpa_bench"
nvcc $ARCH "$B/kernels_md_tpa_bench_trace.o" "$B/lrpe_cosine_md.o" "$B/tpa_decode_trace.o" "$B/l2_flush.o" -o "$B/kernels_md_tpa_trace"
echo "built $B/kernels_{1d,md_tpa}_{test,bench}, $B/kernels_md_tpa_trace, $B/episodes_bench"
