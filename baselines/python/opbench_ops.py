"""The torch reference of each opbench op, in Python (OPS.md), as a PyTorch user writes it in
eager mode: float32 math inside, the result cast back to the storage dtype.

scripts/export_aoti.py exports these with torch.export and compiles them with AOTInductor
(providers torch_compile and torch_naive_compile); tests/baselines_py_test.py checks them
against float64 numpy written from OPS.md's formulas. Backward functions take
(x, [theta,] grad_out) and return dx, computed with torch.autograd.grad inside.

Every op takes its tensors in OpSpec::inputs order (src/ops/*.cpp):
  act            x (b, h, n, d)
  lrpe_cosine    x (b, n, h, d), theta float32 (h, d)        -> (b, n, h, 2d)
  lrpe_rotate    x (b, n, h, d), theta float32 (h, d/2)      -> (b, n, h, d)
  lrpe_cosine_md x (b, h, l + n^md, d), theta float32 (h, e) -> (b, h, l + n^md, 2d)
  tpa_decode     aq (b,1,h,r) ak (b,m,h) av (b,m,h) bq (b,1,r,d) bk (b,m,d) bv (b,m,e) -> (b,1,h,e)
"""
import math

import torch
import torch.nn.functional as F

ACTS = ("none", "relu", "sigmoid", "silu", "softmax")
OPS = ("act", "lrpe_cosine", "lrpe_rotate", "lrpe_cosine_md", "tpa_decode")


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


def act(x, act="none", act_dim=-1):
    """act: x (b, h, n, d) -> same shape and dtype. "none" is the identity (x itself)."""
    if act == "none":
        return x
    return act_f32(x, act, act_dim).to(x.dtype)


def _positions(n, offset, device):
    # (offset + s) for s in [0, n), float32
    return torch.arange(n, device=device, dtype=torch.float32) + offset


def lrpe_cosine(x, theta, offset=0, act="none", act_dim=-1):
    """x (b, n, h, d), theta (h, d) | (1, d) | (h, 1) -> concat(xa cos, xa sin) (b, n, h, 2d)."""
    n = x.shape[1]
    xa = act_f32(x, act, act_dim)
    angle = _positions(n, offset, x.device)[:, None, None] * theta.float()  # (n, h, d)
    return torch.cat([xa * torch.cos(angle), xa * torch.sin(angle)], dim=-1).to(x.dtype)


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


def _tpa_scales(aq, bq, scale, scale_q):
    r, d = aq.shape[-1], bq.shape[-1]
    return (d ** -0.5 if scale is None else scale), (1.0 / r if scale_q is None else scale_q)


def tpa_decode(aq, ak, av, bq, bk, bv, scale=None, scale_q=None):
    """Factorised: score[h, t] = scale ak[t, h] <q[h], bk[t]>, o[h] = sum_t p av[t, h] bv[t]."""
    scale, scale_q = _tpa_scales(aq, bq, scale, scale_q)
    q = torch.einsum("bihr,bird->bhd", aq.float(), bq.float()) * scale_q  # (b, h, d)
    qk = torch.einsum("bhd,bmd->bhm", q, bk.float())                       # (b, h, m)
    score = qk * ak.float().transpose(1, 2) * scale
    p = torch.softmax(score, dim=-1)
    o = torch.einsum("bhm,bme->bhe", p * av.float().transpose(1, 2), bv.float())
    return o.unsqueeze(1).to(aq.dtype)  # (b, 1, h, e)


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


# ----------------------------------------------------------------------------- registry

PROVIDERS = {  # compiled provider -> the eager form it compiles
    "torch_compile": "torch",
    "torch_naive_compile": "torch_naive",
}


def _p(params, name, fallback=None):
    v = params.get(name, fallback)
    if v is None:
        raise KeyError(f"missing axis {name!r}")
    return v


