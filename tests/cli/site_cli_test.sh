#!/usr/bin/env bash
# opbench site through the command line: from a database, a JSON export and a diff document; a
# site written again over itself; and the folders it refuses (a database, one holding an input,
# one it did not write), each with exit 2 and nothing written or lost; scripts/ci-report --site.
# Usage: site_cli_test.sh OPBENCH SITE_FIXTURE_DB SOURCE_DIR
set -u
bin=$1; fixture=$2; src=$3
. "$(dirname "$0")/cli_lib.sh"
db=$work/f.db
"$fixture" "$db" >/dev/null || { echo "FAIL fixture"; exit 1; }

# from a database, then again over the site it wrote
check site 0 "$bin" site --db "$db" --out "$work/site"
contains site-prints-index "$work/out" "$work/site/index.html"
contains site-says "$work/err" "runs, 0 documents) in $work/site"
check site-again 0 "$bin" site --db "$db" --out "$work/site"
[ -f "$work/site/tables/act-speed-fwd-t0-bf16.md" ] && echo "ok   site-markdown" || { echo "FAIL site-markdown"; fails=$((fails+1)); }
ls -d "$work"/site.* >/dev/null 2>&1 && { echo "FAIL site-left-temporaries"; fails=$((fails+1)); } || echo "ok   site-no-temporaries"

# from a JSON export and a diff document
check export 0 "$bin" export --all --db "$db" --out "$work/runs.json"
check diff-json 0 "$bin" diff 2 6 --db "$db" --format json --out "$work/pr-diff.json"
check versus-json 0 "$bin" versus 6 --provider cuda --against torch --db "$db" --format json --out "$work/pr-versus.json"
check site-json 0 "$bin" site --json "$work/runs.json" --json "$work/pr-diff.json" --json "$work/pr-versus.json" --out "$work/site2"
contains site-json-docs "$work/err" "(6 runs, 2 documents)"
[ -f "$work/site2/diffs/pr-diff.html" ] && [ -f "$work/site2/diffs/pr-versus.html" ] && echo "ok   site-doc-pages" ||
  { echo "FAIL site-doc-pages"; ls "$work/site2/diffs"; fails=$((fails+1)); }

# refused: exit 2, one line, nothing written or lost
cp "$db" "$work/keep.db"
check out-is-db 2 "$bin" site --db "$db" --out "$db"
contains out-is-db-msg "$work/err" "is the database"
cmp -s "$db" "$work/keep.db" && echo "ok   out-is-db-kept" || { echo "FAIL out-is-db changed the database"; fails=$((fails+1)); }
check out-in-db 2 "$bin" site --db "$db" --out "$db/site"
contains out-in-db-msg "$work/err" "lies inside $db"
mkdir -p "$work/holder" && cp "$db" "$work/holder/in.db"
check out-holds-db 2 "$bin" site --db "$work/holder/in.db" --out "$work/holder"
contains out-holds-db-msg "$work/err" "which the site is built from and would replace"
[ -f "$work/holder/in.db" ] && echo "ok   out-holds-db-kept" || { echo "FAIL out-holds-db lost the database"; fails=$((fails+1)); }
check out-is-json 2 "$bin" site --json "$work/runs.json" --out "$work/runs.json"
mkdir -p "$work/mine" && echo notes >"$work/mine/notes.txt"
check out-foreign 2 "$bin" site --db "$db" --out "$work/mine"
contains out-foreign-msg "$work/err" "holds files and no site opbench wrote"
[ "$(ls "$work/mine")" = notes.txt ] && echo "ok   out-foreign-untouched" || { echo "FAIL out-foreign touched"; fails=$((fails+1)); }
check no-db 2 "$bin" site --db "$work/none.db" --out "$work/s3"
contains no-db-msg "$work/err" "no such database"
echo '{"format": "opbench-runs", "version": 99, "runs": []}' >"$work/bad.json"
check bad-json 2 "$bin" site --json "$work/bad.json" --out "$work/s3"
echo '{"base": {}, "head": {}, "summary": []}' >"$work/doc.json"
check bad-doc 2 "$bin" site --json "$work/doc.json" --out "$work/s3"
contains bad-doc-msg "$work/err" "doc.json: points: missing or not a list"
[ -e "$work/s3" ] && { echo "FAIL refused sites left $work/s3"; fails=$((fails+1)); } || echo "ok   refused-nothing-written"
check no-out 2 "$bin" site --db "$db"
OPBENCH_CHARTJS=$work/none.js "$bin" site --db "$db" --out "$work/s4" >"$work/out" 2>"$work/err"
[ $? = 3 ] && echo "ok   no-chart-library-exit-3" || { echo "FAIL no-chart-library"; fails=$((fails+1)); }
contains no-chart-library-msg "$work/err" "install Debian's libjs-chart.js"
[ -e "$work/s4" ] && { echo "FAIL no-chart-library left $work/s4"; fails=$((fails+1)); } || echo "ok   no-chart-library-nothing-written"

# scripts/ci-report --site: the pull request's site with its diff as a page
cat >"$work/tiny.yaml" <<'EOF'
op: act
x: {n: [256]}
params: {batch: 1, head: 1, dim: 8, dtype: fp32, metric: memory, mode: fwd, act: relu}
timing: {warmup_ms: 1, rep_ms: 2, rounds: 1}
EOF
OPBENCH=$bin "$src/scripts/ci-report" "$work/tiny.yaml" --db "$work/ci.db" --label base --providers torch --device cpu \
  --out "$work/base.md" >/dev/null 2>&1
