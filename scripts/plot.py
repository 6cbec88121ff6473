#!/usr/bin/env python3
"""Draws opbench's plots with matplotlib from the JSON the opbench binary writes.

Usage: plot.py DATA.json OUT

DATA.json "kind" decides what is drawn:
  tables   (opbench plot, report --plots): one PNG per table into the folder OUT, named by
           each table's "file"; x axis log2, one line per entry of "lines" (floors dashed).
           OUT/plots.json then lists every file written with the lines its figure holds, read
           back from the figure (label, number of points, dashed or not).
  history  (opbench history --plot): one PNG, the file OUT: each series' values across runs
           (x: the runs in time order, labelled by commit), its fitted levels as a thin step
           line, and a marker at every step (triangle up / down, cross for a failure).

Prints one line per file written ("wrote FILE: N lines"). Exit status: 0 ok, 2 bad data,
3 matplotlib missing or a file that cannot be written (one line on stderr).
"""
import json
import os
import sys


def fail(code, message):
    print(message, file=sys.stderr)
    sys.exit(code)


try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    fail(3, f"{sys.executable} cannot import matplotlib ({e}); install it into that python "
            "(scripts/bootstrap does for .venv) or point OPBENCH_PYTHON at one that has it")


def figure_lines(ax):
    """What the figure holds, read back from its artists (not from the input)."""
    out = []
    for line in ax.get_lines():
        label = line.get_label()
        if label.startswith("_"):  # matplotlib's unnamed helpers (level steps, markers)
            continue
        out.append({"label": label, "points": len(line.get_xdata()), "dashed": line.get_linestyle() in ("--", "dashed")})
    return out


def wide_range(values):
    pos = [v for v in values if v > 0]
    return len(pos) > 1 and max(pos) / min(pos) > 20


def draw_table(t, folder):
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
    ys = []
    run_colour = {}  # run -> the colour of its first line
    floors = sum(1 for line in t["lines"] if line["floor"])
    for line in t["lines"]:
        style = {"marker": "o", "markersize": 3}
        if line["floor"]:  # dashed: gray when alone, else in the colour of its run's lines
            style = {"linestyle": "--", "linewidth": 1.2, "color": "gray"}
            if floors > 1:
                style["color"] = run_colour.get(line["run"], "gray")
        (drawn,) = ax.plot(line["x"], line["y"], label=line["label"], **style)
        if not line["floor"]:
            run_colour.setdefault(line["run"], drawn.get_color())
        ys += line["y"]
    ax.set_xscale("log", base=2)
    xs = sorted({x for line in t["lines"] for x in line["x"]})
    if 0 < len(xs) <= 16:  # the measured sizes themselves, as numbers
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:g}" for x in xs], fontsize=8)
        ax.minorticks_off()
    if wide_range(ys):
        ax.set_yscale("log")
    ax.set_xlabel(t["x_name"])
    ax.set_ylabel(t["y_label"])
    ax.set_title(t["title"], fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    if t["lines"]:
        ax.legend(fontsize=8)
    path = os.path.join(folder, t["file"])
    fig.savefig(path, format="png")
    lines = figure_lines(ax)
    plt.close(fig)
    return {"title": t["title"], "file": t["file"], "lines": lines}


def plot_tables(data, folder):
    os.makedirs(folder, exist_ok=True)
    index = []
    for t in data["tables"]:
        entry = draw_table(t, folder)
        index.append(entry)
        print(f"wrote {os.path.join(folder, t['file'])}: {len(entry['lines'])} lines")
    with open(os.path.join(folder, "plots.json"), "w") as f:
        json.dump({"show": data["show"], "plots": index}, f, indent=1)
        f.write("\n")


STEP_MARKERS = {"up": ("^", "red"), "down": ("v", "green"), "error": ("x", "black"), "fixed": ("o", "blue")}


def draw_series(ax, s):
    xs = [p["pos"] for p in s["points"] if p["value"] is not None]
    ys = [p["value"] for p in s["points"] if p["value"] is not None]
    (line,) = ax.plot(xs, ys, marker="o", markersize=3, linewidth=1, label=s["name"])
    lx = [p["pos"] for p in s["points"] if p["level"] is not None]
    ly = [p["level"] for p in s["points"] if p["level"] is not None]
    ax.step(lx, ly, where="mid", color=line.get_color(), alpha=0.5, linewidth=2.5)
    value_at = {p["pos"]: p["value"] for p in s["points"]}
    for st in s["steps"]:
        marker, color = STEP_MARKERS.get(st["step"], ("o", "gray"))
        y = value_at.get(st["pos"])
        if y is None:  # a failure: mark it at the last level drawn
            y = ly[-1] if ly else 0
        ax.plot([st["pos"]], [y], marker=marker, color=color, markersize=11, linestyle="none")
        if st["change"] is not None:
            ax.annotate(f"{st['change'] * 100:+.1f}%", (st["pos"], y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    return ys


def plot_history(data, path):
    fig, ax = plt.subplots(figsize=(max(8, min(24, 0.35 * len(data["runs"]) + 4)), 5), dpi=100)
    ys, steps = [], 0
    for s in data["series"]:
        ys += draw_series(ax, s)
        steps += len(s["steps"])
    ax.set_xticks(range(len(data["runs"])))
    ax.set_xticklabels([r["tick"] for r in data["runs"]], rotation=60, ha="right", fontsize=7)
    if wide_range(ys):
        ax.set_yscale("log")
    ax.set_xlabel("commit (runs in time order)")
    ax.set_ylabel(data["unit"] or "value")
    ax.set_title(f"{data['title']} (threshold {data['threshold_pct']:g}%)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fig.savefig(path, format="png")
    markers = sum(1 for l in ax.get_lines() if l.get_label().startswith("_") and l.get_marker() in ("^", "v", "x", "o")
                  and len(l.get_xdata()) == 1 and l.get_linestyle() in ("None", "none", ""))
    print(f"wrote {path}: {len(figure_lines(ax))} lines, {markers} step markers")
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        fail(2, "usage: plot.py DATA.json OUT")
    try:
        with open(sys.argv[1]) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        fail(2, f"{sys.argv[1]}: cannot read the plot data: {e}")
    try:
        if data.get("kind") == "tables":
            plot_tables(data, sys.argv[2])
        elif data.get("kind") == "history":
            plot_history(data, sys.argv[2])
        else:
            fail(2, f"{sys.argv[1]}: unknown kind {data.get('kind')!r} (tables or history)")
    except OSError as e:
        fail(3, f"cannot write {e.filename or sys.argv[2]}: {e.strerror or e}")


if __name__ == "__main__":
    main()
