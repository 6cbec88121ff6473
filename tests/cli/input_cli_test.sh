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

# --- every option that writes a file refuses a database the command has open -------------------
title=tpa_decode-memory-fwd-batch1-head2-dim16-rank2-fp32
check plot-db-history 2 "$bin" history "$title" --db "$db" --plot "$db"
contains plot-db-history-msg "$work/err" "--plot: $db: is the database"
one_line plot-db-history-one-line
check plot-wal-history 2 "$bin" history "$title" --db "$db" --plot "$db-wal"
check plot-journal-history 2 "$bin" history "$title" --db "$db" --plot "$work/sub/../r.db-journal"
check plots-db-report 2 "$bin" report --db "$db" --plots "$db"
contains plots-db-report-msg "$work/err" "--plots: $db: is the database"
check plot-out-db 2 "$bin" plot --db "$db" --out "$work/link.db"
check export-out-db 2 "$bin" export latest --db "$db" --out "$db-shm"
same out-db-untouched-2 "$db" "$sum"

# --- --out writes what it names and never replaces what it is --------------------------------
ln -s "$work/target.md" "$work/out-link.md"
check out-link-new 0 "$bin" report --db "$db" --out "$work/out-link.md"
check out-link-again 0 "$bin" report --db "$db" --out "$work/out-link.md"
if [ -L "$work/out-link.md" ] && grep -q "^## " "$work/target.md"; then echo "ok   out-link-kept"; else echo "FAIL out-link-kept: the link was replaced or its target not written"; fails=$((fails+1)); fi
mkfifo "$work/fifo"
cat "$work/fifo" > "$work/fifo.out" & reader=$!
check out-fifo 0 "$bin" report --db "$db" --out "$work/fifo"
wait "$reader"
if [ -p "$work/fifo" ] && grep -q "^## " "$work/fifo.out"; then echo "ok   out-fifo-kept"; else echo "FAIL out-fifo-kept"; fails=$((fails+1)); fi
ln -s /dev/stdout "$work/stdout-link"
"$bin" report --db "$db" --out "$work/stdout-link" 2>"$work/err" | cat > "$work/piped"
if [ -L "$work/stdout-link" ] && grep -q "^## " "$work/piped"; then echo "ok   out-stdout-link"; else echo "FAIL out-stdout-link"; sed 's/^/  | /' "$work/err"; fails=$((fails+1)); fi
printf 'kept\n' > "$work/mode.md"; chmod 640 "$work/mode.md"
check out-regular 0 "$bin" report --db "$db" --out "$work/mode.md"
[ "$(stat -c %a "$work/mode.md")" = 640 ] && grep -q "^## " "$work/mode.md" && echo "ok   out-regular-mode-kept" || { echo "FAIL out-regular-mode-kept"; fails=$((fails+1)); }
ln -s /dev/full "$work/full-link"
check out-full 3 "$bin" report --db "$db" --out "$work/full-link"
contains out-full-msg "$work/err" "cannot write $work/full-link: No space left on device"
one_line out-full-one-line
[ -L "$work/full-link" ] && echo "ok   out-full-link-kept" || { echo "FAIL out-full-link-kept"; fails=$((fails+1)); }
check out-stdout-full 3 sh -c '"$0" runs --db "$1" > /dev/full' "$bin" "$db"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  # --out /dev/stdout as a user who may not write /dev: into the pipe it names
  shared=$(mktemp -d /tmp/opbench-shared.XXXXXX); chmod 777 "$shared"; cp "$db" "$shared/r.db"; chmod 644 "$shared/r.db"
  setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '"$0" report --db "$1" --out /dev/stdout | cat' "$bin" "$shared/r.db" \
    > "$work/as-user" 2>"$work/err"
  if grep -q "^## " "$work/as-user"; then echo "ok   out-dev-stdout-non-root"; else echo "FAIL out-dev-stdout-non-root"; sed 's/^/  | /' "$work/err"; fails=$((fails+1)); fi
  rm -rf "$shared"
else
  "$bin" report --db "$db" --out /dev/stdout 2>"$work/err" | cat > "$work/as-user"
  if grep -q "^## " "$work/as-user"; then echo "ok   out-dev-stdout-non-root"; else echo "FAIL out-dev-stdout-non-root"; fails=$((fails+1)); fi
fi
mkdir -p "$work/sock"; python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$work/sock/s"
check out-socket 2 "$bin" report --db "$db" --out "$work/sock/s"
contains out-socket-msg "$work/err" "is a socket, not a file to write"

