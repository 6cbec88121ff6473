#!/usr/bin/env python3
"""The summary studies/aoti-trace prints: per exporter process, its package's stages (the
.stages.json beside the package) and its traced calls summed by kind.

Usage: summary.py TRACE.jsonl CACHE-DIR"""
import glob
import json
import os
import sys
from collections import defaultdict

KINDS = (("precompiled header", "header.hpp"), ("wrapper compile", ".wrapper.cpp"),
         ("kernel compile", ".kernel.cpp"), ("load check", "LoadLibrary"), ("link", ".o "),
         ("weights", ".weights.S"), ("lowering's own compile", ".cpp "))


def kind(command):
    for name, mark in KINDS:
        if mark in command:
            return name
    return "other: " + os.path.basename(command.split()[0]) if command.split() else "other"


def main():
    calls, settings = defaultdict(lambda: defaultdict(float)), {}
    with open(sys.argv[1]) as f:
        for line in f:
            r = json.loads(line)
            if "settings" in r:
                settings[r["pid"]] = r["settings"]
            else:
                calls[r["pid"]][kind(r["command"])] += r["seconds"]
    for path in sorted(glob.glob(os.path.join(sys.argv[2], "**", "*.stages.json"), recursive=True)):
        stages = json.load(open(path))
        shown = {k: round(v, 1) for k, v in stages.items() if isinstance(v, (int, float))}
        print("%s: %s" % (os.path.relpath(path, sys.argv[2]), shown))
    for pid, kinds in sorted(calls.items()):
        total = sum(kinds.values())
        print("process %d: %.1f s in subprocesses: %s" % (pid, total, ", ".join(
            "%s %.1f s" % kv for kv in sorted(kinds.items(), key=lambda kv: -kv[1]))))
        if pid in settings:
            print("  settings: %s" % settings[pid])


if __name__ == "__main__":
    main()