def forward_function(op, variant, params):
    """The forward of `op` as a function of its tensors (OpSpec::inputs order), with the
    point's non-tensor axes (act, act_dim, offset, md, l) bound from `params`."""
    if variant not in ("torch", "torch_naive"):
        raise ValueError(f"unknown variant {variant!r}")
    if variant == "torch_naive" and op != "tpa_decode":
        raise ValueError(f"{op} has no naive form")
    if op == "act":
        a, dim = _p(params, "act", "none"), int(_p(params, "act_dim", -1))
        return lambda x: act(x, a, dim)
    if op in ("lrpe_cosine", "lrpe_rotate"):
        f = lrpe_cosine if op == "lrpe_cosine" else lrpe_rotate
        a, dim = _p(params, "act", "none"), int(_p(params, "act_dim", -1))
        offset = int(params.get("offset", 0))
        return lambda x, theta: f(x, theta, offset, a, dim)
    if op == "lrpe_cosine_md":
        a, dim = _p(params, "act", "none"), int(_p(params, "act_dim", -1))
        md, l = int(_p(params, "md", 1)), int(params.get("l", 0))

        def md_forward(x, theta):
            n = md_grid_side(x.shape[2], l, md)
            return lrpe_cosine_md(x, theta, (n,) * md, l, a, dim)

        return md_forward
    if op == "tpa_decode":
        return tpa_decode_naive if variant == "torch_naive" else tpa_decode
    raise ValueError(f"unknown op {op!r} (one of {', '.join(OPS)})")


def function(op, variant, mode, params):
    """fwd: (inputs...) -> o; bwd: (inputs..., grad_out) -> dx (x = the first input)."""
    fwd = forward_function(op, variant, params)
    if mode == "fwd":
        return fwd
    if mode == "bwd":
        if op == "tpa_decode":
            raise ValueError("tpa_decode has no backward (fwd only)")
        return backward(fwd)
    raise ValueError(f"unknown mode {mode!r} (fwd or bwd)")


def dim_v(params):
    e = int(params.get("dim_v", 0))
    return e if e > 0 else int(params["dim"])


def md_theta_width(params):
    e, d, md = int(params.get("theta_dim", 0)), int(params["dim"]), int(params["md"])
    return e if e > 0 else (d + md - 1) // md


def input_shapes(op, params):
    """[(name, shape, float32?)] in OpSpec::inputs order; float32? is True for theta (always
    float32), False for tensors stored in the point's dtype. `params` holds every axis."""
    P = {k: (int(v) if isinstance(v, (int, float)) else v) for k, v in params.items()}
    if op == "act":
        return [("x", (P["batch"], P["head"], P["n"], P["dim"]), False)]
    if op in ("lrpe_cosine", "lrpe_rotate"):
        width = P["dim"] if op == "lrpe_cosine" else P["dim"] // 2
        return [("x", (P["batch"], P["n"], P["head"], P["dim"]), False),
                ("theta", (P["head"], width), True)]
    if op == "lrpe_cosine_md":
        tokens = P.get("l", 0) + P["n"] ** P["md"]
        return [("x", (P["batch"], P["head"], tokens, P["dim"]), False),
                ("theta", (P["head"], md_theta_width(P)), True)]
    if op == "tpa_decode":
        b, h, r, d, m = P["batch"], P["head"], P["rank"], P["dim"], P["m"]
        return [("aq", (b, 1, h, r), False), ("ak", (b, m, h), False), ("av", (b, m, h), False),
                ("bq", (b, 1, r, d), False), ("bk", (b, m, d), False),
                ("bv", (b, m, dim_v(P)), False)]
    raise ValueError(f"unknown op {op!r}")


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def torch_dtype(word):
    try:
        return DTYPES[word]
    except KeyError:
        raise ValueError(f"unknown dtype {word!r} (bf16, fp16 or fp32)") from None


def make_inputs(op, params, dtype, device="cpu", seed=0):
    """Seeded inputs: normal x (and tpa factors) in `dtype`, theta in (0.05, 1.55) float32."""
    g = torch.Generator(device="cpu").manual_seed(seed)
    out = []
    for name, shape, f32 in input_shapes(op, params):
        if name == "theta":
            t = torch.rand(shape, generator=g) * 1.5 + 0.05
        else:
            t = torch.randn(shape, generator=g).to(dtype)
        out.append(t.to(device))
    return out


def output_shape(op, variant, params, dtype=torch.float32):
    """The forward output's shape, found by running the forward on the meta device."""
    metas = [torch.empty(shape, dtype=torch.float32 if f32 else dtype, device="meta")
             for _, shape, f32 in input_shapes(op, params)]
    return tuple(forward_function(op, variant, params)(*metas).shape)
