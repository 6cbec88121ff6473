#!/usr/bin/env bash
# Builds the 1d kernels' test and benchmark with nvcc alone (no CMake, no LibTorch) into
# build-k1d/ (ignored by git). Needs nvcc and GoogleTest (libgtest-dev). Usage from the repo root:
#   tests/gpu/build_kernels_1d.sh            # sm_90a (H100/H200)
#   ARCH="-gencode=arch=compute_80,code=sm_80" tests/gpu/build_kernels_1d.sh
#   KFLAGS="--use_fast_math -lineinfo" tests/gpu/build_kernels_1d.sh   # the kernel flags of CMake
# The figures in notes/perf-1d.md were measured with the default (no KFLAGS).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build-k1d}
ARCH=${ARCH:--gencode=arch=compute_90a,code=sm_90a}
F="-std=c++17 -O3 $ARCH -I. -Isrc"
mkdir -p "$B"
pids=()
for f in act lrpe_cosine lrpe_rotate; do nvcc $F ${KFLAGS:-} -Xptxas -v -c kernels/$f.cu -o "$B/$f.o" 2> "$B/$f.ptxas.log" & pids+=($!); done
nvcc $F -c tests/gpu/kernels_1d_test.cu -o "$B/kernels_1d_test.o" & pids+=($!)
nvcc $F -c tests/gpu/kernels_1d_bench.cu -o "$B/kernels_1d_bench.o" & pids+=($!)
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
if [ "$fail" != 0 ]; then grep -h error "$B"/*.log >&2 || true; echo "build failed" >&2; exit 1; fi
K="$B/act.o $B/lrpe_cosine.o $B/lrpe_rotate.o"
nvcc $ARCH "$B/kernels_1d_test.o" $K -o "$B/kernels_1d_test" -lgtest -lgtest_main -lpthread
nvcc $ARCH "$B/kernels_1d_bench.o" $K -o "$B/kernels_1d_bench"
echo "built $B/kernels_1d_test $B/kernels_1d_bench"
