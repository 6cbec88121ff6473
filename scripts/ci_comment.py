#!/usr/bin/env python3
"""Writes the pull-request comment of an opbench CI run: at most --limit characters (60,000 by
default; GitHub refuses comments over 65,536), whatever the size of the diff.

Usage:
  ci_comment.py --out FILE [--diff DIFF.json] [--plots DIR] [--title TEXT] [--note TEXT]...
                [--details FILE] [--limit N]

  --diff DIFF.json  `opbench diff --format json` of the baseline run against the new one;
                    without it the comment says that nothing was compared (--note says why)
  --plots DIR       a folder `opbench plot` wrote (its plots.json): the plot files listed by
                    name, without links (they travel as the job's artifacts)
  --title TEXT      what was measured, e.g. "configs/act.yaml on NVIDIA H100 80GB HBM3"
  --note TEXT       a line to add under the verdict (repeatable)
  --details FILE    markdown appended in a closed <details> block while room remains (the new
                    run's report)

The comment, in order: the verdict line (always the first line), the notes, whether both sides
shared each chip (a paired diff) and how many points the change of device explains, the worst 20
regressions as a table, all of them inside <details> (as many as fit, then the count of the
rest), every other change (ERROR, DEVICE, UNSURE, FASTER, FIXED) inside <details>, the summary per
provider, the plot list, then --details. Later parts are shortened or dropped first; the verdict
and the regression count never are.
"""
import argparse
import json
import os
import sys

SHORT = 20  # regressions shown in the open table; all of them (as many as fit) folded below
ORDER = {"SLOWER": 0, "ERROR": 1, "DEVICE": 2, "UNSURE": 3, "FASTER": 4, "FIXED": 5, "SAME": 6}


def change(p):
    r = p.get("ratio")
    return "-" if r is None else f"{(r - 1) * 100:+.1f}%"


def value(p, side):
    if p.get(f"{side}_error"):
        return "error"
    v = p.get(side)
    return "-" if v is None else f"{v:.6g}"


def provider(p):
    a, b = p.get("base_label") or p.get("base_provider"), p.get("label") or p.get("provider")
    return b if a == b or not a else f"{a} -> {b}"


def row(p, verdict=False):
    cells = [f"`{p['title']}`", f"{p['x_name']}={p['x']}", provider(p), value(p, "base"), value(p, "head"), change(p)]
    if verdict:
        cells.append(p["verdict"])
    return "| " + " | ".join(cells) + " |\n"


HEAD = "| table | x | provider | base | head | change |\n|---|---:|---|---:|---:|---:|\n"
HEAD_V = "| table | x | provider | base | head | change | verdict |\n|---|---:|---|---:|---:|---:|---|\n"


def rows_within(rows, head, budget, rest_line):
    """The table head and as many rows as fit in budget, then a line counting the rest."""
    out, n = head, 0
    for r in rows:
        if len(out) + len(r) + len(rest_line(len(rows))) > budget:
            break
        out += r
        n += 1
    if n < len(rows):
        out += rest_line(len(rows) - n)
    return out, n


def verdict_line(d, title):
    where = f" — {title}" if title else ""
    if d is None:
        return f"**opbench: nothing compared**{where}"
    n = d.get("regressions", 0)
    thr = d.get("threshold_pct", 5)
    what = f"**opbench: {n} regression{'s' if n != 1 else ''}**" if n else "**opbench: no regressions**"
    b, h = d["base"], d["head"]
    runs = f"run {h['id']}{' (' + h['label'] + ')' if h.get('label') else ''} against baseline run {b['id']}" + (
        f" ({b['label']})" if b.get("label") else "")
    return f"{what} beyond {thr:g}%{where}: {runs}, {len(d['points'])} points compared"


def pairing_lines(d):
    """What the comparison held fixed: the chip (a paired run of `opbench ab`), or the device change."""
    out = ""
    if d.get("paired"):
        b, h = d["base"], d["head"]
        out += (f"Both sides shared each chip: base commit `{(b.get('commit') or '?')[:12]}` and head commit "
                f"`{(h.get('commit') or '?')[:12]}` were measured together by `opbench ab` on the same GPU, their "
                "rounds interleaved, each point judged round against round.\n\n")
    n = d.get("device_verdicts", 0)
    if n:
        out += (f"{n} point{'s' if n != 1 else ''} DEVICE: the two runs ran on different physical GPUs and the "
                "calibration shift between them explains the change (not counted as regressions).\n\n")
    return out


def plot_list(folder):
    try:
        with open(os.path.join(folder, "plots.json")) as f:
            plots = json.load(f)["plots"]
    except (OSError, ValueError, KeyError):
        return ""
    items = "".join(f"- {p['file']} ({len(p['lines'])} lines)\n" for p in plots)
    return f"<details><summary>Plots: {len(plots)} files in the job's artifacts</summary>\n\n{items}\n</details>\n\n"