check ci-report-site 0 env OPBENCH="$bin" "$src/scripts/ci-report" "$work/tiny.yaml" --db "$work/ci.db" --label head \
  --baseline label:base --providers torch --device cpu --out "$work/sum.md" --site "$work/ci-site"
[ -f "$work/ci-site/index.html" ] && ls "$work/ci-site/diffs" | grep -q "^pr-diff" && echo "ok   ci-report-site-pages" ||
  { echo "FAIL ci-report-site-pages"; ls -R "$work/ci-site" | head; fails=$((fails+1)); }

# --out through a link: the folder it names is written, the link stays
check site-real 0 "$bin" site --db "$db" --out "$work/real"
ln -s "$work/real" "$work/link"
rm "$work/real/index.html"
check site-link 0 "$bin" site --db "$db" --out "$work/link"
[ -L "$work/link" ] && [ -f "$work/real/index.html" ] && echo "ok   site-through-link" ||
  { echo "FAIL site-through-link"; ls -la "$work" | head; fails=$((fails+1)); }
# --out . in an empty folder, and in the site written there before
mkdir "$work/here"
(cd "$work/here" && "$bin" site --db "$db" --out . >/dev/null 2>"$work/err"); rc=$?
[ "$rc" = 0 ] && [ -f "$work/here/index.html" ] && echo "ok   site-out-dot" || { echo "FAIL site-out-dot: exit $rc"; cat "$work/err"; fails=$((fails+1)); }
(cd "$work/here" && "$bin" site --db "$db" --out . >/dev/null 2>"$work/err"); rc=$?
[ "$rc" = 0 ] && [ -f "$work/here/index.html" ] && echo "ok   site-out-dot-again" || { echo "FAIL site-out-dot-again: exit $rc"; fails=$((fails+1)); }
# a failed write to standard output is a failure (exit 3)
check site-stdout-full 3 sh -c '"$0" site --db "$1" --out "$2" >/dev/full' "$bin" "$db" "$work/full"
contains site-stdout-full-msg "$work/err" "cannot write to standard output"
check site-stdout-closed 3 sh -c '"$0" site --db "$1" --out "$2" >&-' "$bin" "$db" "$work/closed"
check help-stdout-full 3 sh -c '"$0" --help >/dev/full' "$bin"
check help-stdout-ok 0 "$bin" --help
# SIGTERM and SIGHUP while the site is written: its temporary removed, exit 130
"$fixture" "$work/big.db" --commits 60 >/dev/null
for sig in TERM HUP; do
  rm -rf "$work/sig"
  "$bin" site --db "$work/big.db" --out "$work/sig" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 400); do ls -d "$work"/sig.new-* >/dev/null 2>&1 && break; sleep 0.01; done
  kill -$sig $pid; wait $pid; rc=$?
  if [ "$rc" = 130 ] && ! ls -d "$work"/sig.new-* >/dev/null 2>&1; then echo "ok   site-sig$sig"
  else echo "FAIL site-sig$sig: exit $rc"; ls -d "$work"/sig* 2>&1 | head -3; fails=$((fails+1)); fi
done
# a temporary a killed process left (its process gone) is removed by the next site
mkdir -p "$work/stale.new-4194301/assets"
check site-stale 0 "$bin" site --db "$db" --out "$work/stale"
[ ! -e "$work/stale.new-4194301" ] && echo "ok   site-stale-removed" || { echo "FAIL site-stale-removed"; fails=$((fails+1)); }
# export --out: its temporary the same
: >"$work/e.json.tmp4194301"
check export-stale 0 "$bin" export --all --db "$db" --out "$work/e.json"
[ ! -e "$work/e.json.tmp4194301" ] && echo "ok   export-stale-removed" || { echo "FAIL export-stale-removed"; fails=$((fails+1)); }
# export stopped while it waits to write (into a FIFO no one reads yet): exit 130
mkfifo "$work/fifo"
for sig in TERM HUP; do
  "$bin" export --all --db "$db" --out "$work/fifo" >/dev/null 2>&1 &
  pid=$!
  # once its signals are handled (blocked in its main thread: SIGHUP, SIGINT, SIGTERM)
  for _ in $(seq 400); do grep -q '^SigBlk:.*4003$' /proc/$pid/status 2>/dev/null && break; sleep 0.005; done
  sleep 0.3
  kill -$sig $pid; wait $pid; rc=$?
  [ "$rc" = 130 ] && echo "ok   export-sig$sig" || { echo "FAIL export-sig$sig: exit $rc"; fails=$((fails+1)); }
done
# a database at a path with a leading // (as "$ROOT/x" with ROOT=/ makes)
check double-slash-runs 0 "$bin" runs --db "/$db"
check double-slash-export 0 "$bin" export --all --db "/$db" --out "$work/ds.json"
# export writes what import reads: an empty database is refused
: >"$work/empty.db"
check export-empty 2 "$bin" export --all --db "$work/empty.db"
contains export-empty-msg "$work/err" "no run to export"

echo "site_cli_test: $fails failed"
[ "$fails" = 0 ]
