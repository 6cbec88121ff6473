#!/usr/bin/env python3
"""opbench's torch baselines against the reference code under triton.testing.do_bench.

The reference code of every op is baselines/python/opbench_ops.py (the PyTorch code the
reference benchmarks timed; docs/baselines.md). This script times those functions with
triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"), eagerly and compiled
with torch.compile (static shapes, fullgraph), and sets the times beside opbench's own columns
of the same cells:

  opbench column        do_bench of
  torch                 the eager reference (bwd: torch.autograd.grad of a graph built once,
                        retain_graph=True, as opbench's eager provider times it)
  torch_compile         torch.compile(reference) (fwd only: the exported bwd package computes
                        dx from x and do in one graph, which torch.compile of a function
                        calling autograd.grad does not)
  torch_naive           the eager naive tpa_decode
  memory, torch         torch.cuda.max_memory_allocated over one eager call, inputs included

Two ways to run it, on a GPU host with torch and triton:

  compare_do_bench.py run --opbench BIN --dir DIR [--ready FILE]
      the whole comparison in one sitting: writes one config per op holding a few
      representative cells (CELLS below) to DIR/configs, exports their torch_compile packages
      (`opbench compile`, all ops at once) while torch.compile warms up the same cells here,
      sweeps them (`opbench sweep`, DIR/opbench.db), then times the reference code and prints
      the table (also DIR/compare.md, and opbench's report DIR/opbench.md). --ready FILE:
      opbench is being built meanwhile; start the exports once FILE holds "ok" (anything else
      in it: the build failed, stop).
  compare_do_bench.py compare --db DB [--run ID]... [--min-x N] [--out FILE]
      the reference timings for the points of stored runs (default: every run in DB), e.g. a
      full sweep of configs/act.yaml.

Each row: opbench's value, do_bench's, opbench / do_bench - 1, and the host's time to issue
one call of the Python code (Python, dispatch and launches, the GPU not waited for). Where
that is near do_bench's time, do_bench timed the host, not the GPU (small calls): such rows
are marked host-bound and left out of the summary's largest difference per column. The
summary also gives the harness's correctness check of every point of the runs (non-torch
providers against torch).
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "baselines", "python"))

# The representative cells, one config per op (the reference documents' shapes), the most
# wanted first: they are swept and timed in this order. Every op of `opbench list` has its
# entry (tests/cli/docs_test.py fails when one is missing).
_BIG = {"batch": 12, "head": 12, "dim": 128, "dtype": "bf16", "metric": "speed"}
CELLS = {
    "tpa_decode": {"x": {"m": [32768, 4096, 1024]},
                   "params": {"batch": [8, 32], "head": 32, "rank": 16, "dim": 128,
                              "dtype": "bf16", "mode": "fwd", "metric": ["speed", "memory"]},
                   "providers": {"torch": "to", "torch_compile": "toc", "torch_naive": "ton",
                                 "torch_naive_compile": "tonc"}},
    "act": {"x": {"n": [32768]}, "params": _BIG,
            "variants": [{"act": "silu", "mode": "fwd"}, {"act": "silu", "mode": "bwd"},
                         {"act": "softmax", "act_dim": -1, "mode": "fwd"},
                         {"act": "softmax", "act_dim": -2, "mode": "fwd"}]},
    "lrpe_rotate": {"x": {"n": [32768]}, "params": dict(_BIG, act="none", mode=["fwd", "bwd"])},
    "lrpe_cosine_md": {"x": {"n": [128]}, "params": dict(_BIG, mode="fwd", act="none", md=2),
                       "variants": [{"l": 0}, {"l": 10}]},
    "lrpe_cosine": {"x": {"n": [32768]}, "params": dict(_BIG, mode="fwd"),
                    "variants": [{"act": "none"}, {"act": "softmax", "act_dim": 1}]},
}
DEFAULT_PROVIDERS = {"torch": "to", "torch_compile": "toc"}
# opbench provider -> (opbench_ops variant, compiled?)
REFERENCE = {"torch": ("torch", False), "torch_compile": ("torch", True),
             "torch_naive": ("torch_naive", False)}


DEVICE = "cuda"
# A row whose host time per call is at least this share of do_bench's time is host-bound:
# do_bench then times Python's dispatch, not the GPU work.
HOST_BOUND = 0.8


def setup_torch():
    """torch, with room for one compiled reference per cell (static shapes recompile)."""
    import warnings

    import torch

    warnings.filterwarnings("ignore", message=".*[Oo]nline softmax.*")
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 256)
    return torch


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- configs

def config_text(op, cell):
    """The cell as an opbench config (JSON is valid YAML)."""
    cfg = {"op": op, "x": cell["x"], "params": cell["params"],
           "providers": cell.get("providers", DEFAULT_PROVIDERS)}
    if "variants" in cell:
        cfg["variants"] = cell["variants"]
    return f"# representative cells of {op} for studies/compare_do_bench.py\n" + \
        json.dumps(cfg, indent=1) + "\n"


def write_configs(folder):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for op, cell in CELLS.items():
        path = os.path.join(folder, f"{op}.yaml")
        with open(path, "w") as f:
            f.write(config_text(op, cell))
        paths.append(path)
    return paths


def expand(values):
    return values if isinstance(values, list) else [values]


def cell_points(op, cell):
    """Every (provider, params) speed/memory point the config of `cell` holds, as the sweep
    stores them (params with every axis, x included)."""
    (x_name, xs), = cell["x"].items()
    base = [{}]
    for k, v in cell["params"].items():
        base = [dict(b, **{k: val}) for b in base for val in expand(v)]
    rows = []
    for b in base:
        for variant in cell.get("variants", [{}]):
            for x in xs:
                rows.append(dict(b, **variant, **{x_name: x}))
    return [(prov, dict(p, op=op)) for p in rows for prov in cell.get("providers", DEFAULT_PROVIDERS)]


# ----------------------------------------------------------------------------- reference timing

OPBENCH = "opbench"  # the binary (--opbench)
BUILT = None  # run --ready: a callable saying whether the binary is built yet
_SPECS = {}


def input_specs(op, params):
    """The op's inputs at a point, as its OpSpec declares them (`opbench list --format json
    --op OP --at ...`): [{name, dtype: storage|fp32, fill, shape}] in call order."""
    at = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in ("metric",))
    if (op, at) not in _SPECS:
        while BUILT is not None and not BUILT():
            time.sleep(1)
        out = subprocess.run([OPBENCH, "list", "--format", "json", "--device", "cpu",
                              "--op", op, "--at", at], check=True, capture_output=True, text=True)
        _SPECS[(op, at)] = json.loads(out.stdout)["ops"][0]["inputs"]
    return _SPECS[(op, at)]


class Reference:
    """The reference code of one point on the GPU: its inputs and the call do_bench times."""

    def __init__(self, op, provider, params):
        import torch
        import opbench_ops as ops

        self.torch, self.ops = torch, ops
        self.op, self.provider, self.params = op, provider, params
        self.variant, self.compiled = REFERENCE[provider]
        self.mode = params.get("mode", "fwd")
        self.dtype = ops.torch_dtype(params["dtype"])

    def inputs(self):
        """Inputs made on the device (values do not change these ops' time): normal tensors
        in the storage dtype, theta float32 in (0.05, 1.55) as the harness makes them."""
        torch = self.torch
        g = torch.Generator(device=DEVICE).manual_seed(0)
        out = []
        for inp in input_specs(self.op, self.params):
            shape = inp["shape"]
            if inp["dtype"] == "fp32":
                out.append(torch.rand(shape, device=DEVICE, generator=g) * 1.5 + 0.05)
            else:
                out.append(torch.randn(shape, device=DEVICE, generator=g, dtype=self.dtype))
        return out

    def key(self):
        """What the compiled code depends on: the shapes and the bound non-tensor axes."""
        p = self.params
        shapes = tuple(tuple(i["shape"]) for i in input_specs(self.op, p))
        return (self.op, self.variant, p["dtype"], shapes, p.get("act", "none"),
                int(p.get("act_dim", -1)), int(p.get("offset", 0)), int(p.get("md", 1)),
                int(p.get("l", 0)))

    def function(self, compiled_fns):
        fwd = self.ops.forward_function(self.op, self.variant, self.params)
        if self.compiled:
            key = self.key()
            if key not in compiled_fns:
                compiled_fns[key] = self.torch.compile(fwd, dynamic=False, fullgraph=True)
            return compiled_fns[key]
        return fwd

    def call(self, compiled_fns):
        """(the timed call, what it keeps alive)."""
        torch = self.torch
        fn, args = self.function(compiled_fns), self.inputs()
        if self.mode == "fwd":
            return (lambda: fn(*args)), args
        if self.compiled:
            raise ValueError("no torch.compile reference for bwd")
        leaf = args[0].detach().requires_grad_(True)
        o = fn(leaf, *args[1:])
        grad_out = torch.randn_like(o)
        return (lambda: torch.autograd.grad(o, leaf, grad_out, retain_graph=True)), \
            [leaf, o, grad_out] + args

    def measure(self, metric, compiled_fns):
        """(do_bench's median in ms or the peak in MiB, the host's ms per call or None)."""
        torch = self.torch
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        fn, keep = self.call(compiled_fns)
        host = None
        if metric == "speed":
            value = do_bench(fn)
            host = host_ms(fn)
        else:
            fn()  # compiles, warms up
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            out = fn()
            torch.cuda.synchronize()
            value = torch.cuda.max_memory_allocated() / 2 ** 20
            del out
        del fn, keep
        return value, host


def do_bench(fn):
    import triton.testing

    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def host_ms(fn, calls=10):
    """The host's time to issue one call (Python, dispatch, launches), the GPU not waited
    for: where it is near do_bench's time, do_bench timed the host, not the GPU."""
    import torch

    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = (time.perf_counter() - t0) / calls * 1e3
    torch.cuda.synchronize()
    return host


def comparable(provider, params, metric):
    if provider not in REFERENCE:
        return False
    if metric == "memory":
        return provider == "torch"
    return not (REFERENCE[provider][1] and params.get("mode", "fwd") == "bwd")


def warm_compiled(points, compiled_fns, between=lambda: None):
    """torch.compile every compiled reference of `points` now (one call each), so the timing
    later measures the compiled code only; `between` runs before each."""
    for provider, params in points:
        if provider != "torch_compile" or params["metric"] != "speed" or \
                not comparable(provider, params, "speed"):
            continue
        between()
        t0 = time.time()
        ref = Reference(params["op"], provider, params)
        try:
            fn, keep = ref.call(compiled_fns)
            fn()
            ref.torch.cuda.synchronize()
            del fn, keep
        except Exception as e:  # noqa: BLE001 -- its row will say so
            log(f"torch.compile {params['op']} {short(params)} failed: {type(e).__name__}: {e}")
        ref.torch.cuda.empty_cache()
        log(f"torch.compile {params['op']} {short(params)}: {time.time() - t0:.1f} s")


def short(params):
    skip = {"op", "dtype", "metric", "head", "dim", "rank", "dim_v", "theta_dim", "offset"}
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in skip)


# ----------------------------------------------------------------------------- the comparison

def stored_points(db, runs, min_x):
    con = sqlite3.connect(db)
    if not runs:
        runs = [r for (r,) in con.execute("SELECT id FROM runs ORDER BY id")]
    rows = []
    for run in runs:
        rows += con.execute(
            "SELECT run_id, title, op, params, x_value, provider, metric, value, error, rel_err, "
            "check_failed FROM points WHERE run_id=? ORDER BY seq", (run,)).fetchall()
    con.close()
    if not rows:
        sys.exit(f"compare_do_bench: no points in runs {runs} of {db}")
    points = []
    for run, title, op, params, x, provider, metric, value, error, rel_err, failed in rows:
        if x < min_x:
            continue
        p = json.loads(params)
        p["op"] = op
        points.append({"run": run, "title": title, "op": op, "params": p, "x": x,
                       "provider": provider, "metric": metric, "value": value, "error": error,
                       "rel_err": rel_err, "check_failed": failed})
    return points


def check_summary(points):
    """The harness's check of every point against torch, in a few lines."""
    checked = [p for p in points if p["rel_err"] is not None and p["rel_err"] >= 0]
    failed = [p for p in points if p["check_failed"]]
    lines = [f"harness check against torch: {len(checked)} points checked, {len(failed)} over "
             f"tolerance" + (f" (largest relative error {max(p['rel_err'] for p in checked):.2e}"
                             f")" if checked else "")]
    lines += [f"  over tolerance: {p['title']} x={p['x']} {p['provider']} rel err "
              f"{p['rel_err']:.3g}" for p in failed]
    return lines


def fmt(v, metric):
    return "—" if v is None else (f"{v:.4f} ms" if metric == "speed" else f"{v:.2f} MiB")


def compare(points, out_path, compiled_fns):
    """Times the reference of every comparable point, printing each table row as it comes
    (compiled_fns: the torch.compile'd references so far, by Reference.key)."""
    lines = ["| table | x | column | opbench | reference code, do_bench | difference | "
             "host per call |", "|---|---|---|---|---|---|---|"]
    worst = {}
    out = open(out_path, "w") if out_path else None

    def emit(line):
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    for line in lines:
        emit(line)
    for pt in points:
        if not comparable(pt["provider"], pt["params"], pt["metric"]):
            continue
        column = pt["provider"] + (" (memory)" if pt["metric"] == "memory" else "")
        row = f"| {pt['title']} | {pt['x']} | {column} | "
        if pt["error"]:
            emit(row + f"failed: {pt['error']} | | | |")
            continue
        ref = Reference(pt["op"], pt["provider"], pt["params"])
        try:
            value, host = ref.measure(pt["metric"], compiled_fns)
        except Exception as e:  # noqa: BLE001 -- one row, the comparison goes on
            first = str(e).splitlines()[0][:120] if str(e) else ""
            emit(row + f"{fmt(pt['value'], pt['metric'])} | error: {type(e).__name__}: "
                 f"{first} | | |")
            continue
        if not value > 0:
            emit(row + f"{fmt(pt['value'], pt['metric'])} | {value} | | |")
            continue
        diff = pt["value"] / value - 1
        bound = host is not None and host >= HOST_BOUND * value
        if not bound:
            worst[column] = max(worst.get(column, 0.0), abs(diff))
        emit(row + f"{fmt(pt['value'], pt['metric'])} | {fmt(value, pt['metric'])} | "
             f"{diff * 100:+.1f}% | " + ("" if host is None else
                                         f"{host:.4f} ms{' (host-bound)' if bound else ''}") +
             " |")
    summary = ["", f"largest |opbench / do_bench - 1| per column, host-bound rows (host per "
               f"call >= {HOST_BOUND:g} x do_bench) left out: " +
               ", ".join(f"{k} {v * 100:.1f}%" for k, v in worst.items())]
    summary += check_summary(points)
    failed = [p for p in points if p["check_failed"]]
    for line in summary:
        emit(line)
    if out:
        out.close()
    return 0 if not failed else 1


# ----------------------------------------------------------------------------- run

def opbench(binary, *args):
    log("opbench " + " ".join(args))
    return subprocess.run([binary, *args], check=False).returncode


class Exports:
    """`opbench compile` of every config at once, started as soon as opbench is built: the
    --ready file exists (absent: not yet; "ok": built; anything else: the build failed)."""

    def __init__(self, binary, configs, ready):
        self.binary, self.configs, self.ready, self.procs = binary, configs, ready, None

    def built(self):
        if not self.ready:
            return True
        if not os.path.exists(self.ready):
            return False
        with open(self.ready) as f:
            state = f.read().strip()
        if state == "":
            return False
        if state != "ok":
            sys.exit(f"compare_do_bench: opbench was not built ({self.ready}: {state})")
        return True

    def poll(self):
        if self.procs is None and self.built():
            jobs = max(1, (os.cpu_count() or 2) // len(self.configs))
            log(f"exporting the torch_compile packages of {len(self.configs)} configs")
            self.procs = [subprocess.Popen([self.binary, "compile", c, "--jobs", str(jobs)])
                          for c in self.configs]

    def wait(self):
        while self.procs is None:
            time.sleep(1)
            self.poll()
        for p in self.procs:
            p.wait()
        log("exports done")


def cmd_run(a):
    global BUILT
    setup_torch()
    configs = write_configs(os.path.join(a.dir, "configs"))
    db = os.path.join(a.dir, "opbench.db")
    exports = Exports(a.opbench, configs, a.ready)
    BUILT = exports.built
    exports.poll()
    points = [pt for op, cell in CELLS.items() for pt in cell_points(op, cell)]
    compiled_fns = {}
    warm_compiled(points, compiled_fns, exports.poll)
    exports.wait()
    for c in configs:
        op = os.path.basename(c)[:-len(".yaml")]
        opbench(a.opbench, "sweep", c, "--db", db, "--label", f"compare-{op}", "--no-report")
    stored = stored_points(db, [], 0)
    runs = sorted({p["run"] for p in stored})
    opbench(a.opbench, "report", "--db", db, *[w for r in runs for w in ("--run", str(r))],
            "--out", os.path.join(a.dir, "opbench.md"))
    print("\n".join(check_summary(stored)), flush=True)
    return compare(stored, os.path.join(a.dir, "compare.md"), compiled_fns)


def cmd_compare(a):
    setup_torch()
    return compare(stored_points(a.db, a.run, a.min_x), a.out, {})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="write the configs, sweep them with opbench, compare")
    r.add_argument("--opbench", required=True)
    r.add_argument("--dir", required=True)
    r.add_argument("--ready")
    c = sub.add_parser("compare", help="compare the points of stored runs")
    c.add_argument("--db", required=True)
    c.add_argument("--opbench", default="opbench", help="the binary (for the ops' input shapes)")
    c.add_argument("--run", type=int, action="append", default=[])
    c.add_argument("--min-x", type=int, default=0)
    c.add_argument("--out")
    w = sub.add_parser("configs", help="only write the comparison configs to DIR")
    w.add_argument("dir")
    a = ap.parse_args()
    global OPBENCH
    OPBENCH = getattr(a, "opbench", OPBENCH)
    import torch

    if a.cmd != "configs" and not torch.cuda.is_available():
        sys.exit("compare_do_bench: no GPU (the reference timings are do_bench's, on CUDA)")
    if a.cmd == "configs":
        for p in write_configs(a.dir):
            print(p)
        return 0
    return cmd_run(a) if a.cmd == "run" else cmd_compare(a)


if __name__ == "__main__":
    sys.exit(main())
