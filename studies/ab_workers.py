#!/usr/bin/env python3
"""What each worker process brings to an `opbench ab` pair: for every speed point of every
LABEL/base, LABEL/head pair of runs in DB, the log ratio head/base of each round's medians,
grouped by the pair of workers that measured the round (round r: worker r mod N). Prints, per
pair of runs, how much of the spread of the pair-of-workers means is shared by the points of one
pair of workers (a process's constant offset) and how much is the point's own, split by call
length; and the points whose pair-of-workers means all lie on one side of 1.

Usage: ab_workers.py DB [LABEL...]
"""
import json
import math
import sqlite3
import statistics
import sys
from collections import defaultdict


def round_medians(samples, counts):
    out, at = [], 0
    for n in counts:
        part = sorted(samples[at:at + n])
        at += n
        if part:
            out.append(statistics.median(part))
    return out


def speed_points(db, run_id):
    rows = db.execute("select title, x_value, provider, samples, rounds, median from points "
                      "where run_id=? and metric='speed' and samples is not null", (run_id,))
    out = {}
    for title, x, prov, samples, rounds, median in rows:
        s = json.loads(samples)
        counts = json.loads(rounds) if rounds else [len(s)]
        out[(title, x, prov)] = (round_medians(s, counts), median)
    return out


def pairs(db, labels):
    runs = db.execute("select id, label, op, config_path, processes from runs order by id").fetchall()
    by = {(label, cfg): (rid, op, procs) for rid, label, op, cfg, procs in runs}
    for (label, cfg), (rid, op, procs) in sorted(by.items()):
        if not label.endswith("/base"):
            continue
        stem = label[:-len("/base")]
        if labels and stem not in labels:
            continue
        head = by.get((stem + "/head", cfg))
        if head:
            yield stem, op, rid, head[0], procs or 1


def band(ms):
    return "<20us" if ms < 0.02 else "<100us" if ms < 0.1 else "<1ms" if ms < 1 else ">=1ms"


def single_runs(db, labels):
    """Runs of one side (no /base or /head label) spread over several processes."""
    for rid, label, op, procs in db.execute("select id, label, op, processes from runs order by id"):
        if (procs or 1) > 1 and not label.endswith(("/base", "/head")) and (not labels or label in labels):
            yield rid, label, op, procs


def print_process_offsets(per_process, n):
    for (bd, side), ws in sorted(per_process.items()):
        text = []
        for w in range(n):
            v = ws[w]
            se = statistics.stdev(v) / math.sqrt(len(v)) if len(v) > 2 else 0
            text.append("w%d %+.2f%% (t %+.1f)" % (w, 100 * statistics.fmean(v), statistics.fmean(v) / se if se else 0))
        spread = statistics.stdev([statistics.fmean(ws[w]) for w in range(n)]) * 100
        print("  %-7s %s processes (sd %.2f%%): %s" % (bd, side, spread, ", ".join(text)))


def process_deviations(per_process, bd, side, r, n):
    lr = [math.log(v) for v in r]
    centre = statistics.fmean(lr)
    for w in range(n):
        if lr[w::n]:
            per_process[(bd, side)][w].append(statistics.fmean(lr[w::n]) - centre)


def print_offsets_by_provider(points, n):
    """Calls under 100 us: each process's mean deviation by provider and direction (whether an
    offset is the process's, shared by every call it makes, or the call's)."""
    per = defaultdict(lambda: defaultdict(list))
    for (title, _, prov), (rounds, median) in points.items():
        if median < 0.1 and len(rounds) >= n and min(rounds) > 0:
            mode = "bwd" if "bwd" in title else "fwd"
            process_deviations(per, "<100us", "%s %s" % (prov, mode), rounds[:len(rounds) // n * n], n)
    for (_, group), ws in sorted(per.items()):
        means = [100 * statistics.fmean(ws[w]) for w in range(n)]
        print("  <100us  %-12s %3d points: %s" % (group, len(ws[0]), " ".join("%+.2f%%" % m for m in means)))


def singles(db, labels):
    for rid, label, op, n in single_runs(db, labels):
        per_process = defaultdict(lambda: defaultdict(list))
        points = speed_points(db, rid)
        for (rounds, median) in points.values():
            if len(rounds) >= n and median and min(rounds) > 0:
                process_deviations(per_process, band(median), "run", rounds[:len(rounds) // n * n], n)
        print("== %s %s (run %d; %d processes)" % (label, op, rid, n))
        print_process_offsets(per_process, n)
        print_offsets_by_provider(points, n)


def main():
    db = sqlite3.connect(sys.argv[1])
    labels = set(sys.argv[2:])
    singles(db, labels)
    for stem, op, b, h, n in pairs(db, labels):
        base, head = speed_points(db, b), speed_points(db, h)
        per_worker = defaultdict(lambda: defaultdict(list))  # band -> worker -> deviations
        per_process = defaultdict(lambda: defaultdict(list))  # (band, side) -> worker -> deviations
        onesided = []
        for key in sorted(set(base) & set(head)):
            (rb, mb), (rh, _) = base[key], head[key]
            k = min(len(rb), len(rh))
            if k < n or mb is None:
                continue
            if min(rb[:k] + rh[:k]) <= 0:
                continue
            logs = [math.log(rh[i] / rb[i]) for i in range(k)]
            for side, r in (("base", rb), ("head", rh)):
                process_deviations(per_process, band(mb), side, r[:k], n)
            means = []
            for w in range(n):
                mine = logs[w::n]
                if mine:
                    means.append(statistics.fmean(mine))
            if len(means) < 2:
                continue
            m = statistics.fmean(means)
            for w, v in enumerate(means):
                per_worker[band(mb)][w].append(v - m)
            if all(v > 0 for v in means) or all(v < 0 for v in means):
                sd = statistics.stdev(means)
                onesided.append((key, mb, 100 * (math.exp(m) - 1), sd * 100, k))
        print("== %s %s (runs %d, %d; %d workers a side)" % (stem, op, b, h, n))
        for bd in ("<20us", "<100us", "<1ms", ">=1ms"):
            ws = per_worker.get(bd)
            if not ws:
                continue
            pts = len(ws[0])
            shared = []
            for w in range(n):
                v = ws[w]
                t = statistics.fmean(v) / (statistics.stdev(v) / math.sqrt(len(v))) if len(v) > 2 and statistics.stdev(v) > 0 else 0
                shared.append("w%d %+.2f%% (t %+.1f)" % (w, 100 * statistics.fmean(v), t))
            spread = statistics.fmean(abs(x) for w in range(n) for x in ws[w]) * 100
            print("  %-7s %3d points; mean |deviation| %.2f%%; per worker pair: %s" % (bd, pts, spread, ", ".join(shared)))
        print_process_offsets(per_process, n)
        for key, mb, pct, sd, k in sorted(onesided, key=lambda t: -abs(t[2]))[:12]:
            print("  one-sided %-60s %9.4f ms %+5.2f%% (sd of worker means %.2f%%, %d rounds)" % (
                "%s x=%s %s" % key, mb, pct, sd, k))


if __name__ == "__main__":
    main()
