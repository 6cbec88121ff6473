#!/usr/bin/env bash
# End to end through the command line: import a reference document, report it back byte for
# byte, diff two imported runs (--fail-on-regression exit status, JSON), merge twice, history,
# scripts/ci-report on a tiny CPU sweep, versus within a CPU sweep run, and bad input for each
# command.
# The reference documents come from tests/data/reference (tests/data/README.md).
# Usage: regress_cli_test.sh OPBENCH SOURCE_DIR
set -u
bin=$1; src=$2; refs=$src/tests/data/reference
. "$(dirname "$0")/cli_lib.sh"

# --- ci-report on a tiny CPU sweep --------------------------------------------------------------
tiny_sweep "$work/tiny.yaml" 5
ci=$src/scripts/ci-report
cdb=$work/ci.db
check ci-first 0 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label main --baseline label:main --missing-baseline-ok --device cpu --out "$work/ci1.md"
contains ci-first-note "$work/ci1.md" "No baseline run matches"
contains ci-first-report "$work/ci1.md" "lrpe_rotate-speed-fwd-batch1-head2-dim16-act_none-fp32:"
check ci-second 0 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label pr --baseline label:main --device cpu --threshold 1000 --out "$work/ci2.md"
contains ci-second-diff "$work/ci2.md" "No regressions."
contains ci-second-base "$work/ci2.md" "against baseline run 1"
# A baseline 4x better than anything measured (the pr report with every value quartered,
# imported into a committed baseline database): the next run regresses (peak memory is
# deterministic, so its 4x is a regression even from single samples), exit 1.
"$bin" report --db "$cdb" --run label:pr >"$work/pr.md"
quartered "$work/pr.md" "$work/fast.md"
check ci-baseline-db 0 "$bin" import "$work/fast.md" --db "$work/baseline.db" --label fast
check ci-regression 1 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label pr2 --baseline label:fast --baseline-db "$work/baseline.db" --device cpu --out "$work/ci3.md"
contains ci-regression-first "$work/ci3.md" "## Regressions"
contains ci-regression-report "$work/ci3.md" "lrpe_rotate-speed-fwd-batch1-head2-dim16-act_none-fp32:"
# The same baseline as a committed JSON export (results/<gpu>/<op>.json): imported first.
check ci-baseline-json-export 0 "$bin" export --all --db "$work/baseline.db" --out "$work/baseline.json"
check ci-regression-json 1 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$work/ci-json.db" --label pr3 --baseline label:fast --baseline-db "$work/baseline.json" --device cpu --out "$work/ci5.md"
contains ci-regression-json-first "$work/ci5.md" "## Regressions"
check ci-missing-baseline 2 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label x --baseline label:nope --device cpu --out "$work/ci4.md"
check ci-usage 2 "$ci" --opbench "$bin" --db "$cdb"

# --- versus: within one CPU sweep run, torch against torch_naive --------------------------------
cat >"$work/tpa.yaml" <<'EOF'
op: tpa_decode
x: {m: [16, 32]}
params: {batch: 1, head: 2, rank: 2, dim: 16, dtype: fp32, mode: fwd, metric: [speed, memory]}
providers: {torch: to, torch_naive: ton}
timing: {warmup_ms: 1, rep_ms: 5, stat: median, flush_l2: false}
EOF
vdb=$work/versus.db
check versus-sweep 0 "$bin" sweep "$work/tpa.yaml" --db "$vdb" --label vs --device cpu --no-report
check versus 0 "$bin" versus label:vs --provider torch --against torch_naive --db "$vdb"
contains versus-heading "$work/out" "# opbench versus"
contains versus-what "$work/out" "- torch against torch_naive"
contains versus-threshold "$work/out" "- metric: speed; threshold 0%"
contains versus-stderr "$work/err" "versus run 1 (vs): torch against torch_naive: 2 points, "
# peak memory is deterministic, and torch_naive materialises q k v: larger at every point
check versus-fail-on-slower 1 "$bin" versus latest --provider ton --against to --metric memory --fail-on-slower --db "$vdb"
contains versus-slower "$work/out" "**2 slower points**"
check versus-json 0 "$bin" versus 1 --provider torch --against torch_naive,torch_compile --metric memory --format json --fail-on-slower --db "$vdb" --out "$work/versus.json"
pycheck versus-json-fields '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run"]["label"] == "vs" and "base" not in d, d.keys()
assert d["versus"].startswith("torch against the best of torch_naive, torch_compile"), d["versus"]
assert d["slower"] == 0 and d["threshold_pct"] == 0, d
pts = d["points"]
assert len(pts) == 2 and all(p["verdict"] == "FASTER" and p["base_provider"] == "torch_naive" for p in pts), pts
assert d["unmatched"] == {"without_against": [], "without_provider": []}, d["unmatched"]
' "$work/versus.json"
check versus-unknown-provider 2 "$bin" versus 1 --provider cuda --against torch --db "$vdb"
contains versus-unknown-provider-msg "$work/err" "--provider: the run holds no speed points of cuda"
check versus-unknown-against 2 "$bin" versus 1 --provider torch --against triton --db "$vdb"
contains versus-unknown-against-msg "$work/err" "--against"
check versus-self 2 "$bin" versus 1 --provider torch --against torch --db "$vdb"
check versus-no-against 2 "$bin" versus 1 --provider torch --db "$vdb"
check versus-bad-selector 2 "$bin" versus label:nope --provider torch --against torch_naive --db "$vdb"
check versus-missing-db 2 "$bin" versus 1 --provider torch --against torch_naive --db "$work/none.db"

