#!/usr/bin/env bash
# The pull request's comment (scripts/ci_comment.py, scripts/ci-report --pr-comment): a huge
# diff stays under 60,000 characters with the verdict on its first line and the worst
# regressions in its table; end to end on a tiny CPU sweep, with and without a baseline, the
# plot list without links.
# Usage: ci_comment_test.sh OPBENCH SOURCE_DIR PYTHON   (PYTHON: one with matplotlib, for --plots)
set -u
bin=$1; src=$2; py=$3
. "$(dirname "$0")/cli_lib.sh"
comment=$src/scripts/ci_comment.py
first_line() { # first_line NAME FILE PREFIX
  if head -1 "$2" | grep -qF -- "$3"; then echo "ok   $1"; else echo "FAIL $1: first line '$(head -1 "$2")'"; fails=$((fails+1)); fi
}
at_most() { # at_most NAME FILE CHARS
  local n; n=$(python3 -c 'import sys; print(len(open(sys.argv[1], encoding="utf-8").read()))' "$2")
  if [ "$n" -le "$3" ]; then echo "ok   $1 ($n characters)"; else echo "FAIL $1: $n characters"; fails=$((fails+1)); fi
}

# --- a huge diff: 100 tables x 16 x x 3 providers; tr 50% slower in half the tables (one
# point 4x), to 30% faster everywhere --------------------------------------------------------
python3 - "$work" <<'PY'
import sys
out = sys.argv[1]
xs = [2 ** k for k in range(4, 20)]
def doc(head):
    parts = ["# Big\n\n## Notation\n\n- tr: Triton\n- to: Torch\n- toc: Torch Compile\n\n## H100\n\n```"]
    for t in range(100):
        parts.append(f"big-speed-fwd-t{t:03d}:\n" + "         n" + "".join(f"{c:>12}" for c in ("tr", "to", "toc")))
        for i, x in enumerate(xs):
            tr, to, toc = x / 1e5, x / 2e5, x / 3e5
            if head:
                if t % 2 == 0:
                    tr *= 4.0 if (t, x) == (42, 4096) else 1.5
                to *= 0.7
            parts.append(f"{i:<2} {x:9.1f}{tr:12.6f}{to:12.6f}{toc:12.6f}")
        parts.append("")
    parts[-1] = "```\n"
    return "\n".join(parts)
open(f"{out}/base.md", "w").write(doc(False))
open(f"{out}/head.md", "w").write(doc(True))
PY
db=$work/big.db
check import-base 0 "$bin" import "$work/base.md" --db "$db" --label base
check import-head 0 "$bin" import "$work/head.md" --db "$db" --label head
check big-diff 1 "$bin" diff label:base label:head --db "$db" --format json --fail-on-regression --out "$work/big.json"
check big-comment 0 python3 "$comment" --diff "$work/big.json" --title "big on H100" --out "$work/big.md"
at_most big-comment-size "$work/big.md" 60000
first_line big-comment-verdict "$work/big.md" "**opbench: 800 regressions** beyond 5% — big on H100: run 2 (head) against baseline run 1 (base), 4800 points compared"
contains big-comment-regressions "$work/big.md" "### Regressions (800)"
# the worst first
grep -A3 '^| table |' "$work/big.md" | sed -n 3p >"$work/worst"
contains big-comment-worst "$work/worst" '| `big-speed-fwd-t042` | n=4096 | tr | 0.04096 | 0.16384 | +300.0% |'
contains big-comment-short "$work/big.md" "... and 780 more (below)"
contains big-comment-all "$work/big.md" "<details><summary>All 800 regressions</summary>"
contains big-comment-rest "$work/big.md" "more (the job's summary lists every one)"
contains big-comment-others "$work/big.md" "<details><summary>Other changes: 1600 FASTER (2400 same)</summary>"
# a tighter limit still keeps the verdict and a regression table
check small-comment 0 python3 "$comment" --diff "$work/big.json" --limit 8000 --out "$work/small.md"
at_most small-comment-size "$work/small.md" 8000
first_line small-comment-verdict "$work/small.md" "**opbench: 800 regressions**"
contains small-comment-worst "$work/small.md" '| `big-speed-fwd-t042` | n=4096 | tr |'
check bad-diff 2 python3 "$comment" --diff "$work/base.md" --out "$work/x.md"

# --- end to end: ci-report --pr-comment --plots on a tiny CPU sweep ---------------------------
tiny_sweep "$work/tiny.yaml" 3
export OPBENCH_PYTHON=$py
ci=$src/scripts/ci-report
cdb=$work/ci.db
check ci-first 0 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label main --baseline label:main --missing-baseline-ok --device cpu --out "$work/ci1.md" --pr-comment "$work/c1.md"
first_line ci-first-verdict "$work/c1.md" '**opbench: nothing compared** — `'
contains ci-first-note "$work/c1.md" "No baseline run matches"
contains ci-first-report "$work/c1.md" "<details><summary>The new run's report</summary>"
# a baseline 4x better than anything measured (peak memory is deterministic): a regression
"$bin" report --db "$cdb" --run label:main >"$work/main.md"
quartered "$work/main.md" "$work/fast.md"
check ci-baseline-db 0 "$bin" import "$work/fast.md" --db "$work/baseline.db" --label fast
check ci-regression 1 "$ci" "$work/tiny.yaml" --opbench "$bin" --db "$cdb" --label pr --baseline label:fast --baseline-db "$work/baseline.db" --device cpu --out "$work/ci2.md" --pr-comment "$work/c2.md" --plots "$work/plots"
first_line ci-regression-verdict "$work/c2.md" "regressions** beyond 5% — \`$work/tiny.yaml\` on "
contains ci-regression-memory "$work/c2.md" '| `lrpe_rotate-memory-fwd-batch1-head2-dim16-act_none-fp32` | n=16 | to |'
contains ci-plot-list "$work/c2.md" "- lrpe_rotate-speed-fwd-batch1-head2-dim16-act_none-fp32.png (4 lines)"  # two runs, two floors (the imported peak is the report's rounded figure)
[ -f "$work/plots/lrpe_rotate-speed-fwd-batch1-head2-dim16-act_none-fp32.png" ] && echo "ok   ci-plots-drawn" || { echo "FAIL ci-plots-drawn"; fails=$((fails+1)); }
grep -q '](' "$work/c2.md" && { echo "FAIL ci-comment has links"; grep '](' "$work/c2.md" | head -3; fails=$((fails+1)); } || echo "ok   ci-comment-link-free"
at_most ci-regression-size "$work/c2.md" 60000

echo "ci_comment_test: $fails failed"
[ "$fails" = 0 ]
