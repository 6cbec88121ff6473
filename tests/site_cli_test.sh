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

echo "site_cli_test: $fails failed"
[ "$fails" = 0 ]