ref=$refs/act_h100.md
db=$work/r.db
act=act-speed-fwd-batch12-head12-dim128-act_relu-bf16

# --- import and report ------------------------------------------------------------------
check import 0 "$bin" import "$ref" --db "$db" --label base
[ "$(cat "$work/out")" = 1 ] && echo "ok   import-prints-id" || { echo "FAIL import printed '$(cat "$work/out")'"; fails=$((fails+1)); }
contains import-summary "$work/err" "H100"
check report 0 "$bin" report --db "$db" --run label:base
cp "$work/out" "$work/report.md"
contains report-notation "$work/report.md" "- tr: Triton"
# Every table of the reference appears in the report byte for byte.
pycheck report-byte-identical '
import sys
ref = open(sys.argv[1]).read().split("\n")
rep = open(sys.argv[2]).read()
blocks, i, n = [], 0, 0
while i < len(ref):
    l = ref[i]
    if l and not l[0].isspace() and l.endswith(":") and i + 1 < len(ref) and ref[i + 1].startswith(" "):
        j = i + 1
        while j < len(ref) and ref[j].strip() and not ref[j].startswith("```"):
            j += 1
        blocks.append("\n".join(ref[i:j]) + "\n")
        i = j
    else:
        i += 1
assert len(blocks) == 24, len(blocks)
for b in blocks:
    assert b in rep, b.split("\n")[0]
' "$ref" "$work/report.md"

# --- diff two imported runs --------------------------------------------------------------
# head: the same document with one cell 20% slower (tr at n=256 of the relu table)
sed 's/^0    256.0  0.043131  0.014025  0.300839$/0    256.0  0.051757  0.014025  0.300839/' "$ref" >"$work/head.md"
grep -q 0.051757 "$work/head.md" || { echo "FAIL could not edit the head document"; fails=$((fails+1)); }
check import-head 0 "$bin" import "$work/head.md" --db "$db" --label head
check diff 0 "$bin" diff label:base label:head --db "$db"
contains diff-slower "$work/out" "SLOWER"
contains diff-summary "$work/out" "## Summary"
contains diff-regressions "$work/out" "**1 regression**"
check diff-fail 1 "$bin" diff label:base label:head --db "$db" --fail-on-regression
check diff-self 0 "$bin" diff label:base label:base --db "$db" --fail-on-regression
contains diff-self-none "$work/out" "No regressions."
# a published document holds no measured peak: nothing to normalise by
check diff-normalize-no-peak 2 "$bin" diff label:base label:head --db "$db" --normalize peak
contains diff-normalize-no-peak-msg "$work/err" "--normalize: peak: run 1 holds no measured peak bandwidth"
check versus-normalize-no-peak 2 "$bin" versus label:base --provider tr --against to --db "$db" --normalize peak
check diff-threshold 0 "$bin" diff label:base label:head --db "$db" --fail-on-regression --threshold 25
check diff-memory 0 "$bin" diff label:base label:head --db "$db" --fail-on-regression --metric memory
check diff-json 1 "$bin" diff 1 2 --db "$db" --format json --fail-on-regression --out "$work/diff.json"
pycheck diff-json-fields '
import json, sys
d = json.load(open(sys.argv[1]))
pts = d["points"]
assert len(pts) == 24 * 8 * 3, len(pts)
slower = [p for p in pts if p["verdict"] == "SLOWER"]
assert len(slower) == 1, slower
s = slower[0]
assert s["title"] == "act-speed-fwd-batch12-head12-dim128-act_relu-bf16" and s["x"] == 256 and s["provider"] == "Triton", s
assert abs(s["ratio"] - 0.051757 / 0.043131) < 1e-9, s
assert all(p["verdict"] == "SAME" for p in pts if p is not s)
for k in ("title", "x", "provider", "base", "head", "ratio", "verdict"):
    assert k in pts[0], k
