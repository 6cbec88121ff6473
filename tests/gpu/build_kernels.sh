#!/usr/bin/env bash
# Builds the kernel tests and benchmarks with nvcc alone (no CMake, no LibTorch) into
# build-kernels/ (ignored by git), so they can be built here and carried to a GPU host:
#   kernels_1d_test, kernels_1d_bench         act, lrpe_cosine, lrpe_rotate
#   kernels_md_tpa_test, kernels_md_tpa_bench lrpe_cosine_md, tpa_decode
# Needs nvcc and GoogleTest (libgtest-dev). The kernels get CMake's flags (KFLAGS, default
# "--use_fast_math -lineinfo"), so the benchmarks time what opbench runs. Usage from the repo root:
#   tests/gpu/build_kernels.sh                                   # sm_90a (H100/H200)
#   ARCH="-gencode=arch=compute_80,code=sm_80" tests/gpu/build_kernels.sh
# ptxas's resource report of each kernel file: build-kernels/<file>.ptxas.log.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build-kernels}
ARCH=${ARCH:--gencode=arch=compute_90a,code=sm_90a}
KFLAGS=${KFLAGS:---use_fast_math -lineinfo}
F="-std=c++17 -O3 $ARCH -I. -Isrc"
mkdir -p "$B"
jobs=${JOBS:-$(nproc)}
build() {  # source object [flags...]
  local src=$1 obj=$2; shift 2
  [ "$obj" -nt "$src" ] && [ -z "$(find kernels tests/gpu -newer "$obj" -name '*.*h' -print -quit)" ] && return 0
  nvcc $F "$@" -c "$src" -o "$obj"
}
export -f build; export F
{
  for f in act lrpe_cosine lrpe_rotate lrpe_cosine_md tpa_decode; do
    echo "kernels/$f.cu $B/$f.o $KFLAGS -Xptxas -v"
  done
  for t in kernels_1d_test kernels_1d_bench kernels_md_tpa_test kernels_md_tpa_bench; do
    echo "tests/gpu/$t.cu $B/$t.o"
  done
} | xargs -P "$jobs" -L 1 bash -c 'build "$@" 2> "${2%.o}.log" || { cat "${2%.o}.log" >&2; exit 255; }' _ 2>&1 |
  sed 's/^/  /' || { echo "build failed" >&2; exit 1; }
for o in "$B"/{act,lrpe_cosine,lrpe_rotate,lrpe_cosine_md,tpa_decode}.o; do
  [ -f "${o%.o}.log" ] && cp "${o%.o}.log" "${o%.o}.ptxas.log"
done
K1="$B/act.o $B/lrpe_cosine.o $B/lrpe_rotate.o"
K2="$B/lrpe_cosine_md.o $B/tpa_decode.o"
nvcc $ARCH "$B/kernels_1d_test.o" $K1 -o "$B/kernels_1d_test" -lgtest -lgtest_main -lpthread
nvcc $ARCH "$B/kernels_1d_bench.o" $K1 -o "$B/kernels_1d_bench"
nvcc $ARCH "$B/kernels_md_tpa_test.o" $K2 -o "$B/kernels_md_tpa_test" -lgtest -lgtest_main -lpthread
nvcc $ARCH "$B/kernels_md_tpa_bench.o" $K2 -o "$B/kernels_md_tpa_bench"
echo "built $B/kernels_{1d,md_tpa}_{test,bench}"
