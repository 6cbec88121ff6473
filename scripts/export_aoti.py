#!/usr/bin/env python3
"""Exports one opbench op (its torch reference in baselines/python/opbench_ops.py) with
torch.export and compiles it ahead of time with AOTInductor into a .pt2 package that the C++
providers torch_compile / torch_naive_compile (baselines/compiled) load and run.

Usage: export_aoti.py REQUEST.json   (or - for stdin)

The request (JSON object), written by the C++ side from the op's OpSpec:
  op, variant             the function to export: the op's @op_function of that variant
                          ("torch", or "torch_naive" for a naive form)
  provider                the compiled provider (for messages and metadata)
  mode, modes             "fwd"|"bwd", and the modes the op has
  dtype, device           "bf16"|"fp16"|"fp32", "cpu"|"cuda"|"cuda:N"
  params                  every other axis of the point (batch, head, dim, act, act_dim, ...)
  x_name, x_min, x_max    the swept axis and the range one package serves; x_min == x_max
                          exports a static package for that value
  x_values                the table's x values (x_min and x_max among them)
  args                    the function's tensors in call order (the op's inputs, then grad_out
                          for bwd), each {name, dtype, fill, shapes: {"<x>": [sizes]} for every
                          x value, dynamic: [dims whose size changes with x]}
  x_example               optional: the x value of the example inputs
  output                  the package path (.pt2); written atomically (temp file + rename)
  static_output           optional: a path with "{x}"; when the dynamic export fails the
                          package is exported static at the example x to this path instead
  metadata                optional: strings stored in the package metadata

The package metadata (AOTIModelPackageLoader::get_metadata) records opbench_dynamic (1|0),
opbench_x_name, opbench_x_min, opbench_x_max, opbench_trace (export | make_fx: how the graph
was captured), opbench_dynamic_error (why a static fallback happened) and the request's.

Beside each package, <package>.stages.json says where its time went, in seconds: isa_s (the
vector ISA checks before the export, share_isa_checks), export_s
(torch.export, or make_fx then torch.export), inductor_s (aoti_compile_and_package: lowering,
code generation, the kernels' compiles and the package), of which cpp_s (AotCodeCompiler.compile:
the C++ wrapper's and kernels' compile and link) and triton_s (async_compile.wait: waiting on the
Triton compiles and autotuning), check_s (running the package against eager), and metrics (every
timer torch's compile_times keeps, summed over this package).

OPBENCH_AOTI_CONFIGS, a JSON object of Inductor settings, is passed over torch's defaults to
every package it builds (docs/baselines.md, "The compiler's settings").

The last line printed is "opbench-export: ok ..." (exit 0) or "opbench-export: error: ..."
(exit 1, one line). The dynamic axis: every dynamic dimension gets a torch.export.Dim, one per
distinct way a size changes with x (an op whose token count is l + n^md gets a Dim for it);
the exported graph recomputes what it needs from the sizes it is given.
"""
import json
import math
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "baselines", "python"))

PREFIX = "opbench-export:"


class ExportError(Exception):
    pass


def one_line(e):
    """The first meaningful line of an exception, with its type."""
    text = str(e).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    msg = f"{type(e).__name__}: {line}" if line else type(e).__name__
    return msg[:500]


def log(msg):
    print(f"{PREFIX} {msg}", flush=True)


def read_request(arg):
    text = sys.stdin.read() if arg == "-" else open(arg, encoding="utf-8").read()
    try:
        req = json.loads(text)
    except json.JSONDecodeError as e:
        raise ExportError(f"request is not JSON: {e}") from None
    if not isinstance(req, dict):
        raise ExportError("request must be a JSON object")
    for k in ("op", "variant", "provider", "mode", "modes", "dtype", "device", "params", "x_name",
              "x_min", "x_max", "x_values", "args", "output"):
        if k not in req:
            raise ExportError(f"request lacks '{k}'")
    if not str(req["output"]).endswith(".pt2"):
        raise ExportError("output must end with .pt2")
    x_min, x_max = int(req["x_min"]), int(req["x_max"])
    if x_min < 1 or x_max < x_min:
        raise ExportError(f"bad x range [{x_min}, {x_max}]")
    for a in req["args"]:
        missing = [str(x) for x in req["x_values"] if str(x) not in a.get("shapes", {})]
        if missing:
            raise ExportError(f"argument {a.get('name')!r} has no shape at x = {', '.join(missing)}")
    return req


def Fn(fn):
    """A module around a function (torch.export exports modules)."""
    import torch

    class FnModule(torch.nn.Module):
        def forward(self, *args):
            return fn(*args)

    return FnModule()


