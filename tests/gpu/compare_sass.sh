#!/usr/bin/env bash
# Compares the machine code (SASS) of every kernel in two builds, kernel by kernel: proof that a
# change to kernels/ (a move of code between files, a rename, a refactor) changes no kernel.
# Each side is a list of .o files, .a archives or folders (every .o under it but *_trace.o):
#   tests/gpu/compare_sass.sh OLD... -- NEW...
#   tests/gpu/compare_sass.sh old-build/obj -- build-kernels/obj
#   tests/gpu/compare_sass.sh old-build/tpa_decode_trace.o -- build-kernels/obj/kernels/tpa_decode/kernels_trace.o
# A kernel is named by its demangled signature with namespace qualifiers dropped, so code that
# moved to another namespace or file is matched; instruction addresses are dropped, the
# instructions and their encodings compared. Prints one line per kernel (same, DIFFERENT,
# only-old, only-new) with its resources (registers, stack, spills, shared and constant memory)
# on both sides, then a summary. A kernel that several objects hold (a template every op
# instantiates) matches when its copies do. Exit 0 when every kernel matches, 1 otherwise, 2 on bad input.
# Needs cuobjdump (CUDA toolkit, or the one in the Python environment's triton package) and
# c++filt (binutils).
set -euo pipefail
cd "$(dirname "$0")/../.."
CUOBJDUMP=${CUOBJDUMP:-$(command -v cuobjdump ||
  ls .venv/lib/python3*/site-packages/triton/backends/nvidia/bin/cuobjdump 2>/dev/null | head -1 || true)}
[ -x "$CUOBJDUMP" ] || { echo "compare_sass: cuobjdump not found (set CUOBJDUMP)" >&2; exit 2; }

old=() new=() side=old
for a in "$@"; do
  if [ "$a" = -- ]; then side=new; continue; fi
  if [ -d "$a" ]; then
    mapfile -t found < <(find "$a" -name '*.o' ! -name '*_trace.o' | sort)
  elif [ -f "$a" ]; then
    found=("$a")
  else
    echo "compare_sass: $a: no such file or folder" >&2; exit 2
  fi
  if [ "$side" = old ]; then old+=("${found[@]}"); else new+=("${found[@]}"); fi
done
if [ ${#old[@]} -eq 0 ] || [ ${#new[@]} -eq 0 ]; then
  echo "usage: tests/gpu/compare_sass.sh OLD... -- NEW... (.o, .a or folders)" >&2; exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Demangled names without namespace qualifiers ("opbench::kernels::tpa::", "(anonymous
# namespace)::").
unqualify() { c++filt | sed -E 's/\(anonymous namespace\):://g; s/\b[A-Za-z_][A-Za-z_0-9]*:://g'; }

split_side() {  # side files...: one file of normalized SASS per kernel under $work/side/
  local s=$1; shift
  mkdir -p "$work/$s"
  for f in "$@"; do "$CUOBJDUMP" -sass "$f" 2> "$work/err" || { cat "$work/err" >&2; exit 2; }; done |
    unqualify | awk -v dir="$work/$s" '
    /^[ \t]*Function : / { if (file != "") close(file)
                           name = $0; sub(/^[ \t]*Function : /, "", name); n++
                           file = dir "/k" n; print name > (file ".name"); close(file ".name")
                           next }
    /Fatbin [a-z]+ code:/ { name = ""; next }  # the next object or section: not a kernel
    name == "" { next }
    /^[ \t]*\.section|^[ \t]*\.headerflags|code for sm_|^[ \t]*-----|member / { next }
    { line = $0; gsub(/\/\*[0-9a-f][0-9a-f][0-9a-f][0-9a-f]+\*\//, "", line)
      gsub(/[ \t]+/, " ", line)
      if (line != " " && line != "") print line >> file }'
  for f in "$@"; do "$CUOBJDUMP" -res-usage "$f" 2> "$work/err" || { cat "$work/err" >&2; exit 2; }; done |
    unqualify | awk '
    /^ *Function / { name = $0; sub(/^ *Function /, "", name); sub(/:$/, "", name); next }
    /REG:/ && name != "" { sub(/^ +/, ""); print name "\t" $0; name = "" }' > "$work/$s.res"
}
split_side old "${old[@]}"
split_side new "${new[@]}"

index() {  # side -> "name<TAB>checksum of its SASS" lines
  local f
  for f in "$work/$1"/k*.name; do
    [ -e "$f" ] || continue
    printf '%s\t%s\n' "$(cat "$f")" "$(md5sum < "${f%.name}" | cut -c1-32)"
  done
}
index old | sort > "$work/old.idx"
index new | sort > "$work/new.idx"
awk -F'\t' '
  # A kernel built in several objects (a template every op instantiates) is compared as the
  # sorted list of its copies.
  FILENAME ~ /old.idx$/ { os[$1] = os[$1] " " $2; names[$1]; next }
  FILENAME ~ /new.idx$/ { ns[$1] = ns[$1] " " $2; names[$1]; next }
  FILENAME ~ /old.res$/ { or_[$1] = $2; next }
  FILENAME ~ /new.res$/ { nr[$1] = $2; next }
  END {
    k = 0
    for (x in names) sorted[++k] = x
    for (i = 2; i <= k; i++) {  # insertion sort: stable output without gawk extensions
      v = sorted[i]; j = i - 1
      while (j > 0 && sorted[j] > v) { sorted[j + 1] = sorted[j]; j-- }
      sorted[j + 1] = v
    }
    for (i = 1; i <= k; i++) {
      x = sorted[i]
      if (!(x in os)) { st = "only-new"; only++ }
      else if (!(x in ns)) { st = "only-old"; only++ }
      else if (os[x] == ns[x]) { st = "same"; same++ }
      else { st = "DIFFERENT"; diff++ }
      r1 = or_[x]; r2 = nr[x]
      gsub(/ *TEXTURE:[0-9]+ SURFACE:[0-9]+ SAMPLER:[0-9]+/, "", r1)
      gsub(/ *TEXTURE:[0-9]+ SURFACE:[0-9]+ SAMPLER:[0-9]+/, "", r2)
      printf "%s  %s\n    old: %s\n    new: %s\n", st, x, r1, r2
    }
    printf "kernels: %d same, %d different, %d on one side only\n", same, diff, only
    exit (diff + only > 0)
  }' "$work/old.idx" "$work/new.idx" "$work/old.res" "$work/new.res"
