#!/usr/bin/env python3
"""Checks opbench's measurement against triton.testing.do_bench and torch's own memory counter.

For every `torch` point of an act run stored by `opbench sweep configs/act.yaml --providers torch`
with n >= --min-n, it times the same eager call in Python with
triton.testing.do_bench(fn, warmup, rep, return_mode="median") and measures the same call's
peak with torch.cuda.max_memory_allocated (inputs allocated first, peak stats reset, one call),
then prints a markdown table of both and the differences.

The calls mirror baselines/eager/act.cpp op for op: relu/sigmoid/silu in the storage dtype,
softmax with dtype=float32 then cast back; backward is torch.autograd.grad(o, x, do,
retain_graph=True) on a graph built once outside the timed region.

Usage: compare_do_bench.py --db results/opbench.db --run ID [--min-n 4096] [--out FILE]
"""
import argparse
import json
import sqlite3
import sys

import torch
import torch.nn.functional as F
import triton.testing

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def act(x, a, dim):
    if a == "none":
        return x
    if a == "relu":
        return torch.relu(x)
    if a == "sigmoid":
        return torch.sigmoid(x)
    if a == "silu":
        return F.silu(x)
    if a == "softmax":
        return torch.softmax(x, dim, dtype=torch.float32).to(x.dtype)
    raise ValueError(a)


def make_call(p):
    shape = (p["batch"], p["head"], p["n"], p["dim"])
    x = torch.randn(shape, device="cuda", dtype=DTYPES[p["dtype"]])
    if p["mode"] == "fwd":
        return (lambda: act(x, p["act"], p["act_dim"])), [x]
    leaf = x.detach().requires_grad_()
    o = act(leaf, p["act"], p["act_dim"])
    do = torch.randn_like(o)
    return (lambda: torch.autograd.grad([o], [leaf], [do], retain_graph=True)), [x, leaf, o, do]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--run", type=int, required=True)
    ap.add_argument("--min-n", type=int, default=4096)
    ap.add_argument("--out")
    args = ap.parse_args()
    con = sqlite3.connect(args.db)
    rows = con.execute(
        "SELECT title, params, x_value, metric, value, error FROM points WHERE run_id=? AND provider='torch' "
        "AND x_value>=? ORDER BY seq", (args.run, args.min_n)).fetchall()
    if not rows:
        sys.exit(f"no torch points with n >= {args.min_n} in run {args.run}")
    lines = ["| table | n | opbench | reference | difference |", "|---|---|---|---|---|"]
    worst_speed, mem_equal, mem_total = 0.0, 0, 0
    for title, params, n, metric, value, error in rows:
        p = json.loads(params)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        fn, keep = make_call(p)
        torch.cuda.synchronize()
        if metric == "speed":
            ref = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")
            diff = (value - ref) / ref * 100.0
            worst_speed = max(worst_speed, abs(diff))
            lines.append(f"| {title} | {n} | {value:.6f} ms | do_bench {ref:.6f} ms | {diff:+.2f}% |")
        else:
            torch.cuda.reset_peak_memory_stats()
            out = fn()
            torch.cuda.synchronize()
            ref = torch.cuda.max_memory_allocated() / 2**20
            del out
            mem_total += 1
            mem_equal += abs(ref - value) < 1e-9
            lines.append(f"| {title} | {n} | {value:.6f} MiB | max_memory_allocated {ref:.6f} MiB | "
                         f"{'equal' if abs(ref - value) < 1e-9 else f'{value - ref:+.6f} MiB'} |")
        del fn, keep
    summary = (f"\nspeed: largest |opbench - do_bench| / do_bench = {worst_speed:.2f}% over "
               f"{len(rows) - mem_total} points; memory: {mem_equal}/{mem_total} points equal\n")
    text = "\n".join(lines) + "\n" + summary
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