assert d["regressions"] == 1 and d["unmatched"] == {"base": [], "head": []}
' "$work/diff.json"
# a published column against a differently named provider: --map
sed -E 's/^- tr: Triton$/- cu: cuda/; s/^( +n +)tr( +to +toc)$/\1cu\2/' "$ref" >"$work/ours.md"
[ "$(grep -c ' cu  ' "$work/ours.md")" = 24 ] || { echo "FAIL could not edit ours.md"; fails=$((fails+1)); }
check import-ours 0 "$bin" import "$work/ours.md" --db "$db" --label ours
check diff-unmapped 0 "$bin" diff label:base label:ours --db "$db" --format json
pycheck diff-unmapped-json 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["unmatched"]["base"]) == 192 and len(d["unmatched"]["head"]) == 192, d["unmatched"]["base"][:1]' "$work/out"
check diff-mapped 0 "$bin" diff label:base label:ours --db "$db" --format json --map tr=cuda
pycheck diff-mapped-json 'import json,sys; d=json.load(open(sys.argv[1])); assert d["unmatched"] == {"base": [], "head": []}; assert any(p["base_provider"] == "Triton" and p["provider"] == "cuda" for p in d["points"])' "$work/out"

# --- history --------------------------------------------------------------------------------
check history 0 "$bin" history "$act" --x 256 --provider tr --db "$db"
contains history-step "$work/out" "**step up +20.0%**"
contains history-gpu "$work/out" "H100"
check history-json 0 "$bin" history "$act" --db "$db" --format json
pycheck history-json-series 'import json,sys; s=json.load(open(sys.argv[1])); assert len(s) == 8 * 4, len(s); ups=[e for x in s for e in x["entries"] if e["step"] == "up"]; assert len(ups) == 1, ups' "$work/out"

# --- merge ------------------------------------------------------------------------------------
check merge 0 "$bin" merge "$db" --db "$work/m.db"
contains merge-copied "$work/out" "3 runs copied"
check merge-again 0 "$bin" merge "$db" --db "$work/m.db"
contains merge-skipped "$work/out" "0 runs copied"
check runs-merged 0 "$bin" runs --db "$work/m.db" --format json
pycheck merge-no-duplicates 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["label"] for x in r] == ["base", "head", "ours"], r' "$work/out"
# a run of its own first: the merged ones get new ids
check import-other 0 "$bin" import "$refs/tpa_decode_a800.md" --db "$work/m2.db"
check merge-remap 0 "$bin" merge "$db" --db "$work/m2.db"
contains merge-remapped "$work/out" "run 1 -> 2"
check merged-report 0 "$bin" report --db "$work/m2.db" --run label:base
cmp -s "$work/out" <(sed 's/^run 1 (base)/run 2 (base)/' "$work/report.md") && echo "ok   merged-report-same" || { echo "FAIL merged run reports differently"; fails=$((fails+1)); }

