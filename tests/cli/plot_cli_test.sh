#!/usr/bin/env bash
# Plots through the command line: opbench plot (valid PNGs, one line per provider and run read
# back from each figure, the dashed bandwidth floor of a run with a measured peak, --filter,
# --show), report --plots (links that resolve), history --plot with its change points and
# --fail-on-step / --gpu, and the one-line exit-3 error without python or matplotlib.
# Usage: plot_cli_test.sh OPBENCH SOURCE_DIR PYTHON   (PYTHON: one with matplotlib)
set -u
bin=$1; src=$2; py=$3
. "$(dirname "$0")/cli_lib.sh"
export OPBENCH_PYTHON=$py OPBENCH_PLOT_SCRIPT=$src/scripts/plot.py
# matplotlib comes with the project's environment (scripts/bootstrap installs it into .venv).
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  echo "FAIL: $py cannot import matplotlib (scripts/bootstrap installs it into .venv)"; exit 1
fi
speed=act-speed-fwd-batch1-head2-dim16-act_relu-bf16
memory=act-memory-fwd-batch1-head2-dim16-act_relu-bf16

# Six imported runs on an H100 and one on an A100, each two tables of three providers at four
# x: tr 30% slower from the fifth H100 run on, to 3x slower in the third run alone (one outlier).
python3 - "$work" <<'PY'
import sys
out = sys.argv[1]
def table(title, cols):
    xs = [256, 512, 1024, 2048]
    lines = [f"{title}:", "      n" + "".join(f"{c:>10}" for c in cols)]
    for i, x in enumerate(xs):
        lines.append(f"{i}  {x:5.1f}" + "".join(f"{cols[c](x):10.6f}" for c in cols))
    return "\n".join(lines)
for run in range(7):
    gpu = "H100" if run < 6 else "A100"
    tr = 1.3 if 4 <= run < 6 else 1.0
    to = 3.0 if run == 2 else 1.0
    speed = {"tr": lambda x: tr * x / 1e4, "to": lambda x: to * x / 2e4, "toc": lambda x: x / 3e4}
    mem = {"tr": lambda x: x / 100, "to": lambda x: x / 50, "toc": lambda x: x / 25}
    # each document its own (a document imported twice is one run)
    doc = (f"# Act benchmark\n\nPoint {run} of the series.\n\n## Notation\n\n- tr: Triton\n- to: Torch\n- toc: Torch Compile\n\n"
           f"## {gpu}\n\n```\n" + table("act-speed-fwd-batch1-head2-dim16-act_relu-bf16", speed) + "\n\n"
           + table("act-memory-fwd-batch1-head2-dim16-act_relu-bf16", mem) + "\n```\n")
    open(f"{out}/doc{run}.md", "w").write(doc)
PY
db=$work/h.db
for i in 0 1 2 3 4 5 6; do check import-$i 0 "$bin" import "$work/doc$i.md" --db "$db" --label r$i; done

# png_ok NAME FILE...: PNG signature, decodes to a non-empty image
png_ok() {
  local name=$1; shift
  pycheck "$name" '
import sys
import matplotlib.image as mpimg
for f in sys.argv[1:]:
    with open(f, "rb") as h:
        assert h.read(8) == b"\x89PNG\r\n\x1a\n", f
    img = mpimg.imread(f)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100, (f, img.shape)
' "$@"
}
pycheck() { # the decoding checks need matplotlib: run them with $py
  local name=$1 script=$2; shift 2
  if "$py" -c "$script" "$@" 2>"$work/pyerr"; then echo "ok   $name"; else echo "FAIL $name"; sed 's/^/  | /' "$work/pyerr" | tail -5; fails=$((fails+1)); fi
}

# --- opbench plot: one run, then two ------------------------------------------------------
check plot 0 "$bin" plot --db "$db" --run label:r0 --out "$work/p1"
contains plot-says "$work/err" "plot: 2 plots in $work/p1"
png_ok plot-pngs "$work/p1/$speed.png" "$work/p1/$memory.png"
pycheck plot-lines '
import json, sys
idx = json.load(open(sys.argv[1] + "/plots.json"))
plots = {p["title"]: p for p in idx["plots"]}
assert set(plots) == {sys.argv[2], sys.argv[3]}, plots.keys()
for p in plots.values():
    lines = [(l["label"], l["points"], l["dashed"]) for l in p["lines"]]
    assert lines == [("tr", 4, False), ("to", 4, False), ("toc", 4, False)], lines  # no peak: no floor
' "$work/p1" "$speed" "$memory"
check plot-two-runs 0 "$bin" plot --db "$db" --run label:r0 --run gpu:a100 --out "$work/p2" --filter speed
[ ! -e "$work/p2/$memory.png" ] && echo "ok   plot-filter" || { echo "FAIL plot-filter drew $memory"; fails=$((fails+1)); }
pycheck plot-two-runs-lines '
import json, sys
(p,) = json.load(open(sys.argv[1] + "/plots.json"))["plots"]
labels = [l["label"] for l in p["lines"]]
assert labels == ["tr (run 1 r0, H100)", "to (run 1 r0, H100)", "toc (run 1 r0, H100)",
                  "tr (run 7 r6, A100)", "to (run 7 r6, A100)", "toc (run 7 r6, A100)"], labels
