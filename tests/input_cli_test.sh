#!/usr/bin/env bash
# Hostile input through the command line: every case is a usage or input error (exit 2, one
# line) that writes nothing, or a damaged database refused (exit 3) -- never lost data, a
# crash or a silent wrong result.
# Usage: input_cli_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2
. "$(dirname "$0")/cli_lib.sh"

one_line() { # one_line NAME: the last command's stderr is one line
  if [ "$(wc -l < "$work/err")" = 1 ]; then echo "ok   $1"; else echo "FAIL $1: not one line"; sed 's/^/  | /' "$work/err" | head -5; fails=$((fails+1)); fi
}
absent() { # absent NAME FILE
  if [ -e "$2" ]; then echo "FAIL $1: $2 was created"; fails=$((fails+1)); else echo "ok   $1"; fi
}
same() { # same NAME FILE SUM: the file's checksum is unchanged
  if [ "$(sha256sum < "$2")" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: $2 changed"; fails=$((fails+1)); fi
}

cat >"$work/tiny.yaml" <<'YAML'
op: tpa_decode
x: {m: [16]}
params: {batch: 1, head: 2, rank: 2, dim: 16, dtype: fp32, mode: fwd, metric: memory}
providers: {torch: to, torch_naive: ton}
YAML
db=$work/r.db
check setup-sweep 0 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --label base --no-report
check setup-sweep2 0 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --label head --no-report
sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
sum=$(sha256sum < "$db")

# --- --out naming the database (or its -wal / -shm, or another name of it) --------------------
check out-db-report 2 "$bin" report --db "$db" --out "$db"
contains out-db-report-msg "$work/err" "--out: $db: is the database"
one_line out-db-report-one-line
check out-db-wal 2 "$bin" report --db "$db" --out "$db-wal"
check out-db-shm 2 "$bin" report --db "$db" --out "$db-shm"
mkdir -p "$work/sub"
check out-db-dotdot 2 "$bin" report --db "$db" --out "$work/sub/../r.db"
ln -s "$db" "$work/link.db"
check out-db-link 2 "$bin" report --db "$db" --out "$work/link.db"
(cd "$work" && "$bin" report --db r.db --out ./r.db >/dev/null 2>&1); [ $? = 2 ] && echo "ok   out-db-relative" || { echo "FAIL out-db-relative"; fails=$((fails+1)); }
check out-db-diff 2 "$bin" diff label:base label:head --db "$db" --out "$db"
check out-db-versus 2 "$bin" versus latest --provider torch --against torch_naive --db "$db" --out "$db"
check out-db-sweep 2 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --out "$db"
check out-dir 2 "$bin" report --db "$db" --out "$work/sub"
check out-db-ci-report 2 "$src/scripts/ci-report" "$work/tiny.yaml" --opbench "$bin" --db "$db" --label x --out "$work/link.db"
contains out-db-ci-report-msg "$work/err" "is the database"
same out-db-untouched "$db" "$sum"
check runs-after-out 0 "$bin" runs --db "$db" --format json
pycheck runs-after-out-two 'import json,sys; assert len(json.load(open(sys.argv[1]))) == 2' "$work/out"

# --- --db "" ------------------------------------------------------------------------------------
check db-empty-sweep 2 "$bin" sweep "$work/tiny.yaml" --db "" --device cpu
contains db-empty-msg "$work/err" "--db"
one_line db-empty-one-line
check db-empty-report 2 "$bin" report --db ""
check db-empty-runs 2 "$bin" runs --db ""
check db-empty-merge 2 "$bin" merge "$db" --db ""
check db-empty-history 2 "$bin" history t --db ""
check db-dir 2 "$bin" sweep "$work/tiny.yaml" --db "$work/sub" --device cpu

# --- numbers: thresholds, run ids ---------------------------------------------------------------
check threshold-nan-diff 2 "$bin" diff label:base label:head --db "$db" --threshold nan
one_line threshold-nan-one-line
check threshold-inf-versus 2 "$bin" versus latest --provider torch --against torch_naive --db "$db" --threshold inf
check threshold-nan-history 2 "$bin" history tpa_decode-memory-fwd-batch1-head2-dim16-rank2-fp32 --db "$db" --threshold nan
check threshold-ok 0 "$bin" diff label:base label:head --db "$db" --threshold 2.5
check run-id-huge 2 "$bin" report --db "$db" --run 99999999999999999999
contains run-id-huge-msg "$work/err" "run 99999999999999999999: run id out of range"
check run-id-zero 2 "$bin" report --db "$db" --run 0
check resume-zero 2 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --resume 0
contains resume-zero-msg "$work/err" "run ids start at 1"
check resume-huge 2 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --resume 99999999999999999999
check runs-after-numbers 0 "$bin" runs --db "$db" --format json
pycheck runs-after-numbers-two 'import json,sys; assert len(json.load(open(sys.argv[1]))) == 2' "$work/out"

# --- input errors create no database --------------------------------------------------------------
printf 'not a database, just some text that is long enough to be a header.........\n' > "$work/junk.db"
check merge-junk 2 "$bin" merge "$work/junk.db" --db "$work/new1.db"
absent merge-junk-no-db "$work/new1.db"
check resume-new-path 2 "$bin" sweep "$work/tiny.yaml" --db "$work/new2.db" --device cpu --resume 5
contains resume-new-path-msg "$work/err" "no such database"
absent resume-new-path-no-db "$work/new2.db"
cat >"$work/dup.md" <<'MD'
## Notation

- to: torch
- t2: torch

# H100

```
t:
     n   to   t2
0  1.0  2.0  3.0
```
MD
check import-two-columns-one-provider 2 "$bin" import "$work/dup.md" --db "$work/new3.db"
contains import-two-columns-msg "$work/err" "columns 'to' and 't2' both stand for provider 'torch'"
absent import-two-columns-no-db "$work/new3.db"

# --- configs ---------------------------------------------------------------------------------------
mkdir -p "$work/cfg.yaml"
check config-dir 2 "$bin" sweep "$work/cfg.yaml" --db "$work/new4.db" --dry-run
contains config-dir-msg "$work/err" "is a directory"
printf 'op: lrpe_rotate\nx: {n: [16]}\nop: act\n' > "$work/dupkey.yaml"
check config-duplicate-key 2 "$bin" sweep "$work/dupkey.yaml" --dry-run
contains config-duplicate-key-msg "$work/err" "dupkey.yaml:3: op: duplicate key"
printf 'op: act\nx: {n: [16]}\ntiming: {rep_ms: .inf}\n' > "$work/inf.yaml"
check config-rep-inf 2 "$bin" sweep "$work/inf.yaml" --dry-run
printf 'op: act\nx: {n: &x [16, *x]}\n' > "$work/alias.yaml"
check config-self-alias 2 "$bin" sweep "$work/alias.yaml" --dry-run
python3 -c "print('{\"op\": \"act\", \"x\": {\"n\": ' + '[' * 100000 + ']' * 100000 + '}}')" > "$work/deep.json"
check config-deep-json 2 "$bin" sweep "$work/deep.json" --dry-run
one_line config-deep-json-one-line
python3 - "$work/laughs.yaml" <<'PY'
import sys
lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
for i in range(1, 10):
    lines.append("a%d: &a%d [%s]" % (i, i, ", ".join(["*a%d" % (i - 1)] * 10)))
open(sys.argv[1], "w").write("\n".join(lines) + "\nop: act\nx: {n: [16]}\n")
PY
check config-billion-laughs 2 "$bin" sweep "$work/laughs.yaml" --dry-run
contains config-billion-laughs-msg "$work/err" "more than 1000000 values"
python3 -c "print('op: act\nx: {n: [' + ', '.join(str(i) for i in range(1, 100002)) + ']}\nproviders: [torch]')" > "$work/many.yaml"
check max-points-default 2 "$bin" sweep "$work/many.yaml" --dry-run
contains max-points-msg "$work/err" "100001 points (tables x values x providers), more than the limit of 100000"
check max-points-raised 0 "$bin" sweep "$work/many.yaml" --dry-run --max-points 100001 --device cpu
contains max-points-listing "$work/out" "100001 points"
check max-points-low 2 "$bin" sweep "$work/tiny.yaml" --dry-run --max-points 1
check max-points-zero 2 "$bin" sweep "$work/tiny.yaml" --dry-run --max-points 0
check compile-max-points 2 "$bin" compile "$work/many.yaml" --device cpu

# --- names that would break a document or its JSON ------------------------------------------------
check label-bad-utf8 2 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --label $'bad\xff'
contains label-bad-utf8-msg "$work/err" "not valid UTF-8"
check label-newline 2 "$bin" import "$work/dup.md" --db "$db" --label $'a\n```'
check label-fence 2 "$bin" sweep "$work/tiny.yaml" --db "$db" --device cpu --label 'x```y'
printf 'op: act\nx: {n: [16]}\nproviders: {torch: "t\\x1b"}\n' > "$work/badlabel.yaml"
check config-label-escape 2 "$bin" sweep "$work/badlabel.yaml" --dry-run
contains config-label-escape-msg "$work/err" "providers.torch: column label 't ' holds a control character (byte 27)"
printf 'op: act\nx: {n: [16]}\nproviders: {torch: "t\xff"}\n' > "$work/rawlabel.yaml"
check config-label-raw 2 "$bin" sweep "$work/rawlabel.yaml" --dry-run
contains config-label-raw-msg "$work/err" "rawlabel.yaml:3: not valid UTF-8"
check runs-json-still-works 0 "$bin" runs --db "$db" --format json

# --- a damaged database ------------------------------------------------------------------------------
cp "$db" "$work/bad.db"
root=$(sqlite3 "$work/bad.db" "SELECT rootpage FROM sqlite_master WHERE name='runs'")
psize=$(sqlite3 "$work/bad.db" "PRAGMA page_size")
python3 -c "
import sys
p, root, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(p, 'r+b') as f:
    f.seek((root - 1) * size); f.write(bytes((i * 131 + 7) & 255 for i in range(size)))" "$work/bad.db" "$root" "$psize"
check damaged-runs 3 "$bin" runs --db "$work/bad.db"
contains damaged-msg "$work/err" "bad.db is damaged"
one_line damaged-one-line
check damaged-report 3 "$bin" report --db "$work/bad.db"

echo "input_cli_test: $fails failed"
[ "$fails" = 0 ]
