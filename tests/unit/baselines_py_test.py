#!/usr/bin/env python3
"""baselines/python/opbench_ops.py (the torch references that torch_compile compiles) against
float64 numpy written here from docs/ops.md's formulas, forward and backward (the backward from
docs/ops.md's closed forms, not autograd), fp32 and bf16 storage, odd shapes included; and the
lookup the exporter uses (op_function registrations, function, md_grid_side).

No pytest: run it (ctest runs it). Exit status 0 when every check passes; prints each failure.
Usage: baselines_py_test.py [-v]
"""
import math
import os
import sys
import traceback

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "baselines", "python"))
import opbench_ops as ops  # noqa: E402

VERBOSE = "-v" in sys.argv
# The references compute in the storage dtype: a result carries the roundings of every op in
# its chain (up to ~4 on one element, e.g. sigmoid's backward), each up to the unit roundoff
# (2^-8 for bf16, 2^-11 for fp16); the small cases' norms are dominated by a few elements.
# So 5 units for the 16-bit dtypes; fp32 stays tight.
TOL = {torch.float32: 1e-5, torch.bfloat16: 5 * 2.0 ** -8, torch.float16: 5 * 2.0 ** -11}
failures = []
checks = 0


def f64(t):
    return t.detach().to(torch.float64).cpu().numpy()


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return math.inf
    den = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (den if den > 0 else 1.0)


def check(name, got, want, dtype, got_dtype=None):
    global checks
    checks += 1
    err = rel_err(f64(got), want)
    ok = err <= TOL[dtype] and (got_dtype is None or got.dtype == got_dtype)
    if VERBOSE or not ok:
        print(f"{'ok  ' if ok else 'FAIL'} {name}: rel err {err:.2e} (tol {TOL[dtype]:g})"
              f"{'' if got_dtype is None or got.dtype == got_dtype else f', dtype {got.dtype}'}")
    if not ok:
        failures.append(name)


# ----------------------------------------------------------------------------- numpy, docs/ops.md

def np_act(x, act, dim):
    if act == "none":
        return x
    if act == "relu":
        return np.where(x >= 0, x, 0.0)
    s = 1.0 / (1.0 + np.exp(-x))
    if act == "sigmoid":
        return s
    if act == "silu":
        return x * s
    if act == "softmax":
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)
    raise ValueError(act)


def np_act_bwd(x, do, act, dim):
    if act == "none":
        return do
    if act == "relu":
        return np.where(x >= 0, do, 0.0)
    s = 1.0 / (1.0 + np.exp(-x))
    if act == "sigmoid":
        return do * s * (1 - s)
    if act == "silu":
        return do * s * (1 + x * (1 - s))
    if act == "softmax":
        o = np_act(x, "softmax", dim)
        return o * do - o * (o * do).sum(axis=dim, keepdims=True)
    raise ValueError(act)


def np_angle_1d(n, theta, offset):  # (n, h|1, k|1)
    return (offset + np.arange(n, dtype=np.float64))[:, None, None] * theta[None]


def np_lrpe_cosine(x, theta, offset, act, dim):
    xa = np_act(x, act, dim)
    a = np_angle_1d(x.shape[1], theta, offset)
    return np.concatenate([xa * np.cos(a), xa * np.sin(a)], axis=-1)


def np_lrpe_cosine_bwd(x, theta, do, offset, act, dim):
    d = x.shape[-1]
    a = np_angle_1d(x.shape[1], theta, offset)
    dxa = do[..., :d] * np.cos(a) + do[..., d:] * np.sin(a)
    return np_act_bwd(x, dxa, act, dim)


def np_lrpe_rotate(x, theta, offset, act, dim):
    xa = np_act(x, act, dim)
    k = x.shape[-1] // 2
    x1, x2 = xa[..., :k], xa[..., k:]
    a = np_angle_1d(x.shape[1], theta, offset)
    return np.concatenate([x1 * np.cos(a) - x2 * np.sin(a), x1 * np.sin(a) + x2 * np.cos(a)], -1)


