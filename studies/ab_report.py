#!/usr/bin/env python3
"""The summary of studies/ab-bench: verdicts of each ab pair and of the plain diffs across two
chips, the planted kernel's share of SLOWER points, the calibration of each device, and each
command's wall time against one sweep's.

Usage: ab_report.py OPBENCH DB LOGDIR [THRESHOLDS]   (THRESHOLDS: percents, default 1,1.5,2,3,5)
"""
import json
import os
import subprocess
import sys
from collections import Counter

PLANTED = os.environ.get("AB_PLANTED", "cuda_b")


def run(*args):
    return subprocess.run(args, check=False, capture_output=True, text=True)


def runs_by_label(opbench, db):
    got = run(opbench, "runs", "--db", db, "--format", "json")
    out = {}
    for r in json.loads(got.stdout or "[]"):
        out[(r["label"], os.path.basename(r["config"]))] = r
    return out


def diff(opbench, db, base, head, threshold):
    got = run(opbench, "diff", str(base), str(head), "--db", db, "--format", "json", "--threshold", str(threshold))
    if got.returncode not in (0, 1):
        sys.exit("ab_report: diff %s %s failed: %s" % (base, head, got.stderr.strip()))
    return json.loads(got.stdout)


def tally(points, provider=None, metric="speed"):
    return Counter(p["verdict"] for p in points
                   if p["metric"] == metric and (provider is None or p["provider"] == provider))


def line(name, counts):
    return "%-28s %s" % (name, ", ".join("%s %d" % kv for kv in sorted(counts.items())) or "-")


def pairs(runs, configs, base_label, head_label):
    for c in configs:
        b, h = runs.get((base_label, c)), runs.get((head_label, c))
        if b and h:
            yield c, b["id"], h["id"]


def judged(opbench, db, runs, configs, base_label, head_label, threshold):
    """Every speed point of the pairs, judged at `threshold`, with its config."""
    out = []
    for c, b, h in pairs(runs, configs, base_label, head_label):
        for p in diff(opbench, db, b, h, threshold)["points"]:
            p["config"] = c
            out.append(p)
    return out


def report_pair(opbench, db, runs, configs, name, base_label, head_label, thresholds, planted=False):
    print("== %s: %s -> %s" % (name, base_label, head_label))
    for t in thresholds:
        pts = judged(opbench, db, runs, configs, base_label, head_label, t)
        if not pts:
            print("   no runs")
            return
        allc = tally(pts)
        text = line("threshold %g%%" % t, allc)
        if planted:
            mine = tally(pts, PLANTED)
            n = sum(mine.values())
            others = sum(1 for p in pts if p["metric"] == "speed" and p["provider"] != PLANTED and p["verdict"] == "SLOWER")
            text += "; %s SLOWER %d of %d (%.0f%%), SLOWER elsewhere %d" % (
                PLANTED, mine.get("SLOWER", 0), n, 100.0 * mine.get("SLOWER", 0) / max(n, 1), others)
        print("   " + text)
    pts = judged(opbench, db, runs, configs, base_label, head_label, thresholds[-1])
    for p in pts:
        if p["verdict"] in ("SLOWER", "FASTER", "DEVICE") and not planted:
            print("     %s %s %s %s=%s %s: %.4g -> %.4g ms%s" % (p["verdict"], p["config"], p["title"], p["x_name"], p["x"],
                  p["provider"], p["base"], p["head"], " (" + p["reason"] + ")" if p.get("reason") else ""))
    ratios = sorted(p["ratio"] for p in pts if p["metric"] == "speed" and p["ratio"] and p["provider"] != PLANTED)
    if ratios:
        k = len(ratios)
        print("   speed ratios (not %s): min %.4f p1 %.4f median %.4f p99 %.4f max %.4f over %d" % (
            PLANTED, ratios[0], ratios[k // 100], ratios[k // 2], ratios[min(k - 1, k * 99 // 100)], ratios[-1], k))


def report_devices(runs):
    print("== calibration of each device (run one0/one1 of act)")
    for label in ("one0", "one1"):
        r = runs.get((label, "act.yaml"))
        for d in (r or {}).get("devices", []):
            cal = d.get("calibration") or {}
            figures, samples = cal.get("figures", []), cal.get("samples", [])
            med = []
            for i, f in enumerate(figures):
                v = sorted(s[i] for s in samples if s[i] is not None)
                if v:
                    med.append("%s %.4g" % (f, v[len(v) // 2]))
            ident = d.get("identity") or {}
            print("   %s %s %s: %d passes: %s" % (label, d["device"], ident.get("uuid", "?"), len(samples), ", ".join(med)))


def report_times(logdir):
    times = {}
    path = os.path.join(logdir, "times.txt")
    if os.path.exists(path):
        for row in open(path):
            name, secs, rc = row.split()
            times[name] = (float(secs), int(rc))
    one = times.get("one0", (0, 0))[0]
    print("== wall time (one sweep on cuda:0: %.1f s)" % one)
    for name, (secs, rc) in times.items():
        print("   %-8s %7.1f s  %.2fx  exit %d" % (name, secs, secs / one if one else 0, rc))


def main():
    opbench, db, logdir = sys.argv[1:4]
    thresholds = [float(t) for t in (sys.argv[4] if len(sys.argv) > 4 else "1,1.5,2,3,5").split(",")]
    runs = runs_by_label(opbench, db)
    configs = sorted({c for (_, c) in runs})
    for name in ("aa0", "aa1", "aaall"):
        report_pair(opbench, db, runs, configs, "ab A/A " + name, name + "/base", name + "/head", thresholds)
    report_pair(opbench, db, runs, configs, "ab planted 3%", "p3/base", "p3/head", thresholds, planted=True)
    report_pair(opbench, db, runs, configs, "plain diff cuda:0 -> cuda:1", "one0", "one1", [5])
    report_pair(opbench, db, runs, configs, "plain diff, cuda_b planted 10% on cuda:1", "one0", "one1p10", [5],
                planted=True)
    report_devices(runs)
    report_times(logdir)


if __name__ == "__main__":
    main()