def share_isa_checks(torch, start=True):
    """Inductor checks each vector ISA the CPU reports (AVX2, AVX-512 and its extensions, AMX) by
    compiling a probe and loading it in a new Python process that imports torch: eleven checks,
    one after another, in every process that compiles a package's C++, and 9-12 s each on a host
    whose torch import is slow (docs/baselines.md, "Call by call"). Here each check's answer is
    kept in Inductor's cache folder under a key of what decides it (torch, the compiler, the
    probe's source and flags, the CPU's flags), taken by one process at a time (a lock, so the
    exporters of one `opbench compile` wait for the first instead of repeating it), and the ISAs'
    chains of checks run side by side (unless not `start`). The answers are the checks' own: the
    same ISA is picked (tests/unit/isa_checks_test.py)."""
    try:
        import fcntl
        import hashlib
        import threading
        from torch._inductor import cpu_vec_isa
        from torch._inductor.cpp_builder import get_cpp_compiler
        from torch._inductor.runtime.cache_dir_utils import cache_dir
        original = cpu_vec_isa.VecISA.check_build
        folder = os.path.join(cache_dir(), "opbench-isa-checks")
        compiler = get_cpp_compiler()
        with open("/proc/cpuinfo") as f:
            cpu = next((line for line in f if line.startswith("flags")), "")
    except Exception:  # noqa: BLE001 -- another torch or platform: its own checks, unshared
        return

    def check_build(isa, code):
        decided = "\n".join([torch.__version__, sys.executable, compiler, isa._arch_flags, code, cpu])
        path = os.path.join(folder, hashlib.sha256(decided.encode()).hexdigest()[:40] + ".json")
        os.makedirs(folder, exist_ok=True)
        with open(path + ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                with open(path) as f:
                    return bool(json.load(f)["ok"])
            except (OSError, ValueError, KeyError, TypeError):
                pass
            ok = bool(original(isa, code))
            tmp = f"{path}.tmp-{os.getpid()}-{threading.get_ident()}"
            with open(tmp, "w") as f:
                json.dump({"ok": ok}, f)
            os.replace(tmp, path)
            return ok

    cpu_vec_isa.VecISA.check_build = check_build
    if not start:
        return
    try:
        offered = cpu_vec_isa.x86_isa_checker()
        isas = [i for i in cpu_vec_isa.supported_vec_isa_list if all(f in offered for f in str(i).split())]
    except Exception:  # noqa: BLE001 -- not x86: the checks run when Inductor asks
        return
    threads = [threading.Thread(target=bool, args=(isa,)) for isa in isas]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class Exporter:
    def __init__(self, req):
        import torch
        import opbench_ops as ops

        self.torch, self.ops, self.req = torch, ops, req
        t0 = time.time()
        share_isa_checks(torch)
        self.isa_s = round(time.time() - t0, 4)  # into the first package's stages
        self.op, self.mode, self.variant = req["op"], req["mode"], req["variant"]
        self.modes = tuple(req["modes"])
        self.args = req["args"]
        self.dtype = ops.torch_dtype(req["dtype"])
        self.device = torch.device(req["device"])
        if self.device.type == "cuda":
            if not torch.cuda.is_available():
                raise ExportError("device cuda requested but this python's torch sees no GPU")
            if self.device.index is not None:
                torch.cuda.set_device(self.device)
        elif self.device.type != "cpu":
            raise ExportError(f"unsupported device '{req['device']}' (cpu or cuda)")
        self.params = {k: v for k, v in req["params"].items()}
        self.x_name = req["x_name"]
        self.x_min, self.x_max = int(req["x_min"]), int(req["x_max"])
        self.x_values = sorted({int(v) for v in req["x_values"]})
        self.params.pop(self.x_name, None)
        # Builds the function now: unknown op / mode fail here, before any tracing.
        self.fn_at(self.x_min)

    def fn_at(self, x):
        """The function of the point at x (x bound too: it may be a non-shape axis)."""
        return self.ops.function(self.op, self.variant, self.mode, self.point(x), self.modes)

    def point(self, x):
        p = dict(self.params)
        p[self.x_name] = int(x)
        return p

    def shapes(self, x):
        """Shapes of every argument at x, as the request gives them."""
        return [tuple(a["shapes"][str(x)]) for a in self.args]

    def example(self, x, seed=0):
        g = self.torch.Generator(device="cpu").manual_seed(seed)
        return tuple(self.ops.make_tensor(shape, self.ops.torch_dtype(a["dtype"]), a.get("fill", "normal"), g)
                     .to(self.device) for a, shape in zip(self.args, self.shapes(x)))

    def pick_example(self):
        """The example x: the request's, else the middle of the table's x values in range
        whose dynamic sizes are all >= 2 (sizes 0 and 1 are specialised by export)."""
        if "x_example" in self.req:
            return int(self.req["x_example"])
        values = [v for v in self.x_values if self.x_min <= v <= self.x_max]

        def ok(x):
            s = self.shapes(x)
            return all(s[i][j] >= 2 for i, a in enumerate(self.args) for j in a.get("dynamic", []))

        good = [v for v in values if ok(v)]
        if not good:
            raise ExportError(f"no {self.x_name} value of the table gives dynamic sizes >= 2 for the example")
        return good[len(good) // 2]

    def dynamic_shapes(self, x_example):
        """One Dim per distinct way a dynamic size changes over the table's x values (sizes
        that change alike share it); the other sizes stay static."""
        from torch.export import Dim

        values = [v for v in self.x_values if self.x_min <= v <= self.x_max]
        per_x = {v: self.shapes(v) for v in values}
        dims, spec = {}, []
        for i, a in enumerate(self.args):
            entry = {}
            for j in a.get("dynamic", []):
                sig = tuple(per_x[v][i][j] for v in values)
                if sig not in dims:
                    name = self.x_name if sig == tuple(values) else f"{self.x_name}_size{len(dims)}"
                    dims[sig] = Dim(name, min=min(sig), max=max(sig))
                entry[j] = dims[sig]
            spec.append(entry or None)
        if not dims:
            raise ExportError(f"no tensor size depends on {self.x_name}: "
                              "one package cannot serve several of its values")
        return tuple(spec)

    def trace(self, fn, args, dynamic_shapes):
        """torch.export of the function; when that fails (torch.export's non-strict tracing
        of torch.autograd.grad loses tensors that backward formulas save from the forward's
        outputs: exp, sigmoid, relu, softmax), capture the aten graph with make_fx first
        (it traces below autograd) and export that graph."""
        torch = self.torch

        def export(f):
            # Fn's forward takes *args: its one parameter is the tuple. Guards that sympy cannot
            # prove over the Dim's range (lrpe_cosine_md's grid side n = round((T - l)^(1/md))
            # >= 2 ...) become runtime asserts in the package instead of export errors.
            return torch.export.export(
                Fn(f), args, dynamic_shapes=None if dynamic_shapes is None else {"args": dynamic_shapes},
                prefer_deferred_runtime_asserts_over_guards=True)

        try:
            return export(fn), "export", ""
        except Exception as e:  # noqa: BLE001 -- any tracing failure: try the other route
            first = one_line(e)
        from torch.fx.experimental import _config as fx_config
        from torch.fx.experimental.proxy_tensor import make_fx

        # Without duck sizing, equal example sizes do not become one symbol.
        with fx_config.patch(use_duck_shape=False):
            gm = make_fx(fn, tracing_mode="symbolic" if dynamic_shapes else "real")(*args)
        ep = export(gm)
        return ep, "make_fx", first

    def compile(self, ep, path, metadata):
        """AOTInductor to a temporary package, checked, then renamed into place; where the
        time went (seconds: inductor_s, cpp_s, triton_s, check_s, metrics)."""
        torch = self.torch
        from torch._dynamo.utils import compilation_time_metrics as timers
        base, _ = os.path.splitext(path)
        tmp = f"{base}.tmp-{os.getpid()}.pt2"
        before = {k: sum(v) for k, v in timers.items()}
        try:
            t0 = time.time()
            configs = json.loads(os.environ.get("OPBENCH_AOTI_CONFIGS") or "{}")
            configs["aot_inductor.metadata"] = {k: str(v) for k, v in metadata.items()}
            torch._inductor.aoti_compile_and_package(ep, package_path=tmp, inductor_configs=configs)
            t1 = time.time()
            self.verify(tmp, metadata)
            t2 = time.time()
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        spent = {k: round(sum(v) - before.get(k, 0.0), 4) for k, v in timers.items()}
        spent = {k: v for k, v in spent.items() if v > 0}
        return {"inductor_s": round(t1 - t0, 4), "cpp_s": spent.get("AotCodeCompiler.compile", 0.0),
                "triton_s": spent.get("async_compile.wait", 0.0), "check_s": round(t2 - t1, 4),
                "metrics": spent}

    def verify(self, package, metadata):
        """Runs the package against the eager function (at the example, and at x_min and
        x_max's smaller neighbour when dynamic), so a wrong package is never cached."""
        torch = self.torch
        if self.device.type == "cuda" and not os.environ.get("OPBENCH_EXPORT_VERIFY_CUDA"):
            # torch 2.11's Python loader crashes on a CUDA package in the exporting process
            # (_package.py _load_aoti); the C++ loader runs it, and the harness checks every
            # point's output against the eager provider.
            return
        model = torch._inductor.aoti_load_package(package)
        xs = [int(metadata["opbench_x_example"])]
        if metadata["opbench_dynamic"] == "1":
            xs.append(self.x_min)
        tol = 1e-4 if self.dtype == torch.float32 else 3e-2
        for x in xs:
            args = self.example(x, seed=7)
            want = self.fn_at(x)(*args)
            got = model(*[a.clone() for a in args])
            got = got[0] if isinstance(got, (list, tuple)) else got
            if tuple(got.shape) != tuple(want.shape):
                raise ExportError(f"package output shape {tuple(got.shape)} != eager "
                                  f"{tuple(want.shape)} at {self.x_name}={x}")
            w, g = want.double(), got.double()
            err = ((g - w).norm() / w.norm().clamp_min(1e-30)).item()
            if not err <= tol:
                raise ExportError(f"package disagrees with eager at {self.x_name}={x}: "
                                  f"relative error {err:.3g} > {tol}")

    def export(self, x_example, path, dynamic, metadata):
        args = self.example(x_example)
        t0 = time.time()
        ep, how, why = self.trace(self.fn_at(x_example), args,
                                  self.dynamic_shapes(x_example) if dynamic else None)
        if why:
            log(f"torch.export failed ({why}); captured with make_fx instead")
        t1 = time.time()
        meta = dict(metadata)
        meta.update({
            "opbench_dynamic": "1" if dynamic else "0",
            "opbench_x_name": self.x_name,
            "opbench_x_min": str(self.x_min if dynamic else x_example),
            "opbench_x_max": str(self.x_max if dynamic else x_example),
            "opbench_x_example": str(x_example),
            "opbench_trace": how,
        })
        stages = self.compile(ep, path, meta)
        t2 = time.time()
        stages["export_s"] = round(t1 - t0, 4)
        stages["isa_s"], self.isa_s = self.isa_s, 0.0
        base, _ = os.path.splitext(path)
        tmp = f"{base}.stages.json.tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(stages, f, indent=1, sort_keys=True)
        os.replace(tmp, f"{base}.stages.json")
        log(f"{'dynamic' if dynamic else 'static'} {self.x_name}="
            f"{f'{self.x_min}..{self.x_max}' if dynamic else x_example} traced by {how} in "
            f"{t1 - t0:.1f} s, compiled in {t2 - t1:.1f} s (AOTInductor {stages['inductor_s']:.1f} s: "
            f"C++ {stages['cpp_s']:.1f} s, Triton {stages['triton_s']:.1f} s; check {stages['check_s']:.1f} s)")
        return meta

    def run(self):
        out = self.req["output"]
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        metadata = {str(k): str(v) for k, v in self.req.get("metadata", {}).items()}
        if self.x_min == self.x_max:
            self.export(self.x_min, out, False, metadata)
            return f"static {self.x_name}={self.x_min} path={out}"
        x_example = self.pick_example()
        try:
            self.export(x_example, out, True, metadata)
            return f"dynamic {self.x_name}={self.x_min}..{self.x_max} path={out}"
        except Exception as e:  # noqa: BLE001
            why = one_line(e)
            static = self.req.get("static_output")
            if not static:
                raise
            log(f"dynamic export failed ({why}); static package at {self.x_name}={x_example}")
            if os.environ.get("OPBENCH_EXPORT_DEBUG"):
                traceback.print_exc()
            path = static.replace("{x}", str(x_example))
            metadata["opbench_dynamic_error"] = why
            self.export(x_example, path, False, metadata)
            return f"static {self.x_name}={x_example} path={path} (dynamic failed: {why})"


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    t0 = time.time()
    try:
        req = read_request(argv[1])
        result = Exporter(req).run()
    except (ExportError, ValueError, KeyError) as e:
        sys.stdout.flush()
        msg = str(e) if isinstance(e, ExportError) else one_line(e)
        print(f"{PREFIX} error: {msg}", file=sys.stderr, flush=True)
        return 1
    except Exception as e:  # noqa: BLE001 -- one line for the harness, the traceback above it
        traceback.print_exc()
        sys.stdout.flush()
        print(f"{PREFIX} error: {one_line(e)}", file=sys.stderr, flush=True)
        return 1
    log(f"ok {result} seconds={time.time() - t0:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
