#!/usr/bin/env bash
# Builds the kernel tests and benchmarks with nvcc alone (no CMake, no LibTorch) into
# build-kernels/ (ignored by git), so they can be built here and carried to a GPU host: every
# tests/gpu/*_test.cu and *_bench.cu, each linked with every kernels/*.cu (and the L2 read
# flush), plus kernels_md_tpa_trace, the tpa bench with timeline stamps (--trace).
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
kobjs=()  # every kernel family and the harness's CUDA code (the L2 read flush)
for src in kernels/*.cu src/measure/*.cu; do
  o="$B/$(basename "${src%.cu}").o"
  start "$src" "$o" $KFLAGS -Xptxas -v
  kobjs+=("$o")
done
bins=()  # every GPU test and benchmark
for src in tests/gpu/*_test.cu tests/gpu/*_bench.cu; do
  t=$(basename "${src%.cu}")
  start "$src" "$B/$t.o"
  bins+=("$t")
done
# tpa_decode with its timeline stamps (kernels_md_tpa_bench --trace)
start kernels/tpa_decode.cu "$B/tpa_decode_trace.o" $KFLAGS -DOPBENCH_TPA_TRACE
start tests/gpu/kernels_md_tpa_bench.cu "$B/kernels_md_tpa_bench_trace.o" -DOPBENCH_TPA_TRACE
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "build failed" >&2; exit 1; }

for t in "${bins[@]}"; do
  libs=()
  [[ $t == *_test ]] && libs=(-lgtest -lgtest_main -lpthread)
  nvcc $ARCH "$B/$t.o" "${kobjs[@]}" -o "$B/$t" "${libs[@]}"
done
traced=("${kobjs[@]/#$B\/tpa_decode.o/$B/tpa_decode_trace.o}")
nvcc $ARCH "$B/kernels_md_tpa_bench_trace.o" "${traced[@]}" -o "$B/kernels_md_tpa_trace"
echo "built ${bins[*]/#/$B/} $B/kernels_md_tpa_trace"
