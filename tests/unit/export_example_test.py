#!/usr/bin/env python3
"""scripts/export_aoti.py's example and dims: what a dynamic package is exported and tuned at.
On tpa_decode requests dynamic over m and batch (no export is run): the example is the middle
of each axis's values (the upper one of an even count), never a value that makes a dynamic size
1 (export specialises it), and the request's x_example when it names one (tuned at the largest
point instead, the packages ran up to 49% slower: docs/baselines.md, "The example a dynamic
package is tuned at"). A size on an axis with a step is that multiple of a Dim (m = 256 *
m_by256), plain Dims without one or when asked; a step that is no power of two dividing the
axis's values is refused.

No pytest: run it (ctest runs it). Exit status 0 when every check passes; prints each failure.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="opbench-example-")

import export_aoti  # noqa: E402

failures = []


def check(what, got, want):
    if got != want:
        failures.append(what)
        print(f"FAIL: {what}: got {got}, want {want}")


H, R, D = 32, 16, 128


def shapes(m, b):
    return {"aq": [b, 1, H, R], "ak": [b, m, H], "av": [b, m, H], "bq": [b, 1, R, D], "bk": [b, m, D],
            "bv": [b, m, D]}


def request(ms, batches, b_step=None, **extra):
    args = []
    for name in ("aq", "ak", "av", "bq", "bk", "bv"):
        dynamic = [0] if name in ("aq", "bq") else [0, 1]
        args.append({"name": name, "dtype": "bf16", "fill": "normal", "dynamic": dynamic,
                     "shapes": {f"{m},{b}": shapes(m, b)[name] for m in ms for b in batches}})
    req = {"op": "tpa_decode", "variant": "torch", "provider": "torch_compile", "mode": "fwd",
           "modes": ["fwd"], "dtype": "bf16", "device": "cpu", "params": {"head": H, "rank": R, "dim": D},
           "x_name": "m", "x_min": min(ms), "x_max": max(ms), "x_values": ms,
           "shared": [{"name": "batch", "min": min(batches), "max": max(batches), "values": batches}],
           "args": args, "output": "/nonexistent/p.pt2"}
    if b_step is not None:
        req["shared"][0]["step"] = b_step
    req.update(extra)
    return export_aoti.Exporter(req)


def dims(exporter, stepped=True):
    """ak's dims, as words: {0: '8*batch_by8', 1: '256*m_by256'}"""
    spec = exporter.dynamic_shapes(exporter.pick_example(), stepped)
    return {j: getattr(d, "__name__", str(d)) for j, d in spec[1].items()}


def refused(ms, batches, x_step, b_step):
    try:
        request(ms, batches, b_step, x_step=x_step)
    except export_aoti.ExportError:
        return True
    return False


def main():
    ms = [256, 1024, 4096, 32768]
    check("the middle of each axis", request(ms, [8, 32]).pick_example(), (4096, 32))
    check("an odd count's middle", request([256, 1024, 4096], [8, 16, 32]).pick_example(), (1024, 16))
    check("a size of 1 is never the example", request([1, 2, 3], [8]).pick_example(), (3, 8))
    check("the request's x_example", request(ms, [8, 32], x_example=1024).pick_example(), (1024, 32))
    ms_by256 = request(ms, [8, 32], 8, x_step=256)
    check("sizes as multiples of a Dim", dims(ms_by256), {0: "8*batch_by8", 1: "256*m_by256"})
    check("the Dims' ranges", [(d.min, d.max) for d in ms_by256.dynamic_shapes((4096, 32))[1].values()],
          [(8, 32), (256, 32768)])
    check("plain Dims when asked", dims(ms_by256, stepped=False), {0: "batch", 1: "m"})
    check("plain Dims without a step", dims(request(ms, [8, 32])), {0: "batch", 1: "m"})
    check("a step of 1 on one axis", dims(request(ms, [8, 12], 1, x_step=256)), {0: "batch", 1: "256*m_by256"})
    check("a step not dividing the values is refused", refused(ms, [8, 12], 256, 8), True)
    check("a step that is no power of two is refused", refused([3, 6, 9], [8, 32], 3, 8), True)
    print("export_example_test:", "FAILED" if failures else "ok", f"({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
