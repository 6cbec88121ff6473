"""The torch reference of each opbench op, in Python (docs/ops.md): the PyTorch code the reference
benchmarks timed, written the way a PyTorch user writes it. Every tensor stays in its storage
dtype (bf16 stays bf16; ATen's elementwise ops, softmax and cuBLAS compute in float32 inside
and round once per op); the casts are the reference's own: softmax as an activation runs with
dtype=torch.float32 and is cast back, the LRPE angle tables are float32 (theta is float32) so
x * cos promotes to float32 until the final cast back. tpa_decode contracts the factors so
that its softmax runs over the last dimension. docs/baselines.md gives the reasons per op.
baselines/eager/*.cpp make the same ATen calls in the same order.

scripts/export_aoti.py exports these with torch.export and compiles them with AOTInductor
(providers torch_compile and torch_naive_compile); tests/unit/baselines_py_test.py checks them
against float64 numpy written from docs/ops.md's formulas. Backward functions take
(x, [theta,] grad_out) and return dx, computed with torch.autograd.grad inside.

Each op's function is registered under the op's name with @op_function (the naive form of an
op under variant "torch_naive"). It takes the op's tensors positionally, in OpSpec::inputs
order (src/ops/<op>.cpp, where shapes and dtypes are declared), and the point's other axes
(act, act_dim, offset, md, l ...) as keyword parameters with defaults, named as the axes are.
"""
import inspect
import math

import torch
import torch.nn.functional as F

ACTS = ("none", "relu", "sigmoid", "silu", "softmax")

_FUNCTIONS = {}  # (op, variant) -> the registered function


def op_function(op, variant="torch"):
    """Registers the decorated function as `op`'s torch reference (`variant` "torch", or
    "torch_naive" for a form that materialises its intermediates)."""

    def register(fn):
        if (op, variant) in _FUNCTIONS:
            raise ValueError(f"two {variant} functions registered for op {op!r}")
        _FUNCTIONS[(op, variant)] = fn
        return fn

    return register


# ----------------------------------------------------------------------------- the ops

def activation(x, act="none", act_dim=-1):
    """The op act: x (b, h, n, d) -> same shape and dtype. "none" is the identity (x itself);
    relu / sigmoid / silu run on x in its dtype; softmax along act_dim in float32, cast back."""
    if act == "none":
        return x
    if act == "relu":
        return torch.relu(x)
    if act == "sigmoid":
        return torch.sigmoid(x)
    if act == "silu":
        return F.silu(x)
    if act == "softmax":
        return F.softmax(x, dim=act_dim, dtype=torch.float32).to(x.dtype)
    raise ValueError(f"unknown act {act!r} (one of {', '.join(ACTS)})")


act = op_function("act")(activation)  # the op's name (the LRPE functions below take a parameter `act`)


def _angle_1d(x, offset, theta):
    """(offset + s) * theta[h, k] for the positions s in [0, n) of x: float32 (n, h|1, k|1)."""
    pos = torch.arange(x.shape[1], device=x.device, dtype=torch.float32) + offset
    return pos[:, None, None] * theta.float()


@op_function("lrpe_cosine")
def lrpe_cosine(x, theta, offset=0, act="none", act_dim=-1):
    """x (b, n, h, d), theta (h, d) | (1, d) | (h, 1) -> concat(xa cos, xa sin) (b, n, h, 2d)."""
    angle = _angle_1d(x, offset, theta)  # (n, h, d)
    cos, sin = torch.cos(angle), torch.sin(angle)
    xa = activation(x, act, act_dim)
    return torch.cat([xa * cos, xa * sin], dim=-1).to(x.dtype)


@op_function("lrpe_rotate")
def lrpe_rotate(x, theta, offset=0, act="none", act_dim=-1):
    """x (b, n, h, d), d even, theta (h, d/2) | (1, d/2) | (h, 1) -> rotated halves (b, n, h, d)."""
    angle = _angle_1d(x, offset, theta)  # (n, h, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    xa = activation(x, act, act_dim)
    x1, x2 = xa.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).to(x.dtype)


def md_grid_side(tokens, l, md):
    """The cube side n of an lrpe_cosine_md input with `tokens` = l + n^md tokens.

    Works on Python ints and on torch.export's symbolic sizes (the exported graph recomputes
    n from the token count of each call)."""
    grid_tokens = tokens - l
    if md == 1:
        return grid_tokens
    return round(grid_tokens ** (1.0 / md))


def lrpe_cosine_md(x, theta, grid, l=0, act="none", act_dim=-1):
    """x (b, h, l + N, d), N = prod(grid), theta (h, e) | (1, e) | (h, 1) -> (b, h, l + N, 2d).

    The N grid tokens are row-major (last grid axis fastest); feature j of grid token s takes
    angle c_{j // e}(s) * theta[h, j % e]; the l extra tokens first get no position."""
    md = len(grid)
    h, d = x.shape[1], x.shape[3]
    # a theta with one column is broadcast to e = ceil(d / md)
    e = theta.shape[1] if theta.shape[1] != 1 else (d + md - 1) // md
    th = theta.float().expand(theta.shape[0], e)  # (h|1, e)
    coords = torch.meshgrid(
        *[torch.arange(s, device=x.device, dtype=torch.float32) for s in grid], indexing="ij")
    per_axis = [c.reshape(1, -1, 1) * th[:, None, :] for c in coords]  # md x (h|1, N, e)
    angle = torch.cat(per_axis, dim=-1)[..., :d]  # (h|1, N, d)
    cos, sin = torch.cos(angle), torch.sin(angle)
    xa = activation(x, act, act_dim)
    xe, xg = xa[:, :, :l], xa[:, :, l:]
    o = torch.cat([xg * cos, xg * sin], dim=-1)  # (b, h, N, 2d)
    if l > 0:  # the extra tokens: concat(xa, 0)
        o = torch.cat([F.pad(xe, (0, d)), o], dim=-2)
    return o.to(x.dtype)


