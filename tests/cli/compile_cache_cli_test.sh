#!/usr/bin/env bash
# The compiled packages' cache through the command line, on the CPU: `compile --cache DIR`
# builds a table's package into DIR and says where its time went (export, AOTInductor and its
# C++ and Triton compiles, the check; <package>.stages.json); `--check` lists it as cached and
# succeeds, and lists a table it lacks as missing and fails (exit 1), building nothing; the key follows the op's Python source (a
# changed opbench_ops.py misses) and the cache's folder (another DIR misses); a package cut
# short is reported missing with a warning and built again whole; two processes building one
# package at once (two hosts on shared storage) leave one whole package and no partial file; a
# --cache that is a file is refused (exit 2, one line); two tpa_decode tables differing in batch
# alone share one package, and OPBENCH_AOTI_SHARE=0 asks for one per table.
# Usage: compile_cache_cli_test.sh OPBENCH PYTHON SOURCE_DIR
set -u
bin=$1 python=$2 src=$3
. "$(dirname "$0")/cli_lib.sh"
export OPBENCH_PYTHON=$python
unset OPBENCH_CACHE_DIR

printf '%s\n' 'op: act' 'x: {n: [8, 16]}' \
  'params: {batch: 1, head: 1, dim: 16, dtype: fp32, mode: fwd, metric: speed, act: relu}' \
  'providers: {torch_compile: toc}' >"$work/one.yaml"
sed 's/act: relu/act: silu/' "$work/one.yaml" >"$work/two.yaml"
cache=$work/cache

check check-empty 1 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --check
contains check-empty-missing "$work/out" "missing torch_compile"
contains check-empty-count "$work/out" "0 of 1 tables ready in $cache; 1 missing"
[ -z "$(find "$cache" -name '*.pt2' 2>/dev/null)" ] && echo "ok   check-builds-nothing" ||
  { echo "FAIL --check built a package"; fails=$((fails+1)); }

check compile 0 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --progress none
contains compile-built "$work/out" "built  torch_compile"
contains compile-stages "$work/out" "AOTInductor"
pycheck stages-file '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["export_s"] > 0 and s["inductor_s"] > 0 and s["check_s"] >= 0, s
assert s["cpp_s"] <= s["inductor_s"] and "metrics" in s, s
' "$(find "$cache" -name 'dyn-8-16-by8.stages.json' | head -1)"
pkg=$(find "$cache" -name 'dyn-8-16-by8.pt2' | head -1)
# the checks below need the package: without it the test fails here
[ -n "$pkg" ] || { echo "FAIL no package in $cache"; echo "compile_cache_cli_test: failed"; exit 1; }
echo "ok   package-in-cache"
# n = 8 and 16: exported as multiples of 8, which the package's metadata says.
pycheck package-step '
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
text = "".join(z.read(n).decode("utf-8", "replace") for n in z.namelist() if n.endswith(".json"))
assert "opbench_x_step" in text and "opbench_x_min" in text, [n for n in z.namelist() if n.endswith(".json")]
' "$pkg"
check check-cached 0 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --check
contains check-cached-line "$work/out" "cached  torch_compile"
check check-suite 1 "$bin" compile "$work/one.yaml" "$work/two.yaml" --device cpu --cache "$cache" --check
contains check-suite-count "$work/out" "1 of 2 tables ready"
check check-other-cache 1 "$bin" compile "$work/one.yaml" --device cpu --cache "$work/other" --check

# The op's Python source is in the key: a changed opbench_ops.py misses.
mkdir -p "$work/src/scripts" "$work/src/baselines/python"
cp "$src/scripts/export_aoti.py" "$work/src/scripts/"
cp "$src/baselines/python/"*.py "$work/src/baselines/python/"
check check-same-source 0 env OPBENCH_SOURCE_DIR="$work/src" "$bin" compile "$work/one.yaml" --device cpu \
  --cache "$cache" --check
printf '\n# changed\n' >>"$work/src/baselines/python/opbench_ops.py"
check check-changed-source 1 env OPBENCH_SOURCE_DIR="$work/src" "$bin" compile "$work/one.yaml" --device cpu \
  --cache "$cache" --check