# --- a database path that is not a regular file ------------------------------------------------
ln -s /dev/null "$work/null.db"
check db-devnull-sweep 2 "$bin" sweep "$work/tiny.yaml" --db "$work/null.db" --device cpu
contains db-devnull-msg "$work/err" "--db: '$work/null.db' is a character device, not a database file"
one_line db-devnull-one-line
[ -e /dev/null-journal ] && { echo "FAIL db-devnull-no-journal: /dev/null-journal exists"; fails=$((fails+1)); } || echo "ok   db-devnull-no-journal"
check db-devnull-runs 2 "$bin" runs --db "$work/null.db"
contains db-devnull-runs-msg "$work/err" "is a character device"
check db-devnull-import 2 "$bin" import "$work/dup.md" --db "$work/null.db"
check db-devnull-merge 2 "$bin" merge "$db" --db "$work/null.db"
check db-devnull-source 2 "$bin" merge "$work/null.db" --db "$work/new6.db"
absent db-devnull-source-no-db "$work/new6.db"
ln -s "$work/nowhere/x.db" "$work/dangling.db"
check db-dangling 2 "$bin" sweep "$work/tiny.yaml" --db "$work/dangling.db" --device cpu
contains db-dangling-msg "$work/err" "is a symbolic link to $work/nowhere/x.db, which does not exist"
check db-fifo 2 "$bin" report --db "$work/fifo"
contains db-fifo-msg "$work/err" "is a FIFO"
printf 'x\n' > "$work/afile"
check db-under-a-file 2 "$bin" sweep "$work/tiny.yaml" --db "$work/afile/r.db" --device cpu
contains db-under-a-file-msg "$work/err" "is not a folder"

# --- small things ------------------------------------------------------------------------------
check devices-trailing-comma 2 "$bin" sweep "$work/tiny.yaml" --devices 'cpu,' --dry-run
contains devices-trailing-comma-msg "$work/err" "item 2 is empty"
check devices-empty-item 2 "$bin" sweep "$work/tiny.yaml" --devices 'cpu,,cpu' --dry-run
check threshold-hex 2 "$bin" diff label:base label:head --db "$db" --threshold 0x10
contains threshold-hex-msg "$work/err" "got '0x10'"
printf '{"format": "opbench-runs", "version": 4, "runs": []}\n' > "$work/empty.json"
check import-no-runs 2 "$bin" import "$work/empty.json" --db "$work/new7.db"
contains import-no-runs-msg "$work/err" "holds no runs"
absent import-no-runs-no-db "$work/new7.db"
printf '[{"format": "opbench-runs"}]\n' > "$work/array.json"
check import-array 2 "$bin" import "$work/array.json" --db "$work/new8.db"
contains import-array-msg "$work/err" "not an opbench export: the top level is array"
absent import-array-no-db "$work/new8.db"
printf '# Results\n\n## GPU\n\n```\nt:\n     n   to\n0  1.0  2.0\n```\n' > "$work/nogpu.md"
check import-no-gpu 2 "$bin" import "$work/nogpu.md" --db "$work/new9.db"
contains import-no-gpu-msg "$work/err" "nogpu.md:6: table 't': no heading above it names its GPU"
absent import-no-gpu-no-db "$work/new9.db"
printf '##\n\nrun 1, 2026-11-22, cpu, median of each point'"'"'s samples\n\n```\nt:\n     n   to\n0  1.0  2.0\n```\n' > "$work/emptyrun.md"
check import-empty-run-heading 2 "$bin" import "$work/emptyrun.md" --db "$work/new9.db"
contains import-empty-run-heading-msg "$work/err" "names no GPU"

