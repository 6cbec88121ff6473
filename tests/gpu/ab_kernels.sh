#!/usr/bin/env bash
# A kernel change against its base in one run on one GPU: the kernels and benchmarks of two
# revisions built side by side (tests/gpu/build_kernels.sh, no CMake, no LibTorch), one benchmark
# run on each in turn for every round (base first), and the rounds compared row by row
# (tests/gpu/ab_table.py: medians, spread, faster / slower / same).
#   tests/gpu/ab_kernels.sh BASE [--head REV] [--rounds N] [--out DIR] -- BENCH [ARGS...]
#   tests/gpu/ab_kernels.sh HEAD -- kernels_1d_bench --seq --configs default
#   tests/gpu/ab_kernels.sh 12ac517 --rounds 3 -- kernels_md_tpa_bench --only tpa --quick
# BASE, REV: git revisions, built from `git archive`; without --head the head is the working tree
# as it is (uncommitted changes included). BENCH: a benchmark's name (tests/gpu/BENCH.cu); the
# script gives it its CSV path as the first argument, ARGS follow. Builds go to $AB_DIR (default
# build-kernels-ab/): COMMIT/ (kept and reused; one build when both sides are one commit), the
# working tree's to tree/ (rebuilt as build_kernels.sh decides). $JOBS compilations at once per
# build (default half the CPUs). Writes DIR (default $AB_DIR/run) base1.csv, head1.csv, ... with
# each run's log beside it, and ab.md (the table, also printed).
# Exit 0; 1 when a build or a benchmark run fails; 2 on bad input (an unknown revision or
# benchmark, a bad option).
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
die() { echo "ab_kernels: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: ab_kernels.sh BASE [--head REV] [--rounds N] [--out DIR] -- BENCH [ARGS...]"
base=$1; shift
head="" rounds=2 out=""
while [ $# -gt 0 ] && [ "$1" != -- ]; do
  case $1 in
    --head) head=${2:-}; shift 2 || die "--head takes a revision" ;;
    --rounds) rounds=${2:-}; shift 2 || die "--rounds takes a number" ;;
    --out) out=${2:-}; shift 2 || die "--out takes a folder" ;;
    *) die "unknown option '$1'" ;;
  esac
done
[ "${1:-}" = -- ] && [ $# -ge 2 ] || die "no benchmark: give -- BENCH [ARGS...]"
shift
bench=$1; shift
[ -f "tests/gpu/$bench.cu" ] && [[ $bench == *_bench ]] || die "'$bench' is no tests/gpu/*_bench.cu"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || die "--rounds '$rounds' is not a positive number"
commit_of() { git rev-parse --verify -q "$1^{commit}" || die "'$1' is no git revision"; }
base_c=$(commit_of "$base") || exit 2
[ -n "$head" ] && { head_c=$(commit_of "$head") || exit 2; }
AB_DIR=$(realpath -m "${AB_DIR:-build-kernels-ab}")
out=$(realpath -m "${out:-$AB_DIR/run}")
jobs=${JOBS:-$(( ($(nproc) + 1) / 2 ))}
mkdir -p "$AB_DIR" "$out" && rm -f "$out"/base*.csv "$out"/head*.csv "$out"/ab.md

# A commit's build folder (one for both sides when they are one commit), or the working tree's.
dir_of() { if [ -n "$1" ]; then echo "$AB_DIR/$1"; else echo "$AB_DIR/tree"; fi; }
bdir=$(dir_of "$base_c") hdir=$(dir_of "${head_c:-}")
# build SIDE COMMIT|"" DIR: the side's kernels and benchmarks (a commit's from `git archive`)
build() {
  local side=$1 commit=$2 dir=$3 src=$root
  if [ -n "$commit" ]; then
    src=$AB_DIR/src-$commit
    [ -d "$src" ] || { rm -rf "$src.tmp" && mkdir -p "$src.tmp" && git archive "$commit" | tar -x -C "$src.tmp" &&
                       mv "$src.tmp" "$src"; } || { echo "ab_kernels: cannot extract $commit" >&2; return 1; }
  fi
  (cd "$src" && BUILD_DIR=$dir JOBS=$jobs bash tests/gpu/build_kernels.sh > "$dir.log" 2>&1) ||
    { echo "ab_kernels: the $side build failed (its log: $dir.log)" >&2; tail -5 "$dir.log" >&2; return 1; }
}
pids=()
build base "$base_c" "$bdir" & pids+=($!)
[ "$hdir" != "$bdir" ] && { build head "${head_c:-}" "$hdir" & pids+=($!); }
for p in "${pids[@]}"; do wait "$p" || exit 1; done
echo "ab_kernels: base ${base_c:0:7} in $bdir, head ${head_c:-working tree} in $hdir" >&2
for r in $(seq 1 "$rounds"); do
  for side in base head; do
    dir=$bdir; [ $side = head ] && dir=$hdir
    "$dir/$bench" "$out/$side$r.csv" "$@" > "$out/$side$r.log" 2>&1 ||
      { echo "ab_kernels: $bench failed on the $side, round $r (its log: $out/$side$r.log)" >&2; exit 1; }
  done
done
python3 tests/gpu/ab_table.py "$out" > "$out/ab.md" || exit 1
cat "$out/ab.md"
