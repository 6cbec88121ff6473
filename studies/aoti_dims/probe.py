"""tpa_decode's reference form (baselines/python/opbench_ops.py), bf16, h = 32, r = 16,
d = e = 128, exported by AOTInductor with its sizes declared five ways (see studies/aoti-dims):

  static   b = 32, m = 32768
  dyn      batch and m plain Dims (8..32, 256..32768), example b = 32, m = 4096
  dyn256   batch = 8 * Dim, m = 256 * Dim (what opbench's exporter declares for the seed table)
  dyn16    batch a plain Dim, m = 16 * Dim
  dynb     batch a plain Dim, m static at 32768

Usage: probe.py build DIR    the five packages, DIR/<name>.pt2, build seconds in DIR/build.json
       probe.py compile      torch.compile of the same function (static shapes) under
                             triton.testing.do_bench at b = 32 and 8, m = 32768, in ms
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "baselines", "python"))
import torch  # noqa: E402
from torch.export import Dim  # noqa: E402

import opbench_ops  # noqa: E402

H, R, D = 32, 16, 128


class Decode(torch.nn.Module):
    def forward(self, aq, ak, av, bq, bk, bv):
        return opbench_ops.tpa_decode(aq, ak, av, bq, bk, bv)


def inputs(b, m):
    g = torch.Generator(device="cpu").manual_seed(0)
    shapes = [(b, 1, H, R), (b, m, H), (b, m, H), (b, 1, R, D), (b, m, D), (b, m, D)]
    return tuple(torch.randn(s, generator=g).to(torch.bfloat16).cuda() for s in shapes)


def spec(b, m):
    """Dims per argument: batch on dim 0 of all, m on dim 1 of ak, av, bk, bv (None: static)."""
    def dims(*pairs):
        d = {k: v for k, v in pairs if v is not None}
        return d or None
    return (dims((0, b)), dims((0, b), (1, m)), dims((0, b), (1, m)), dims((0, b)), dims((0, b), (1, m)),
            dims((0, b), (1, m)))


def forms():
    batch, m = Dim("batch", min=8, max=32), Dim("m", min=256, max=32768)
    return {
        "static": (inputs(32, 32768), None),
        "dyn": (inputs(32, 4096), spec(batch, m)),
        "dyn256": (inputs(32, 4096), spec(8 * Dim("b_by8", min=1, max=4), 256 * Dim("m_by256", min=1, max=128))),
        "dyn16": (inputs(32, 4096), spec(batch, 16 * Dim("m_by16", min=16, max=2048))),
        "dynb": (inputs(32, 32768), spec(batch, None)),
    }


def build(out):
    os.makedirs(out, exist_ok=True)
    seconds = {}
    for name, (example, dynamic) in forms().items():
        t0 = time.time()
        ep = torch.export.export(Decode(), example, dynamic_shapes=dynamic, strict=False)
        torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(out, f"{name}.pt2"))
        seconds[name] = round(time.time() - t0, 1)
        print(f"{name}: built in {seconds[name]} s", flush=True)
    with open(os.path.join(out, "build.json"), "w") as f:
        json.dump(seconds, f)


def compiled():
    import triton.testing
    fn = torch.compile(opbench_ops.tpa_decode, dynamic=False)
    for b in (32, 8):
        x = inputs(b, 32768)
        ms = triton.testing.do_bench(lambda: fn(*x), warmup=100, rep=500)
        print(f"torch.compile b={b} m=32768: {ms * 1000:.1f} us", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "build":
        build(sys.argv[2])
    elif len(sys.argv) == 2 and sys.argv[1] == "compile":
        compiled()
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
