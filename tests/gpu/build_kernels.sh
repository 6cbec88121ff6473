#!/usr/bin/env bash
# Builds the kernel tests and benchmarks with nvcc alone (no CMake, no LibTorch) into
# build-kernels/ (ignored by git), so they can be built here and carried to a GPU host:
#   every kernels/**/*.cu and src/measure/*.cu (the L2 read flush)  an object each, archived into libopbench_kernels.a
#   every tests/gpu/*_test.cu        a GoogleTest binary of the same name
#   every tests/gpu/*_bench.cu       a benchmark binary of the same name
#   a bench that reads -DOPBENCH_TPA_TRACE (kernels_md_tpa_bench) also as <name less _bench>_trace
#                                    (kernels_md_tpa_trace: the tpa bench with timeline stamps,
#                                    --trace), linked against the kernels that read it built
#                                    with it (libopbench_kernels_trace.a)
# Sources are found, not listed: an op's new kernels and tests need no edit here.
# Needs nvcc and GoogleTest (libgtest-dev). The kernels get CMake's flags (KFLAGS, default
# "--use_fast_math -lineinfo"), so the benchmarks time what opbench runs. Objects newer than
# their source and every kernel header are kept. Usage from the repo root:
#   tests/gpu/build_kernels.sh                                   # sm_90a (H100/H200)
#   ARCH="-gencode=arch=compute_80,code=sm_80" tests/gpu/build_kernels.sh
#   JOBS=2 tests/gpu/build_kernels.sh                            # at most 2 compilations at once
# Each object's compiler output, ptxas's resource report for the kernels: build-kernels/obj/
# <source path>.log (kernels/tpa_decode/kernels.cu -> obj/kernels/tpa_decode/kernels.log).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD_DIR:-build-kernels}
ARCH=${ARCH:--gencode=arch=compute_90a,code=sm_90a}
KFLAGS=${KFLAGS:---use_fast_math -lineinfo}
TRACE=OPBENCH_TPA_TRACE
F="-std=c++17 -O3 $ARCH -I. -Isrc"
jobs=${JOBS:-$(nproc)}
mkdir -p "$B/obj"

mapfile -t kernel_srcs < <(find kernels src/measure -name '*.cu' | sort)  # every kernel, and the harness's L2 read flush
mapfile -t test_srcs < <(find tests/gpu -maxdepth 1 \( -name '*_test.cu' -o -name '*_bench.cu' \) | sort)
# Kernel sources the trace define changes: those that name it, or include a header that does.
reads_trace() {  # source: true when it or a kernels/ header it includes (transitively) names $TRACE
  local seen=" " todo=("$1") f inc
  while [ ${#todo[@]} -gt 0 ]; do
    f=${todo[0]}; todo=("${todo[@]:1}")
    case "$seen" in *" $f "*) continue ;; esac
    seen="$seen$f "
    grep -q "$TRACE" "$f" && return 0
    for inc in $(sed -n 's/^#include "\(kernels\/[^"]*\)"/\1/p' "$f"); do
      [ -f "$inc" ] && todo+=("$inc")
    done
  done
  return 1
}

obj_of() {  # source [suffix] -> its object under $B/obj
  local o="$B/obj/${1%.cu}${2:-}.o"
  mkdir -p "$(dirname "$o")"
  echo "$o"
}

compile() {  # source object [flags...]
  local src=$1 obj=$2; shift 2
  if [ "$obj" -nt "$src" ] && [ -z "$(find kernels tests/gpu -newer "$obj" \( -name '*.h' -o -name '*.cuh' \) -print -quit)" ]; then
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

kernel_objs=() trace_objs=()
for src in "${kernel_srcs[@]}"; do
  obj=$(obj_of "$src")
  start "$src" "$obj" $KFLAGS -Xptxas -v
  kernel_objs+=("$obj")
  if reads_trace "$src"; then
    tobj=$(obj_of "$src" _trace)
    start "$src" "$tobj" $KFLAGS -D$TRACE
    trace_objs+=("$tobj")
  else
    trace_objs+=("$obj")
  fi
done
traced=()  # benches and tests built a second time with the trace define
for src in "${test_srcs[@]}"; do
  start "$src" "$(obj_of "$src")"
  if grep -q "$TRACE" "$src"; then
    start "$src" "$(obj_of "$src" _trace)" -D$TRACE
    traced+=("$src")
  fi
done
for p in "${pids[@]}"; do wait "$p" || fail=1; done
[ "$fail" = 0 ] || { echo "build failed" >&2; exit 1; }

lib="$B/libopbench_kernels.a" tlib="$B/libopbench_kernels_trace.a"
rm -f "$lib" "$tlib"
ar rcs "$lib" "${kernel_objs[@]}"
ar rcs "$tlib" "${trace_objs[@]}"
built=()
link() {  # object library binary: a *_test binary gets GoogleTest's main
  local libs=()
  [[ $(basename "$3") == *_test ]] && libs=(-lgtest -lgtest_main -lpthread)
  nvcc $ARCH "$1" "$2" -o "$3" "${libs[@]}"
  built+=("$3")
}
for src in "${test_srcs[@]}"; do
  name=$(basename "${src%.cu}")
  link "$(obj_of "$src")" "$lib" "$B/$name"
done
for src in "${traced[@]}"; do
  name=$(basename "${src%.cu}")
  link "$(obj_of "$src" _trace)" "$tlib" "$B/${name%_bench}_trace"
done
echo "built ${built[*]}"