@op_function("lrpe_cosine_md")
def lrpe_cosine_md_point(x, theta, md=1, l=0, act="none", act_dim=-1):
    """lrpe_cosine_md at a point: the grid side n recomputed from x's token count l + n^md, so
    that one exported graph serves every n."""
    n = md_grid_side(x.shape[2], l, md)
    return lrpe_cosine_md(x, theta, (n,) * md, l, act, act_dim)


def _tpa_scales(aq, bq, scale, scale_q):
    r, d = aq.shape[-1], bq.shape[-1]
    return (d ** -0.5 if scale is None else scale), (1.0 / r if scale_q is None else scale_q)


@op_function("tpa_decode")
def tpa_decode(aq, ak, av, bq, bk, bv, scale=None, scale_q=None):
    """Factorised, in the storage dtype: the scores contracted from the factors so that the
    softmax runs over the last dimension (m) of a (b, h, 1, m) tensor, never forming q, k, v."""
    scale, scale_q = _tpa_scales(aq, bq, scale, scale_q)
    s1 = torch.einsum("bnrd,bmd->bnmr", bq, bk)   # (b, 1, m, r): <bq[r], bk[t]>
    s2 = torch.einsum("bnhr,bnmr->bnmh", aq, s1)  # (b, 1, m, h): <q[h], bk[t]> / scale_q
    s3 = torch.einsum("bnmh,bmh->bhnm", s2, ak)   # (b, h, 1, m): times ak[t, h]
    p = torch.softmax(s3 * scale_q * scale, dim=-1)
    o = torch.einsum("bhnm,bmh->bnmh", p, av)     # (b, 1, m, h): p[h, t] av[t, h]
    return torch.einsum("bnmh,bme->bnhe", o, bv)  # (b, 1, h, e)


@op_function("tpa_decode", variant="torch_naive")
def tpa_decode_naive(aq, ak, av, bq, bk, bv, scale=None, scale_q=None):
    """Naive, in the storage dtype: materialises q (b, 1, h, d), k (b, m, h, d) and
    v (b, m, h, e), then standard attention with the softmax over the last dimension."""
    scale, scale_q = _tpa_scales(aq, bq, scale, scale_q)
    q = torch.einsum("bnhr,bnrd->bnhd", aq, bq) * scale_q
    k = torch.einsum("bmh,bmd->bmhd", ak, bk)
    v = torch.einsum("bmh,bme->bmhe", av, bv)
    score = torch.einsum("bnhd,bmhd->bhnm", q, k) * scale
    p = torch.softmax(score, dim=-1)
    return torch.einsum("bhnm,bmhe->bnhe", p, v)


# ----------------------------------------------------------------------------- backward

def backward(forward):
    """(x, *others) -> o  becomes  (x, *others, grad_out) -> dx, through torch.autograd.grad."""

    def bwd(x, *rest):
        *others, grad_out = rest
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            o = forward(x, *others)
            (dx,) = torch.autograd.grad(o, x, grad_out)
        return dx

    bwd.__name__ = forward.__name__ + "_bwd"
    return bwd


# ----------------------------------------------------------------------------- lookup

def forward_function(op, variant, params):
    """The forward of `op` as a function of its tensors (OpSpec::inputs order), with the axes
    its registered function takes as keyword parameters bound from `params`."""
    fn = _FUNCTIONS.get((op, variant))
    if fn is None:
        known = ", ".join(f"{o}/{v}" for o, v in sorted(_FUNCTIONS))
        raise ValueError(f"no {variant} function registered for op {op!r} ({known})")
    bound = {p.name: params[p.name] for p in inspect.signature(fn).parameters.values()
             if p.default is not inspect.Parameter.empty and p.name in params}

    def forward(*tensors):
        return fn(*tensors, **bound)

    forward.__name__ = fn.__name__
    return forward


def function(op, variant, mode, params, modes=("fwd", "bwd")):
    """fwd: (inputs...) -> o; bwd: (inputs..., grad_out) -> dx (x = the first input). `modes`:
    the modes the op has (OpSpec::modes)."""
    if mode not in ("fwd", "bwd"):
        raise ValueError(f"unknown mode {mode!r} (fwd or bwd)")
    if mode not in modes:
        raise ValueError(f"{op} has no mode {mode!r} ({', '.join(modes)} only)")
    fwd = forward_function(op, variant, params)
    return fwd if mode == "fwd" else backward(fwd)


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def torch_dtype(word):
    try:
        return DTYPES[word]
    except KeyError:
        raise ValueError(f"unknown dtype {word!r} (bf16, fp16 or fp32)") from None


def make_tensor(shape, dtype, fill, generator):
    """A seeded tensor on the CPU: "theta" fills rotary frequencies in (0.05, 1.55) (float32
    math), "uniform01" uniform in [0, 1), "normal" (the default) standard normal; cast to `dtype`."""
    if fill == "theta":
        t = torch.rand(shape, generator=generator) * 1.5 + 0.05
    elif fill == "uniform01":
        t = torch.rand(shape, generator=generator)
    else:
        t = torch.randn(shape, generator=generator)
    return t.to(dtype)