# --- results as text: export, import, report --format json|csv, --out ---------------------------
check export-all 0 "$bin" export --all --db "$db" --out "$work/all.json"
check import-json 0 "$bin" import "$work/all.json" --db "$work/j.db"
check export-again 0 "$bin" export --all --db "$work/j.db" --out "$work/again.json"
cmp -s "$work/all.json" "$work/again.json" && echo "ok   export-import-export-identical" || { echo "FAIL export, import, export differs"; fails=$((fails+1)); }
check import-json-again 0 "$bin" import "$work/all.json" --db "$work/j.db"
contains import-json-again-skipped "$work/err" "not imported again"
check import-json-label 2 "$bin" import "$work/all.json" --db "$work/j.db" --label x
check export-none 2 "$bin" export --db "$db"
check report-json 0 "$bin" report --db "$db" --run label:base --format json --out "$work/base.json"
check export-base 0 "$bin" export label:base --db "$db"
cmp -s "$work/out" "$work/base.json" && echo "ok   report-json-is-export" || { echo "FAIL report --format json differs from export"; fails=$((fails+1)); }
check report-csv 0 "$bin" report --db "$db" --run label:base --format csv
pycheck report-csv-rows 'import csv,json,sys
rows = list(csv.DictReader(open(sys.argv[1])))
pts = json.load(open(sys.argv[2]))["runs"][0]["points"]
assert len(rows) == len(pts), (len(rows), len(pts))
for r, p in zip(rows, pts):
    assert (r["title"], int(r["x"]), r["provider"], r["label"]) == (p["title"], p["x_value"], p["provider"], p["label"]), r
    assert (float(r["value"]) if r["value"] else None) == p["value"], (r["value"], p["value"])
for k in ("median", "mean", "min", "max", "p20", "p80", "stdev", "count", "gbps", "pct_peak", "act", "dtype"):
    assert k in rows[0], k' "$work/out" "$work/base.json"
check import-doc-again 0 "$bin" import "$ref" --db "$db" --label base-again
contains import-doc-again-skipped "$work/err" "not imported again"
check runs-out 0 "$bin" runs --db "$db" --out "$work/runs.txt"
contains runs-out-file "$work/runs.txt" "started_at"
check history-out 0 "$bin" history "$act" --db "$db" --out "$work/history.md"
contains history-out-file "$work/history.md" "H100"

# --- bad input: exit 2, one clear line --------------------------------------------------------
printf '# H100\n\n```\nt:\n     n   to\n0  1.0  2.0\n1  2.0\n```\n' >"$work/bad.md"
check import-bad 2 "$bin" import "$work/bad.md" --db "$work/none.db"
contains import-bad-line "$work/err" "bad.md:7"
check import-missing 2 "$bin" import "$work/nope.md" --db "$work/none.db"
check diff-missing-db 2 "$bin" diff 1 2 --db "$work/none.db"
check diff-bad-selector 2 "$bin" diff label:nope 1 --db "$db"
contains diff-bad-selector-msg "$work/err" "label:nope"
check diff-bad-map 2 "$bin" diff 1 2 --db "$db" --map tr
check diff-bad-metric 2 "$bin" diff 1 2 --db "$db" --metric power
check import-lrpe 0 "$bin" import "$refs/lrpe_cosine_a800.md" --db "$db" --label lrpe
check diff-nothing-matched 2 "$bin" diff label:base label:lrpe --db "$db"
contains diff-nothing-msg "$work/err" "nothing matched"
# speed points against memory points of one title: mismatched metrics
printf '# H100\n```\nt-speed:\n     n   to\n0  1.0  2.0\n```\n' >"$work/s.md"
printf '# H100\n```\nt-memory:\n     n   to\n0  1.0  2.0\n```\n' >"$work/mm.md"
check import-s 0 "$bin" import "$work/s.md" --db "$work/mx.db" --label s
check import-m 0 "$bin" import "$work/mm.md" --db "$work/mx.db" --label m
check diff-mismatched-metrics 2 "$bin" diff label:s label:m --db "$work/mx.db"
contains diff-mismatched-msg "$work/err" "mismatched metrics"
check diff-metric-absent 2 "$bin" diff label:s label:s --db "$work/mx.db" --metric memory
check merge-missing 2 "$bin" merge "$work/nope.db" --db "$work/none.db"
check history-missing-db 2 "$bin" history "$act" --db "$work/none.db"
check history-unknown 2 "$bin" history no-such-title --db "$db"
[ -e "$work/none.db" ] && { echo "FAIL a failed command created a database"; fails=$((fails+1)); }
check runs-unchanged 0 "$bin" runs --db "$db" --format json
pycheck no-run-added 'import json,sys; r=json.load(open(sys.argv[1])); assert len(r) == 4, [x["label"] for x in r]' "$work/out"

echo "regress_cli_test: $fails failed"
[ "$fails" = 0 ]