# A package cut short: missing, with a warning; built again whole.
size=$(stat -c %s "$pkg")
truncate -s $((size / 2)) "$pkg"
check check-truncated 1 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --check
contains check-truncated-warning "$work/err" "$pkg is not a whole package (cut short?): it is built again"
check rebuild 0 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --progress none
contains rebuild-built "$work/out" "built  torch_compile"
[ "$(stat -c %s "$pkg")" -gt $((size / 2)) ] && echo "ok   rebuilt-whole" || { echo "FAIL still cut short"; fails=$((fails+1)); }
check check-rebuilt 0 "$bin" compile "$work/one.yaml" --device cpu --cache "$cache" --check

# Two writers of one package at once.
sed 's/act: relu/act: sigmoid/' "$work/one.yaml" >"$work/three.yaml"
"$bin" compile "$work/three.yaml" --device cpu --cache "$cache" --progress none >"$work/w1" 2>&1 &
w1=$!
"$bin" compile "$work/three.yaml" --device cpu --cache "$cache" --progress none >"$work/w2" 2>&1 &
w2=$!
wait "$w1"; c1=$?
wait "$w2"; c2=$?
[ "$c1" = 0 ] && [ "$c2" = 0 ] && echo "ok   two-writers-exit-0" || { echo "FAIL two writers: exit $c1, $c2"; tail -3 "$work/w1" "$work/w2"; fails=$((fails+1)); }
check two-writers-one-package 0 "$bin" compile "$work/three.yaml" --device cpu --cache "$cache" --check
[ -z "$(find "$cache" -name '*.tmp-*')" ] && echo "ok   two-writers-no-partial-file" ||
  { echo "FAIL partial files left: $(find "$cache" -name '*.tmp-*')"; fails=$((fails+1)); }
pycheck two-writers-package-loads '
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert any(n.endswith(".so") or n.endswith(".cpp") or "data/" in n for n in names), names[:5]
' "$(find "$cache" -name 'dyn-8-16-by8.pt2' -newer "$work/three.yaml" | head -1)"

# Two tpa_decode tables differing in batch alone: one package for both (batch a shared axis),
# named for both ranges; ready for both tables; one table's packages (OPBENCH_AOTI_SHARE=0)
# are other packages, not built yet; another value of the switch is refused in one line.
printf '%s\n' 'op: tpa_decode' 'x: {m: [3, 6]}' \
  'params: {batch: [2, 3], head: 2, rank: 2, dim: 4, dtype: fp32, mode: fwd, metric: speed}' \
  'providers: {torch_compile: toc}' >"$work/tpa.yaml"
check shared-compile 0 "$bin" compile "$work/tpa.yaml" --device cpu --cache "$cache" --progress none
[ "$(find "$cache" -name 'dyn-3-6.batch-2-3.pt2' | wc -l)" = 1 ] && [ -z "$(find "$cache" -name 'dyn-3-6.pt2' -path '*tpa_decode*')" ] &&
  echo "ok   shared-one-package" || { echo "FAIL shared packages: $(find "$cache" -path '*tpa_decode*' -name '*.pt2')"; fails=$((fails+1)); }
check shared-check 0 "$bin" compile "$work/tpa.yaml" --device cpu --cache "$cache" --check
contains shared-check-count "$work/out" "2 of 2 tables ready"
check shared-off-check 1 env OPBENCH_AOTI_SHARE=0 "$bin" compile "$work/tpa.yaml" --device cpu --cache "$cache" --check
contains shared-off-check-count "$work/out" "0 of 2 tables ready"
check shared-bad-switch 3 env OPBENCH_AOTI_SHARE=yes "$bin" compile "$work/tpa.yaml" --device cpu --cache "$cache" --progress none
cat "$work/out" "$work/err" >"$work/both"
contains shared-bad-switch-msg "$work/both" "OPBENCH_AOTI_SHARE must be 0 or 1, not 'yes'"

# A --cache that is a file: refused before anything runs.
touch "$work/file"
check cache-is-file 2 "$bin" compile "$work/one.yaml" --device cpu --cache "$work/file" --check
contains cache-is-file-msg "$work/err" "is not a folder"
[ "$(wc -l <"$work/err")" = 1 ] && echo "ok   cache-is-file-one-line" || { echo "FAIL not one line"; fails=$((fails+1)); }

echo "compile_cache_cli_test: $fails failed"
[ "$fails" = 0 ]
