#!/usr/bin/env python3
"""The table of a kernel change against its base: a kernel benchmark's CSVs from two builds run in
turn (tests/gpu/ab_kernels.sh), compared row by row.

Usage: ab_table.py DIR [--min-pct P]
  DIR/base*.csv and DIR/head*.csv: one CSV per round and side, as a benchmark writes it.
A row is matched across files by its key, every column before its time column (median_ms, else
ms). Per side its time is the median over the rounds, its spread (max - min) / median. A row is
`faster` or `slower` when head / base moves by more than P percent (default 1) and by more than
twice the larger spread of its sides, else `same`; `only base` / `only head` when one side lacks
it. Prints a markdown table and a summary line: the counts and the geometric mean of head / base
over the rows both sides have. Standard library only.
Exit 0; 2 on bad input (no CSV on a side, no time column, headers that differ, a time that is not
a positive number), with a one-line reason naming the file.
"""
import csv
import glob
import math
import os
import statistics
import sys

TIME_COLUMNS = ("median_ms", "ms")


class BadInput(Exception):
    pass


def read_csv(path):
    """The header, the index of the time column, and {key: time} of one CSV."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise BadInput(f"{path}: empty")
    header = rows[0]
    col = next((header.index(c) for c in TIME_COLUMNS if c in header), None)
    if col is None:
        raise BadInput(f"{path}: no time column ({' or '.join(TIME_COLUMNS)}) in the header")
    times = {}
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise BadInput(f"{path}:{n}: {len(row)} fields, the header has {len(header)}")
        try:
            t = float(row[col])
        except ValueError:
            t = -1.0
        if not t > 0 or math.isinf(t):
            raise BadInput(f"{path}:{n}: time '{row[col]}' is not a positive number")
        times[tuple(row[:col])] = t
    return header[:col], times


def read_side(paths):
    """The key columns and {key: [time per round]} of one side's CSVs (one per round), its keys
    in the order the CSVs first give them."""
    keys, rounds = None, {}
    for p in paths:
        k, times = read_csv(p)
        if keys is not None and k != keys:
            raise BadInput(f"{p}: key columns {k} differ from {keys}")
        keys = k
        for key, t in times.items():
            rounds.setdefault(key, []).append(t)
    return keys, rounds


def verdict(base, head, min_pct):
    """(ratio, word) of one row from its rounds on each side."""
    mb, mh = statistics.median(base), statistics.median(head)
    spread = max((max(v) - min(v)) / statistics.median(v) for v in (base, head))
    ratio = mh / mb
    change = abs(ratio - 1)
    if change * 100 > min_pct and change > 2 * spread:
        return ratio, "faster" if ratio < 1 else "slower"
    return ratio, "same"


def table(keys, base, head, order, min_pct):
    """The markdown lines of the comparison and its summary."""
    lines = ["| " + " | ".join(keys) + " | base ms | head ms | head/base | rounds | verdict |",
             "|" + "---|" * len(keys) + "---:|---:|---:|---|---|"]
    counts, logs = {}, []
    for key in order:
        b, h = base.get(key), head.get(key)
        if b and h:
            ratio, word = verdict(b, h, min_pct)
            logs.append(math.log(ratio))
            cells = [f"{statistics.median(b):.5f}", f"{statistics.median(h):.5f}", f"{ratio:.4f}",
                     f"{len(b)} / {len(h)}", word]
        else:
            word = "only base" if b else "only head"
            t = statistics.median(b or h)
            cells = [f"{t:.5f}" if b else "", "" if b else f"{t:.5f}", "", "", word]
        counts[word] = counts.get(word, 0) + 1
        lines.append("| " + " | ".join(list(key) + cells) + " |")
    geo = f"{math.exp(sum(logs) / len(logs)):.4f}" if logs else "-"
    summary = ", ".join(f"{counts[w]} {w}" for w in ("slower", "faster", "same", "only base", "only head")
                        if w in counts)
    lines += ["", f"{len(order)} rows: {summary}; geomean head/base {geo} (threshold {min_pct:g}% and "
                  "twice the rounds' spread)"]
    return lines


def main(argv):
    args, min_pct = [], 1.0
    it = iter(argv)
    for a in it:
        if a == "--min-pct":
            try:
                min_pct = float(next(it, ""))
            except ValueError:
                raise BadInput("--min-pct takes a number")
        else:
            args.append(a)
    if len(args) != 1 or not os.path.isdir(args[0]):
        raise BadInput("usage: ab_table.py DIR [--min-pct P] (DIR holds base*.csv and head*.csv)")
    sides = {}
    for side in ("base", "head"):
        paths = sorted(glob.glob(os.path.join(args[0], side + "*.csv")))
        if not paths:
            raise BadInput(f"{args[0]}: no {side}*.csv")
        sides[side] = read_side(paths)
    (kb, base), (kh, head) = sides["base"], sides["head"]
    if kb != kh:
        raise BadInput(f"{args[0]}: key columns differ between base ({kb}) and head ({kh})")
    order = list(base) + [k for k in head if k not in base]
    print("\n".join(table(kb, base, head, order, min_pct)))


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (BadInput, OSError) as e:
        print(f"ab_table: {e}", file=sys.stderr)
        sys.exit(2)