def summary_table(d):
    if not d or not d.get("summary"):
        return ""
    out = "| provider | points | geomean head/base | regressions |\n|---|---:|---:|---:|\n"
    for s in d["summary"]:
        g = s.get("geomean_ratio")
        out += f"| {s['provider']} | {s['points']} | {'-' if g is None else f'{g:.3f}'} | {s.get('regressions', 0)} |\n"
    return f"<details><summary>Summary per provider</summary>\n\n{out}\n</details>\n\n"


def demote_headings(text):
    """Headings two levels down (# -> ###), outside fenced blocks: the report sits under the comment."""
    out, fence = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            line = "##" + line
        out.append(line)
    return "\n".join(out)


def compose(d, title, notes, plots, details, limit):
    first = verdict_line(d, title) + "\n\n"
    for n in notes:
        first += n + "\n\n"
    if d is not None:
        first += pairing_lines(d)
        for w in d.get("warnings", []):
            first += f"> warning: {w}\n"
        if d.get("warnings"):
            first += "\n"
    parts = [first]
    room = limit - len(first) - 200  # the closing lines' share
    if d is not None:
        pts = d["points"]
        regs = sorted((p for p in pts if p.get("regression")),
                      key=lambda p: (ORDER.get(p["verdict"], 9), -(p.get("ratio") or 0)))
        if regs:
            rows = [row(p) for p in regs]
            table, shown = rows_within(rows[:SHORT], HEAD, max(room // 4, 2000), lambda k: "")
            if len(regs) > shown:
                table += f"\n... and {len(regs) - shown} more (below)\n"
            parts.append(f"### Regressions ({len(regs)})\n\n{table}\n")
            if len(regs) > shown:  # the rest folded, as many as fit
                head, tail = f"<details><summary>All {len(regs)} regressions</summary>\n\n", "\n</details>\n\n"
                table, _ = rows_within(rows, HEAD, max(room // 2 - len(parts[-1]) - len(head) - len(tail), 1000),
                                       lambda k: f"\n... and {k} more (the job's summary lists every one)\n")
                parts.append(head + table + tail)
            room -= sum(len(p) for p in parts[1:])
        others = sorted((p for p in pts if not p.get("regression") and p["verdict"] != "SAME"),
                        key=lambda p: (ORDER.get(p["verdict"], 9), -abs((p.get("ratio") or 1) - 1)))
        if others:
            counts = {}
            for p in others:
                counts[p["verdict"]] = counts.get(p["verdict"], 0) + 1
            same = sum(1 for p in pts if p["verdict"] == "SAME")
            head = f"<details><summary>Other changes: {', '.join(f'{v} {k}' for k, v in sorted(counts.items(), key=lambda kv: ORDER.get(kv[0], 9)))} ({same} same)</summary>\n\n"
            tail = "\n</details>\n\n"
            table, _ = rows_within([row(p, True) for p in others], HEAD_V, max(room - len(head) - len(tail) - 3000, 500),
                                   lambda k: f"\n... and {k} more\n")
            parts.append(head + table + tail)
            room -= len(parts[-1])
        s = summary_table(d)
        if len(s) < room:
            parts.append(s)
            room -= len(s)
    if plots:
        p = plot_list(plots)
        if len(p) < room:
            parts.append(p)
            room -= len(p)
    if details:
        with open(details) as f:
            text = demote_headings(f.read())
        head, tail = "<details><summary>The new run's report</summary>\n\n", "\n</details>\n"
        cut = "\n... (cut: the job's summary holds the whole report)\n"
        if len(head) + len(text) + len(tail) > room:
            keep = room - len(head) - len(tail) - len(cut)
            text = text[:max(keep, 0)]
            if text.count("```") % 2:  # never leave a fence open
                text += "\n```"
            text += cut
        if room > len(head) + len(tail) + len(cut) + 200:
            parts.append(head + text + tail)
    while len(parts) > 1 and len("".join(parts)) > limit:  # the budgets above are estimates
        parts.pop()
    return "".join(parts)[:limit]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--diff")
    ap.add_argument("--plots")
    ap.add_argument("--title", default="")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--details")
    ap.add_argument("--limit", type=int, default=60000)
    a = ap.parse_args()
    if a.limit < 5000:
        ap.error("--limit must be at least 5000")
    d = None
    if a.diff:
        try:
            with open(a.diff) as f:
                d = json.load(f)
            d["points"]
        except (OSError, ValueError, KeyError) as e:
            print(f"ci_comment: {a.diff}: not an opbench diff (--format json): {e}", file=sys.stderr)
            return 2
    text = compose(d, a.title, a.note, a.plots, a.details, a.limit)
    parent = os.path.dirname(a.out)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
