"""The torch reference of each opbench op, in Python (OPS.md), as a PyTorch user writes it in
eager mode: float32 math inside, the result cast back to the storage dtype.

scripts/export_aoti.py exports these with torch.export and compiles them with AOTInductor
(providers torch_compile and torch_naive_compile); tests/baselines_py_test.py checks them
against float64 numpy written from OPS.md's formulas. Backward functions take
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

def act_f32(x, act="none", dim=-1):
    """The activation of x in float32 (softmax along `dim`); returns a float32 tensor."""
    x = x.float()
    if act == "none":
        return x
    if act == "relu":
        return torch.relu(x)
    if act == "sigmoid":
        return torch.sigmoid(x)
    if act == "silu":
        return F.silu(x)
    if act == "softmax":
        return torch.softmax(x, dim=dim)
    raise ValueError(f"unknown act {act!r} (one of {', '.join(ACTS)})")


@op_function("act")
def act(x, act="none", act_dim=-1):
    """act: x (b, h, n, d) -> same shape and dtype. "none" is the identity (x itself)."""
    if act == "none":
        return x
    return act_f32(x, act, act_dim).to(x.dtype)


def _positions(n, offset, device):
    # (offset + s) for s in [0, n), float32
    return torch.arange(n, device=device, dtype=torch.float32) + offset


@op_function("lrpe_cosine")
def lrpe_cosine(x, theta, offset=0, act="none", act_dim=-1):
    """x (b, n, h, d), theta (h, d) | (1, d) | (h, 1) -> concat(xa cos, xa sin) (b, n, h, 2d)."""
    n = x.shape[1]
    xa = act_f32(x, act, act_dim)
    angle = _positions(n, offset, x.device)[:, None, None] * theta.float()  # (n, h, d)
    return torch.cat([xa * torch.cos(angle), xa * torch.sin(angle)], dim=-1).to(x.dtype)


@op_function("lrpe_rotate")
def lrpe_rotate(x, theta, offset=0, act="none", act_dim=-1):
    """x (b, n, h, d), d even, theta (h, d/2) | (1, d/2) | (h, 1) -> rotated halves (b, n, h, d)."""
    n, d = x.shape[1], x.shape[3]
    xa = act_f32(x, act, act_dim)
    x1, x2 = xa[..., : d // 2], xa[..., d // 2:]
    angle = _positions(n, offset, x.device)[:, None, None] * theta.float()  # (n, h, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
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
    angle c_{j // e}(s) * theta[h, j % e]; the l extra tokens first get angle 0."""
    md = len(grid)
    h, d = x.shape[1], x.shape[3]
    # a theta with one column is broadcast to e = ceil(d / md)
    e = theta.shape[1] if theta.shape[1] != 1 else (d + md - 1) // md
    th = theta.float().expand(theta.shape[0], e)  # (h|1, e)
    coords = torch.meshgrid(
        *[torch.arange(s, device=x.device, dtype=torch.float32) for s in grid], indexing="ij")
    per_axis = [c.reshape(1, -1, 1) * th[:, None, :] for c in coords]  # md x (h|1, N, e)
    angle = torch.cat(per_axis, dim=-1)[..., :d]  # (h|1, N, d)
    if l > 0:
        angle = F.pad(angle, (0, 0, l, 0))  # the extra tokens: angle 0
    xa = act_f32(x, act, act_dim)
    return torch.cat([xa * torch.cos(angle), xa * torch.sin(angle)], dim=-1).to(x.dtype)


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
    """Factorised: score[h, t] = scale ak[t, h] <q[h], bk[t]>, o[h] = sum_t p av[t, h] bv[t]."""
    scale, scale_q = _tpa_scales(aq, bq, scale, scale_q)
    q = torch.einsum("bihr,bird->bhd", aq.float(), bq.float()) * scale_q  # (b, h, d)
    qk = torch.einsum("bhd,bmd->bhm", q, bk.float())                       # (b, h, m)
    score = qk * ak.float().transpose(1, 2) * scale
    p = torch.softmax(score, dim=-1)
    o = torch.einsum("bhm,bme->bhe", p * av.float().transpose(1, 2), bv.float())
    return o.unsqueeze(1).to(aq.dtype)  # (b, 1, h, e)


@op_function("tpa_decode", variant="torch_naive")
def tpa_decode_naive(aq, ak, av, bq, bk, bv, scale=None, scale_q=None):
    """Naive: materialises q (b, h, d), k (b, m, h, d), v (b, m, h, e), then attention."""
    scale, scale_q = _tpa_scales(aq, bq, scale, scale_q)
    q = torch.einsum("bihr,bird->bhd", aq.float(), bq.float()) * scale_q  # (b, h, d)
    k = ak.float()[..., None] * bk.float()[:, :, None, :]                  # (b, m, h, d)
    v = av.float()[..., None] * bv.float()[:, :, None, :]                  # (b, m, h, e)
    score = torch.einsum("bhd,bmhd->bhm", q, k) * scale
    p = torch.softmax(score, dim=-1)
    o = torch.einsum("bhm,bmhe->bhe", p, v)
    return o.unsqueeze(1).to(aq.dtype)


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