def np_lrpe_rotate_bwd(x, theta, do, offset, act, dim):
    k = x.shape[-1] // 2
    a = np_angle_1d(x.shape[1], theta, offset)
    do1, do2 = do[..., :k], do[..., k:]
    dxa = np.concatenate([do1 * np.cos(a) + do2 * np.sin(a), -do1 * np.sin(a) + do2 * np.cos(a)], -1)
    return np_act_bwd(x, dxa, act, dim)


def np_md_angle(h_theta, T, d, md, n, l):
    """angle (h, T, d) element by element: token l + s has row-major grid coordinates of s."""
    H, e = h_theta.shape
    angle = np.zeros((H, T, d))
    for s in range(n ** md):
        coords, rest = [], s
        for a in reversed(range(md)):
            coords.append(rest % n)
            rest //= n
        coords = coords[::-1]
        for j in range(d):
            angle[:, l + s, j] = coords[j // e] * h_theta[:, j % e]
    return angle


def np_lrpe_md(x, theta, md, n, l, act, dim):
    T, d = x.shape[2], x.shape[3]
    a = np_md_angle(theta, T, d, md, n, l)[None]
    xa = np_act(x, act, dim)
    return np.concatenate([xa * np.cos(a), xa * np.sin(a)], axis=-1)


def np_lrpe_md_bwd(x, theta, do, md, n, l, act, dim):
    T, d = x.shape[2], x.shape[3]
    a = np_md_angle(theta, T, d, md, n, l)[None]
    dxa = do[..., :d] * np.cos(a) + do[..., d:] * np.sin(a)
    return np_act_bwd(x, dxa, act, dim)


def np_tpa(aq, ak, av, bq, bk, bv):
    b, _, h, r = aq.shape
    d, m, e = bq.shape[-1], ak.shape[1], bv.shape[-1]
    o = np.zeros((b, 1, h, e))
    for bb in range(b):
        for hh in range(h):
            q = sum(aq[bb, 0, hh, rr] * bq[bb, 0, rr] for rr in range(r)) / r
            score = np.array([d ** -0.5 * ak[bb, t, hh] * np.dot(q, bk[bb, t]) for t in range(m)])
            p = np.exp(score - score.max())
            p /= p.sum()
            o[bb, 0, hh] = sum(p[t] * av[bb, t, hh] * bv[bb, t] for t in range(m))
    return o


# ----------------------------------------------------------------------------- cases

def randn(shape, dtype, g):
    return torch.randn(shape, generator=g).to(dtype)


def rand_theta(shape, g):
    return torch.rand(shape, generator=g) * 1.5 + 0.05


def run_fwd_bwd(name, fwd, np_fwd, np_bwd, x, others, dtype, g):
    """Checks fwd against np_fwd(x64, *others64) and backward(fwd) against np_bwd(..., do)."""
    o = fwd(x, *others)
    check(f"{name} fwd", o, np_fwd(f64(x), *[f64(t) for t in others]), dtype, x.dtype)
    do = randn(tuple(o.shape), dtype, g)
    xin = x.clone()
    dx = ops.backward(fwd)(xin, *others, do)
    check(f"{name} bwd", dx, np_bwd(f64(x), *[f64(t) for t in others], f64(do)), dtype, x.dtype)
    if xin.requires_grad:
        failures.append(f"{name}: backward left requires_grad set on its input")


def test_act(g):
    for dtype in (torch.float32, torch.bfloat16):
        for shape in [(2, 3, 5, 8), (1, 1, 1, 4), (1, 2, 7, 3)]:
            for act in ops.ACTS:
                for dim in ((-1, -2) if act == "softmax" else (-1,)):
                    x = randn(shape, dtype, g)
                    fwd = ops.forward_function("act", "torch", {"act": act, "act_dim": dim})
                    run_fwd_bwd(f"act {act} dim {dim} {shape} {dtype}", fwd,
                                lambda x, a=act, dd=dim: np_act(x, a, dd),
                                lambda x, do, a=act, dd=dim: np_act_bwd(x, do, a, dd),
                                x, [], dtype, g)
    x = randn((2, 3, 4, 5), torch.float32, g)
    if ops.act(x, "none") is not x:
        failures.append("act none must return x itself (no copy)")


def test_lrpe_1d(g):
    for op, np_f, np_b, width in [("lrpe_cosine", np_lrpe_cosine, np_lrpe_cosine_bwd, 1),
                                  ("lrpe_rotate", np_lrpe_rotate, np_lrpe_rotate_bwd, 2)]:
        for dtype in (torch.float32, torch.bfloat16):
            for (b, n, h, d), theta_shape, offset in [
                    ((2, 5, 3, 8), "h", 0), ((1, 1, 1, 4), "h", 7), ((1, 9, 2, 6), "1", 3),
                    ((2, 4, 3, 4), "col", 0)]:
                k = d // width
                ts = {"h": (h, k), "1": (1, k), "col": (h, 1)}[theta_shape]
                theta = rand_theta(ts, g)
                for act, dim in [("none", -1), ("silu", -1), ("relu", -1), ("sigmoid", -1),
                                 ("softmax", -1), ("softmax", 1)]:
                    x = randn((b, n, h, d), dtype, g)
                    fwd = ops.forward_function(op, "torch",
                                               {"act": act, "act_dim": dim, "offset": offset})
                    run_fwd_bwd(f"{op} {act} dim {dim} x{(b, n, h, d)} theta{ts} off {offset} "
                                f"{dtype}", fwd,
                                lambda x, t, a=act, dd=dim, o=offset: np_f(x, t, o, a, dd),
                                lambda x, t, do, a=act, dd=dim, o=offset: np_b(x, t, do, o, a, dd),
                                x, [theta], dtype, g)


def test_lrpe_md(g):
    cases = [  # md, n, l, d, e (theta width), h
        (1, 6, 0, 8, None, 2), (1, 5, 3, 4, None, 1), (2, 3, 0, 8, None, 2),
        (2, 4, 2, 5, None, 2), (2, 3, 1, 5, 4, 2), (3, 2, 0, 6, None, 2), (3, 3, 10, 7, None, 1),
        (2, 1, 2, 4, None, 1)]
    for dtype in (torch.float32, torch.bfloat16):
        for md, n, l, d, e, h in cases:
            params = {"batch": 2, "head": h, "n": n, "dim": d, "md": md, "l": l,
                      "theta_dim": e or 0}
            xs, ts = (2, h, l + n ** md, d), (h, e or math.ceil(d / md))
            theta = rand_theta(ts, g)
            for act, dim in [("none", -1), ("silu", -1), ("softmax", -1), ("softmax", -2)]:
                x = randn(xs, dtype, g)
                fwd = ops.forward_function("lrpe_cosine_md", "torch",
                                           dict(params, act=act, act_dim=dim))
                run_fwd_bwd(f"lrpe_cosine_md md {md} n {n} l {l} d {d} e {ts[1]} {act} {dim} "
                            f"{dtype}", fwd,
                            lambda x, t, a=act, dd=dim, c=(md, n, l): np_lrpe_md(x, t, *c, a, dd),
                            lambda x, t, do, a=act, dd=dim, c=(md, n, l):
                                np_lrpe_md_bwd(x, t, do, *c, a, dd),
                            x, [theta], dtype, g)
    # the grid side from the token count (what the exported graph computes)
    for md, n, l in [(1, 7, 0), (2, 128, 10), (3, 32, 10), (3, 31, 0), (2, 1, 3), (1, 32768, 10)]:
        got = ops.md_grid_side(l + n ** md, l, md)
        if got != n:
            failures.append(f"md_grid_side(l={l} + {n}^{md}) = {got}")


def test_tpa(g):
    for dtype in (torch.float32, torch.bfloat16):
        for b, h, r, d, e, m in [(2, 3, 4, 8, 8, 5), (1, 1, 1, 4, 6, 1), (2, 2, 3, 5, 3, 9)]:
            params = {"batch": b, "head": h, "rank": r, "dim": d, "dim_v": e, "m": m}
            shapes = [(b, 1, h, r), (b, m, h), (b, m, h), (b, 1, r, d), (b, m, d), (b, m, e)]
            args = [randn(s, dtype, g) for s in shapes]
            want = np_tpa(*[f64(a) for a in args])
            for variant in ("torch", "torch_naive"):
                fn = ops.function("tpa_decode", variant, "fwd", params, ("fwd",))
                got = fn(*args)
                check(f"tpa_decode {variant} b{b} h{h} r{r} d{d} e{e} m{m} {dtype}", got,
                      want, dtype, dtype)
                if tuple(got.shape) != (b, 1, h, e):
                    failures.append(f"tpa_decode output shape {params}: {tuple(got.shape)}")


class OpLog(TorchDispatchMode):
    """Records every aten op run inside it with its arguments (after decomposition)."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args))
        return func(*args, **(kwargs or {}))

    def dtypes(self):
        return {a.dtype for _, args in self.calls for a in tree_flatten(args)[0]
                if isinstance(a, torch.Tensor) and a.dim() > 0}


def test_storage_dtype(g):
    """The reference's arrangement, not only its values: with bf16 inputs the elementwise acts
    and both tpa_decode forms touch bf16 tensors only, and tpa_decode's one softmax runs over
    the last dimension of a (b, h, 1, m) tensor."""
    global checks
    x = randn((2, 3, 5, 8), torch.bfloat16, g)
    for act in ("relu", "sigmoid", "silu"):
        for mode, args in (("fwd", [x]), ("bwd", [x, randn((2, 3, 5, 8), torch.bfloat16, g)])):
            checks += 1
            with OpLog() as log:
                ops.function("act", "torch", mode, {"act": act, "act_dim": -1})(*args)
            if log.dtypes() != {torch.bfloat16}:
                failures.append(f"act {act} {mode} bf16 touched {log.dtypes()}")
    b, h, r, d, e, m = 2, 3, 4, 8, 6, 7
    params = {"batch": b, "head": h, "rank": r, "dim": d, "dim_v": e, "m": m}
    shapes = [(b, 1, h, r), (b, m, h), (b, m, h), (b, 1, r, d), (b, m, d), (b, m, e)]
    args = [randn(s, torch.bfloat16, g) for s in shapes]
    for variant in ("torch", "torch_naive"):
        checks += 1
        with OpLog() as log:
            ops.function("tpa_decode", variant, "fwd", params, ("fwd",))(*args)
        if log.dtypes() != {torch.bfloat16}:
            failures.append(f"tpa_decode {variant} bf16 touched {log.dtypes()}")
        softmax = [a for f, a in log.calls if f is torch.ops.aten._softmax.default]
        if len(softmax) != 1 or tuple(softmax[0][0].shape) != (b, h, 1, m) or \
                softmax[0][1] not in (-1, 3):
            failures.append(f"tpa_decode {variant}: softmax calls "
                            f"{[(tuple(a[0].shape), a[1]) for a in softmax]}, want one over the "
                            f"last dim of {(b, h, 1, m)}")


def test_registry():
    """What the exporter relies on: one function per (op, variant), keyword axes bound by
    name, the modes an op has, errors for what does not exist."""
    global checks
    checks += 1
    ops_registered = {op for op, _ in ops._FUNCTIONS}
    if not ops_registered:
        failures.append("no op function registered")
    x = torch.randn(2, 3, 5, 8)
    p = {"act": "silu", "act_dim": -1, "batch": 2, "n": 5, "unrelated": "ignored"}
    got = ops.function("act", "torch", "fwd", p)(x)
    if not torch.equal(got, ops.act(x, "silu", -1)):
        failures.append("forward_function did not bind act and act_dim by name")
    try:
        ops.op_function("act")(lambda x: x)
        failures.append("a second torch function for act was accepted")
    except ValueError:
        pass
    for bad in [lambda: ops.function("tpa_decode", "torch", "bwd", {}, ("fwd",)),
                lambda: ops.function("act", "torch_naive", "fwd", p),
                lambda: ops.function("act", "torch", "sideways", p),
                lambda: ops.function("nope", "torch", "fwd", p),
                lambda: ops.act(torch.ones(2), "bogus"),
                lambda: ops.torch_dtype("fp8")]:
        try:
            bad()
            failures.append("registry accepted a bad request")
        except ValueError:
            pass


def main():
    g = torch.Generator().manual_seed(0)
    for test in (test_act, test_lrpe_1d, test_lrpe_md, test_tpa, test_storage_dtype):
        try:
            test(g)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            failures.append(test.__name__ + " raised")
    try:
        test_registry()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        failures.append("test_registry raised")
    print(f"baselines_py_test: {checks} checks, {len(failures)} failures")
    for f in failures:
        print("  failed:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
