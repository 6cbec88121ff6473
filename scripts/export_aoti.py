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
                          exports a package static in x for that value
  x_step                  optional: a power of two dividing every x value the package serves
  x_values                the tables' x values (x_min and x_max among them)
  shared                  optional: the op's shared axes the package serves besides x (tables
                          differing in these alone share it), each {name, min, max, step,
                          values}; min == max: static in that axis
  args                    the function's tensors in call order (the op's inputs, then grad_out
                          for bwd), each {name, dtype, fill, shapes: {"<point>": [sizes]} for
                          every point, dynamic: [dims whose size changes]}; a point's label is
                          its x, then each shared axis's value in `shared` order ("256,8")
  x_example               optional: the x value of the example inputs
  output                  the package path (.pt2); written atomically (temp file + rename)
  static_output           optional: a path with "{x}"; when the dynamic export fails the
                          package is exported static at the example x to this path instead
  metadata                optional: strings stored in the package metadata

The package metadata (AOTIModelPackageLoader::get_metadata) records opbench_dynamic (1|0),
opbench_x_name, opbench_x_min, opbench_x_max, opbench_x_step, opbench_shared (the shared axes'
names, comma separated), opbench_shared_<axis>_min, _max and _step per shared axis, opbench_trace (export | make_fx: how the graph
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
(exit 1, one line). The dynamic axes (x, and each shared axis of several values): every dynamic
dimension gets a torch.export.Dim, one per axis and distinct way a size changes with it (an op
whose token count is l + n^md gets a Dim for it); a size that is the axis's value times a
constant, on an axis with a step, is declared that multiple of a Dim (m = 256 * m_by256), which
lets Inductor tile it evenly; when that export fails, plain Dims are tried; a size changing with
two axes at once is an error; the exported graph recomputes what it needs from the sizes it is given. The package is
checked against eager at the example point, and at x_min with every shared axis at its minimum
and at its maximum.
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
    for ax in req.get("shared", []):
        if not all(k in ax for k in ("name", "min", "max", "values")) or not ax["values"]:
            raise ExportError(f"shared axis {ax!r} lacks name, min, max or values")
        if int(ax["min"]) < 1 or int(ax["max"]) < int(ax["min"]):
            raise ExportError(f"bad {ax['name']} range [{ax['min']}, {ax['max']}]")
    labels = [label(p) for p in all_points(req)]
    for a in req["args"]:
        missing = [lb for lb in labels if lb not in a.get("shapes", {})]
        if missing:
            raise ExportError(f"argument {a.get('name')!r} has no shape at point {', '.join(missing)}")
    return req


def all_points(req):
    """Every point of the request: (x, *shared values) for each x and shared combination."""
    points = [(int(x),) for x in req["x_values"]]
    for ax in req.get("shared", []):
        points = [p + (int(v),) for p in points for v in ax["values"]]
    return points


def label(point):
    """A point's label in the request's shapes: "256", "256,8"."""
    return ",".join(str(v) for v in point)


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
        # The axes a package may serve several values of: x first, then the shared axes, each
        # (name, min, max, values in range).
        self.axes = [(self.x_name, self.x_min, self.x_max,
                      [v for v in self.x_values if self.x_min <= v <= self.x_max])]
        # Each axis's step: a power of two dividing all its values (1: none declared).
        self.steps = [int(req.get("x_step", 1))]
        for ax in req.get("shared", []):
            lo, hi = int(ax["min"]), int(ax["max"])
            values = sorted({int(v) for v in ax["values"] if lo <= int(v) <= hi})
            self.axes.append((ax["name"], lo, hi, values))
            self.steps.append(int(ax.get("step", 1)))
        for (name, _, _, values), step in zip(self.axes, self.steps):
            if step < 1 or step & (step - 1) or any(v % step for v in values):
                raise ExportError(f"step {step} of {name} is not a power of two dividing its values")
        for name, *_ in self.axes:
            self.params.pop(name, None)
        self.dynamic = any(lo < hi for _, lo, hi, _ in self.axes)
        # Builds the function now: unknown op / mode fail here, before any tracing.
        self.fn_at(self.lowest())

    def lowest(self):
        return tuple(lo for _, lo, _, _ in self.axes)

    def fn_at(self, pt):
        """The function of a point (x and the shared axes bound too: they may be non-shape axes)."""
        return self.ops.function(self.op, self.variant, self.mode, self.point(pt), self.modes)

    def point(self, pt):
        p = dict(self.params)
        for (name, *_), v in zip(self.axes, pt):
            p[name] = int(v)
        return p

    def words(self, pt):
        """x=256 batch=8"""
        return " ".join(f"{name}={v}" for (name, *_), v in zip(self.axes, pt))

    def shapes(self, pt):
        """Shapes of every argument at a point, as the request gives them."""
        return [tuple(a["shapes"][label(pt)]) for a in self.args]

    def example(self, pt, seed=0):
        g = self.torch.Generator(device="cpu").manual_seed(seed)
        return tuple(self.ops.make_tensor(shape, self.ops.torch_dtype(a["dtype"]), a.get("fill", "normal"), g)
                     .to(self.device) for a, shape in zip(self.args, self.shapes(pt)))

    def pick_example(self):
        """The example point: per axis, the request's x_example for x, else the middle of the
        axis's values whose dynamic sizes are all >= 2 (the other axes at their largest value;
        sizes 0 and 1 are specialised by export)."""
        top = [values[-1] for *_, values in self.axes]
        pt = list(top)
        for k, (name, _, _, values) in enumerate(self.axes):
            if k == 0 and "x_example" in self.req:
                pt[0] = int(self.req["x_example"])
                continue

            def ok(v):
                s = self.shapes(tuple(top[:k] + [v] + top[k + 1:]))
                return all(s[i][j] >= 2 for i, a in enumerate(self.args) for j in a.get("dynamic", []))

            good = [v for v in values if ok(v)]
            if not good:
                raise ExportError(f"no {name} value of the table gives dynamic sizes >= 2 for the example")
            pt[k] = good[len(good) // 2]
        return tuple(pt)

    def along(self, k, pt):
        """The points along axis k through pt: its values, the other axes as in pt."""
        return [pt[:k] + (v,) + pt[k + 1:] for v in self.axes[k][3]]

    def depends(self, i, j, pt):
        """The axes whose values change size j of argument i (the others held at pt)."""
        out = []
        for k, (_, lo, hi, _) in enumerate(self.axes):
            if lo < hi and len({self.shapes(q)[i][j] for q in self.along(k, pt)}) > 1:
                out.append(k)
        return out

    def dynamic_shapes(self, pt, stepped=True):
        """One Dim per axis and distinct way a dynamic size changes along it (sizes that change
        alike share it); the other sizes stay static. With `stepped`, a size that is c times the
        axis's value, on an axis of step s > 1, is (c * s) times a Dim."""
        from torch.export import Dim

        dims, spec = {}, []
        for i, a in enumerate(self.args):
            entry = {}
            for j in a.get("dynamic", []):
                deps = self.depends(i, j, pt)
                if len(deps) > 1:
                    raise ExportError(f"size {j} of {a['name']} changes with "
                                      f"{' and '.join(self.axes[k][0] for k in deps)} at once")
                if not deps:
                    continue
                k = deps[0]
                name, values = self.axes[k][0], self.axes[k][3]
                sig = tuple(self.shapes(q)[i][j] for q in self.along(k, pt))
                if (k, sig) not in dims:
                    dim_name = name if sig == tuple(values) else f"{name}_size{len(dims)}"
                    step, c = self.steps[k], sig[0] // values[0]
                    if stepped and step > 1 and c >= 1 and sig == tuple(c * v for v in values):
                        dims[(k, sig)] = Dim(f"{dim_name}_by{c * step}", min=min(values) // step,
                                             max=max(values) // step) * (c * step)
                    else:
                        dims[(k, sig)] = Dim(dim_name, min=min(sig), max=max(sig))
                entry[j] = dims[(k, sig)]
            spec.append(entry or None)
        for k, (name, lo, hi, _) in enumerate(self.axes):
            if lo < hi and not any(dk == k for dk, _ in dims):
                raise ExportError(f"no tensor size depends on {name}: "
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

    def compile(self, ep, path, metadata, example):
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
            self.verify(tmp, example, metadata["opbench_dynamic"] == "1")
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

    def checked_points(self, example, dynamic):
        """Where a package is checked against eager: the example, and when dynamic x_min with
        every shared axis at its minimum and at its maximum."""
        points = [example]
        if dynamic:
            x = self.x_min if self.x_min < self.x_max else example[0]
            for end in (1, 2):
                pt = (x,) + tuple(ax[end] if ax[1] < ax[2] else example[k + 1]
                                  for k, ax in enumerate(self.axes[1:]))
                if pt not in points:
                    points.append(pt)
        return points

    def verify(self, package, example, dynamic):
        """Runs the package against the eager function (checked_points), so a wrong package is
        never cached."""
        torch = self.torch
        if self.device.type == "cuda" and not os.environ.get("OPBENCH_EXPORT_VERIFY_CUDA"):
            # torch 2.11's Python loader crashes on a CUDA package in the exporting process
            # (_package.py _load_aoti); the C++ loader runs it, and the harness checks every
            # point's output against the eager provider.
            return
        model = torch._inductor.aoti_load_package(package)
        tol = 1e-4 if self.dtype == torch.float32 else 3e-2
        for pt in self.checked_points(example, dynamic):
            args = self.example(pt, seed=7)
            want = self.fn_at(pt)(*args)
            got = model(*[a.clone() for a in args])
            got = got[0] if isinstance(got, (list, tuple)) else got
            if tuple(got.shape) != tuple(want.shape):
                raise ExportError(f"package output shape {tuple(got.shape)} != eager "
                                  f"{tuple(want.shape)} at {self.words(pt)}")
            w, g = want.double(), got.double()
            err = ((g - w).norm() / w.norm().clamp_min(1e-30)).item()
            if not err <= tol:
                raise ExportError(f"package disagrees with eager at {self.words(pt)}: "
                                  f"relative error {err:.3g} > {tol}")

    def ranges(self, example, dynamic, stepped):
        """The package's metadata of what it serves: each axis's range (the example's value
        alone when static) and, for a stepped export, its step."""
        meta = {"opbench_dynamic": "1" if dynamic else "0", "opbench_x_name": self.x_name}
        shared = [ax[0] for ax in self.axes[1:]]
        if shared:
            meta["opbench_shared"] = ",".join(shared)
        for k, (name, lo, hi, _) in enumerate(self.axes):
            prefix = "opbench_x" if k == 0 else f"opbench_shared_{name}"
            meta[f"{prefix}_min"] = str(lo if dynamic else example[k])
            meta[f"{prefix}_max"] = str(hi if dynamic else example[k])
            if dynamic and stepped and lo < hi and self.steps[k] > 1:
                meta[f"{prefix}_step"] = str(self.steps[k])
        meta["opbench_x_example"] = str(example[0])
        return meta

    def served(self, example, dynamic):
        """m=256..32768 batch=8..32, or m=256 batch=8"""
        return " ".join(f"{name}={lo}..{hi}" if dynamic and lo < hi else f"{name}={example[k]}"
                        for k, (name, lo, hi, _) in enumerate(self.axes))

    def export(self, example, path, dynamic, metadata, stepped=True):
        args = self.example(example)
        t0 = time.time()
        ep, how, why = self.trace(self.fn_at(example), args,
                                  self.dynamic_shapes(example, stepped) if dynamic else None)
        if why:
            log(f"torch.export failed ({why}); captured with make_fx instead")
        t1 = time.time()
        meta = dict(metadata)
        meta.update(self.ranges(example, dynamic, stepped))
        meta["opbench_trace"] = how
        stages = self.compile(ep, path, meta, example)
        t2 = time.time()
        stages["export_s"] = round(t1 - t0, 4)
        stages["isa_s"], self.isa_s = self.isa_s, 0.0
        base, _ = os.path.splitext(path)
        tmp = f"{base}.stages.json.tmp-{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(stages, f, indent=1, sort_keys=True)
        os.replace(tmp, f"{base}.stages.json")
        log(f"{'dynamic' if dynamic else 'static'} {self.served(example, dynamic)} traced by {how} in "
            f"{t1 - t0:.1f} s, compiled in {t2 - t1:.1f} s (AOTInductor {stages['inductor_s']:.1f} s: "
            f"C++ {stages['cpp_s']:.1f} s, Triton {stages['triton_s']:.1f} s; check {stages['check_s']:.1f} s)")
        return meta

    def run(self):
        out = self.req["output"]
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        metadata = {str(k): str(v) for k, v in self.req.get("metadata", {}).items()}
        if not self.dynamic:
            self.export(self.lowest(), out, False, metadata)
            return f"static {self.served(self.lowest(), False)} path={out}"
        example = self.pick_example()
        try:
            try:
                self.export(example, out, True, metadata)
            except Exception as e:  # noqa: BLE001
                if max(self.steps) == 1:
                    raise
                log(f"dynamic export with steps failed ({one_line(e)}); plain dims instead")
                self.export(example, out, True, metadata, stepped=False)
            return f"dynamic {self.served(example, True)} path={out}"
        except Exception as e:  # noqa: BLE001
            why = one_line(e)
            static = self.req.get("static_output")
            if not static:
                raise
            log(f"dynamic export failed ({why}); static package at {self.words(example)}")
            if os.environ.get("OPBENCH_EXPORT_DEBUG"):
                traceback.print_exc()
            path = static.replace("{x}", str(example[0]))
            metadata["opbench_dynamic_error"] = why
            self.export(example, path, False, metadata)
            return f"static {self.served(example, False)} path={path} (dynamic failed: {why})"


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