' "$work/p2"
check plot-no-out 2 "$bin" plot --db "$db"
check plot-bad-filter 2 "$bin" plot --db "$db" --out "$work/p3" --filter "act_(relu"
contains plot-bad-filter-msg "$work/err" "--filter: act_(relu: not a valid regular expression"
check plot-filter-none 2 "$bin" plot --db "$db" --out "$work/p3" --filter tpa_decode
contains plot-filter-none-msg "$work/err" "matches no table title of the selected runs (2 titles: $speed"

# --- a CPU sweep: its measured peak gives each speed plot a dashed floor --------------------
cat >"$work/tiny.yaml" <<'YAML'
op: lrpe_rotate
x: {n: [16, 32]}
params: {batch: 1, head: 2, dim: 16, dtype: fp32, mode: fwd, metric: speed}
variants: [{act: none}]
providers: {torch: to}
timing: {warmup_ms: 1, rep_ms: 3, stat: median, flush_l2: false}
YAML
check sweep 0 "$bin" sweep "$work/tiny.yaml" --db "$work/s.db" --device cpu --no-report
for show in value gbps pct; do
  check plot-floor-$show 0 "$bin" plot --db "$work/s.db" --show $show --out "$work/f-$show"
  pycheck plot-floor-$show-lines '
import json, sys
(p,) = json.load(open(sys.argv[1] + "/plots.json"))["plots"]
lines = [(l["label"], l["points"], l["dashed"]) for l in p["lines"]]
assert lines == [("to", 2, False), ("bandwidth floor", 2, True)], lines
' "$work/f-$show"
done
png_ok plot-floor-png "$work/f-value/lrpe_rotate-speed-fwd-batch1-head2-dim16-act_none-fp32.png"

# --- report --plots: the report links every table's image, relative to the report ---------
check report-plots 0 "$bin" report --db "$db" --run label:r0 --plots "$work/rp" --out "$work/rep/report.md"
contains report-plots-link "$work/rep/report.md" "- [$speed](../rp/$speed.png)"
(cd "$work/rep" && [ -f "../rp/$speed.png" ] && [ -f "../rp/$memory.png" ]) && echo "ok   report-plots-resolve" || { echo "FAIL report-plots-resolve"; fails=$((fails+1)); }

# --- history: change points, --plot, --fail-on-step, --gpu ---------------------------------
check history-step 0 "$bin" history "$speed" --db "$db" --x 256 --provider tr --gpu h100 --plot "$work/hist/tr.png"
[ "$(grep -c '| \*\*step up' "$work/out")" = 1 ] && echo "ok   history-one-step" || { echo "FAIL history-one-step"; cat "$work/out"; fails=$((fails+1)); }
contains history-step-size "$work/out" "**step up +30.0%**"
contains history-regression "$work/out" "**the latest level is a regression**"
contains history-plot-drawn "$work/err" "tr.png: 1 lines, 1 step markers"
png_ok history-png "$work/hist/tr.png"
check history-outlier 0 "$bin" history "$speed" --db "$db" --x 256 --provider to --gpu h100 --format json
pycheck history-outlier-none 'import json,sys; (s,) = json.load(open(sys.argv[1])); assert [e["step"] for e in s["entries"]] == [""] * 6 and len(s["segments"]) == 1, s' "$work/out"
check history-fail-on-step 1 "$bin" history "$speed" --db "$db" --provider tr --gpu h100 --fail-on-step
check history-no-fail 0 "$bin" history "$speed" --db "$db" --provider to --fail-on-step
check history-per-gpu 0 "$bin" history "$speed" --db "$db" --x 256 --provider tr --format json
pycheck history-per-gpu-series 'import json,sys; s = json.load(open(sys.argv[1])); assert [x["gpu"] for x in s] == ["A100", "H100"], [x["gpu"] for x in s]' "$work/out"
check history-bad-gpu 2 "$bin" history "$speed" --db "$db" --gpu v100
contains history-bad-gpu-msg "$work/err" "gpus: A100 | H100"

# --- no python, no matplotlib: exit 3, one line --------------------------------------------
mkdir -p "$work/nomp/matplotlib"
echo 'raise ImportError("No module named matplotlib")' >"$work/nomp/matplotlib/__init__.py"
printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$work/nomp" "$py" >"$work/fakepy"
chmod +x "$work/fakepy"
OPBENCH_PYTHON=$work/fakepy check no-matplotlib 3 "$bin" plot --db "$db" --out "$work/p4"
contains no-matplotlib-msg "$work/err" "cannot import matplotlib"
[ "$(wc -l <"$work/err")" = 1 ] && echo "ok   no-matplotlib-one-line" || { echo "FAIL no-matplotlib not one line"; cat "$work/err"; fails=$((fails+1)); }
OPBENCH_PYTHON=$work/no-such-python check no-python 3 "$bin" history "$speed" --db "$db" --plot "$work/p5.png"
contains no-python-msg "$work/err" "cannot run python '$work/no-such-python'"

echo "plot_cli_test: $fails failed"
[ "$fails" = 0 ]