# --- imports store what they say, and only what a run may hold -------------------------------
check export-base 0 "$bin" export label:base --db "$db" --out "$work/base.json"
mutate() { # mutate NAME PYTHON: a copy of base.json changed by PYTHON (d: the document, p: its first point)
  python3 - "$work/base.json" "$work/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["runs"][0]["points"][0]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
mutate twice 'd["runs"][0]["points"].append(dict(p))'
check import-point-twice 2 "$bin" import "$work/twice.json" --db "$work/new10.db"
contains import-point-twice-msg "$work/err" "runs[0].points[2]: is runs[0].points[0] again"
absent import-point-twice-no-db "$work/new10.db"
mutate collide 'q = dict(p); q["params"] = dict(p["params"], batch=7); d["runs"][0]["points"].append(q)'
check import-titles-collide 2 "$bin" import "$work/collide.json" --db "$work/new10.db"
mutate runtwice 'd["runs"].append(d["runs"][0])'
check import-run-twice 2 "$bin" import "$work/runtwice.json" --db "$work/new10.db"
contains import-run-twice-msg "$work/err" "runs[1].uuid: is the uuid of runs[0]"
for bad in 'p["stats"]["count"] = -3' 'p["samples"] = [-1.0]' 'p["rounds"] = [5, 5]' 'd["runs"][0]["status"] = "finished"' \
           'p["op"] = "conv9d"' 'p["provider"] = "nobody"' 'd["runs"][0]["label"] = "a\nb"' 'p["title"] = "t\u0000x"' \
           'd["runs"][0]["label"] = "x```y"' 'p["value"] = -5.0'; do
  mutate bad "$bad"
  check "import-refused: $bad" 2 "$bin" import "$work/bad.json" --db "$work/new11.db"
done
one_line import-refused-one-line
absent import-refused-no-db "$work/new11.db"
check import-good 0 "$bin" import "$work/base.json" --db "$work/new12.db"
contains import-good-count "$work/err" ", 2 points imported from"

# --- markdown documents are read as they are parsed, within stated limits ------------------------
gen() { # gen FILE MB COLUMNS: one table of COLUMNS columns, MB megabytes
  python3 -c '
import sys
path, mb, cols = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
head = "# H100\n\n```\nt-speed:\n" + " " * 8 + "n" + "".join(("c%d" % i).rjust(10) for i in range(cols)) + "\n"
cells = "".join("  0.123456" for _ in range(cols)) + "\n"
with open(path, "w") as f:
    f.write(head)
    size, row = len(head), 0
    while row == 0 or size < mb * (1 << 20):
        line = "%d %9.1f" % (row, row + 1) + cells
        f.write(line); size += len(line); row += 1
    f.write("```\n")' "$@"
}
gen "$work/big.md" 2 8
check import-max-points 2 "$bin" import "$work/big.md" --db "$work/new13.db" --max-points 1000
contains import-max-points-msg "$work/err" "points, more than the limit of 1000 (--max-points raises it)"
absent import-max-points-no-db "$work/new13.db"
gen "$work/mid.md" 0.5 8
check import-mid 0 "$bin" import "$work/mid.md" --db "$work/mid.db"
rows=$(grep -c '^[0-9]' "$work/mid.md")
contains import-mid-count "$work/err" ", $((rows * 8)) points imported from"
truncate -s 300M "$work/huge.md"
check import-too-large 2 "$bin" import "$work/huge.md" --db "$work/new14.db"
contains import-too-large-msg "$work/err" "300 MiB, more than the 256 MiB an imported file may hold"
absent import-too-large-no-db "$work/new14.db"
rm -f "$work/big.md" "$work/huge.md"

# --- names of any length in every listing --------------------------------------------------------
long=$(python3 -c 'print("x" * 3000)')
check long-label-sweep 0 "$bin" sweep "$work/tiny.yaml" --db "$work/long.db" --device cpu --label "$long" --no-report
check long-label-sweep2 0 "$bin" sweep "$work/tiny.yaml" --db "$work/long.db" --device cpu --label short --no-report
check long-label-runs 0 "$bin" runs --db "$work/long.db"
pycheck long-label-rows 'import sys; lines = open(sys.argv[1]).read().split("\n"); assert lines[1].startswith("1 ") and lines[2].startswith("2 ") and lines[1].count("x" * 3000) == 1, lines[:3]' "$work/out"

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

# --- standard descriptors closed: no internal pipe takes them (a message is no signal) ---------
check closed-in-err 0 sh -c '"$0" sweep "$1" --db "$2" --device cpu --no-report <&- 2>&-' "$bin" "$work/tiny.yaml" "$work/closed.db"
# (stdout closed: what the sweep prints there is lost, exit 3 when it printed anything; never 130)
check closed-out-err 0 sh -c '"$0" sweep "$1" --db "$2" --device cpu --no-report --label second >&- 2>&-; [ $? != 130 ]' "$bin" "$work/tiny.yaml" "$work/closed.db"
# the measuring commands too, though opbench hands them to opbench-measure: a report or a list
# printed to a closed stdout is exit 3
check closed-out-list 3 sh -c '"$0" list --device cpu >&-' "$bin"
check closed-out-sweep 3 sh -c '"$0" sweep "$1" --db "$2" --device cpu --label third >&-' "$bin" "$work/tiny.yaml" "$work/closed3.db"
check closed-runs 0 "$bin" runs --db "$work/closed.db" --format json
pycheck closed-runs-done 'import json,sys; r = json.load(open(sys.argv[1])); assert [x["status"] for x in r] == ["done", "done"], r' "$work/out"

# --- a duplicate axis value is refused, naming the axis --------------------------------------
printf 'op: tpa_decode\nx: {m: [16, 16]}\nparams: {batch: 1, head: 2, rank: 2, dim: 16, dtype: fp32, mode: fwd, metric: memory}\n' >"$work/dup.yaml"
check dup-axis 2 "$bin" sweep "$work/dup.yaml" --dry-run --device cpu
contains dup-axis-msg "$work/err" "x.m[1]"
one_line dup-axis-one-line

# --- a current folder that was deleted: said so, exit 2 ----------------------------------------
mkdir "$work/gone"
(cd "$work/gone" && rmdir "$work/gone" && "$bin" list >/dev/null 2>"$work/err"); rc=$?
[ "$rc" = 2 ] && echo "ok   deleted-cwd-list" || { echo "FAIL deleted-cwd-list: exit $rc"; cat "$work/err"; fails=$((fails+1)); }
contains deleted-cwd-msg "$work/err" "the current folder no longer exists"

echo "input_cli_test: $fails failed"
[ "$fails" = 0 ]
