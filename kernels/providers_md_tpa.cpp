// Providers of our CUDA kernels for lrpe_cosine_md ("cuda", "cuda_cache") and tpa_decode
// ("cuda_b", "cuda_bh", "cuda_bn"). The binding validates the tensors (rank, dtype, contiguity,
// device, shapes) with a one-line error, does everything that is not the measured work in
// prepare (the cos/sin table of cuda_cache, workspace sizing, cuda_bn's zeroed workspace of work
// counters and split partials), and the Call allocates only what the op must: the output
// (forward) or dx (backward), plus the small statistics buffer of softmax over the sequence.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/binding.h"
#include "kernels/lrpe_cosine_md.h"
#include "kernels/tpa_decode.h"
#include "providers/provider.hpp"

namespace opbench {

namespace {

using namespace binding;

// ---------------------------------------------------------------------------------------------
// lrpe_cosine_md
Call prepare_md(const Params& p, const Inputs& in, bool cache) {
  const std::string op = std::string("lrpe_cosine_md/") + (cache ? "cuda_cache" : "cuda");
  const std::string mode = p.s("mode");
  if (mode != "fwd" && mode != "bwd") fail(op, "unknown mode '" + mode + "'");
  const bool bwd = mode == "bwd";
  if (in.tensors.size() != 2) fail(op, "expects inputs x, theta");
  const K::Act act = parse_act(op, p.s("act"));
  const int act_dim = static_cast<int>(p.i_or("act_dim", -1));
  const int64_t md = p.i("md"), n = p.i("n"), l = p.i_or("l", 0);
  if (md < 1 || md > 3) fail(op, "md must be 1, 2 or 3, got " + std::to_string(md));
  if (n < 1 || l < 0) fail(op, "n must be >= 1 and l >= 0");

  const at::Tensor x = in[0];
  if (!x.defined() || x.dim() != 4) fail(op, "x must be 4-D (b, h, l + N, d)");
  const K::DType dt = kernel_dtype(op, x, "x");
  check_dtype_param(op, p, x);
  int64_t N = 1;
  for (int64_t i = 0; i < md; ++i) N *= n;
  const int64_t b = x.size(0), h = x.size(1), L = l + N, d = x.size(3);
  check_tensor(op, x, "x", x.scalar_type(), {b, h, L, d});

  // theta (h, e), or broadcast (1, e) / (h, 1): made a contiguous (h, e) here, once.
  at::Tensor theta = in[1];
  if (!theta.defined() || theta.dim() != 2) fail(op, "theta must be 2-D (h, e)");
  if (theta.scalar_type() != at::kFloat) fail(op, "theta must be float32");
  if (!theta.is_cuda() || theta.device() != x.device()) fail(op, "theta must be on x's device");
  const int64_t e = theta.size(1) == 1 ? (d + md - 1) / md : theta.size(1);
  if (theta.size(0) != h && theta.size(0) != 1)
    fail(op, "theta has shape " + shape_str(theta.sizes()) + ", expected (" + std::to_string(h) + ", e)");
  theta = theta.expand({h, e}).contiguous();

  K::LrpeMdShape s;
  s.b = b; s.h = h; s.l = l; s.md = static_cast<int>(md); s.d = d; s.e = e;
  for (int i = 0; i < md; ++i) s.n[i] = n;
  try {
    K::lrpe_cosine_md_check(s, act, act_dim);
  } catch (const K::KernelError& err) {
    fail(op, err.what());
  }

  const c10::cuda::CUDAGuard guard(x.device());
  const size_t wsb = K::lrpe_cosine_md_workspace_bytes(s, act, act_dim, bwd);
  at::Tensor cos_t, sin_t;
  if (cache) {  // the table a real cache would hold: counted by the memory metric
    cos_t = at::empty({N, h, d}, x.options().dtype(at::kFloat));
    sin_t = at::empty({N, h, d}, x.options().dtype(at::kFloat));
    K::lrpe_cosine_md_build_cache(theta.data_ptr<float>(), cos_t.data_ptr<float>(),
                                  sin_t.data_ptr<float>(), s, current_stream());
  }

  if (!bwd) {
    return [x, theta, cos_t, sin_t, s, dt, act, act_dim, wsb]() -> std::vector<at::Tensor> {
      const c10::cuda::CUDAGuard g(x.device());
      at::Tensor out = at::empty({s.b, s.h, s.tokens(), 2 * s.d}, x.options());
      at::Tensor ws = workspace_on(x, wsb);
      K::lrpe_cosine_md_fwd(x.data_ptr(), theta.data_ptr<float>(),
                            cos_t.defined() ? cos_t.data_ptr<float>() : nullptr,
                            sin_t.defined() ? sin_t.data_ptr<float>() : nullptr, out.data_ptr(),
                            ws.defined() ? ws.data_ptr() : nullptr, wsb, s, dt, act, act_dim,
                            current_stream());
      return {out};
    };
  }
  const at::Tensor go = in.grad_out;
  check_tensor(op, go, "grad_out", x.scalar_type(), {b, h, L, 2 * d});
  if (go.device() != x.device()) fail(op, "grad_out must be on x's device");
  return [x, go, theta, cos_t, sin_t, s, dt, act, act_dim, wsb]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard g(x.device());
    at::Tensor dx = at::empty_like(x);
    at::Tensor ws = workspace_on(x, wsb);
    K::lrpe_cosine_md_bwd(x.data_ptr(), go.data_ptr(), theta.data_ptr<float>(),
                          cos_t.defined() ? cos_t.data_ptr<float>() : nullptr,
                          sin_t.defined() ? sin_t.data_ptr<float>() : nullptr, dx.data_ptr(),
                          ws.defined() ? ws.data_ptr() : nullptr, wsb, s, dt, act, act_dim,
                          current_stream());
    return {dx};
  };
}

Provider md_provider(bool cache) {
  Provider pr;
  pr.op = "lrpe_cosine_md";
  pr.name = cache ? "cuda_cache" : "cuda";
  pr.help = cache ? "our CUDA kernels, cos/sin table (N, h, d) float32 built in prepare"
                  : "our CUDA kernels, angle and sin/cos per element, reused across the batch";
  pr.unavailable = needs_cuda;
  pr.prepare = [cache](const Params& p, const Inputs& in) { return prepare_md(p, in, cache); };
  return pr;
}

// ---------------------------------------------------------------------------------------------
// tpa_decode
Call prepare_tpa(const Params& p, const Inputs& in, K::TpaStrategy strategy) {
  const std::string op = std::string("tpa_decode/cuda_") + K::tpa_strategy_name(strategy);
  if (p.has("mode") && p.s("mode") != "fwd") fail(op, "forward only (mode '" + p.s("mode") + "')");
  if (in.tensors.size() != 6) fail(op, "expects inputs aq, ak, av, bq, bk, bv");
  const at::Tensor aq = in[0], ak = in[1], av = in[2], bq = in[3], bk = in[4], bv = in[5];
  if (!aq.defined() || aq.dim() != 4) fail(op, "aq must be 4-D (b, 1, h, r)");
  if (!bq.defined() || bq.dim() != 4) fail(op, "bq must be 4-D (b, 1, r, d)");
  if (!bv.defined() || bv.dim() != 3) fail(op, "bv must be 3-D (b, m, e)");
  if (!ak.defined() || ak.dim() != 3) fail(op, "ak must be 3-D (b, m, h)");
  const K::DType dt = kernel_dtype(op, aq, "aq");
  check_dtype_param(op, p, aq);
  const at::ScalarType st = aq.scalar_type();
  K::TpaShape s;
  s.b = aq.size(0); s.h = aq.size(2); s.r = aq.size(3); s.d = bq.size(3); s.e = bv.size(2);
  s.m = ak.size(1);
  check_tensor(op, aq, "aq", st, {s.b, 1, s.h, s.r});
  check_tensor(op, ak, "ak", st, {s.b, s.m, s.h});
  check_tensor(op, av, "av", st, {s.b, s.m, s.h});
  check_tensor(op, bq, "bq", st, {s.b, 1, s.r, s.d});
  check_tensor(op, bk, "bk", st, {s.b, s.m, s.d});
  check_tensor(op, bv, "bv", st, {s.b, s.m, s.e});
  for (const at::Tensor* t : {&ak, &av, &bq, &bk, &bv})
    if (t->device() != aq.device()) fail(op, "all inputs must be on one device");
  auto param_is = [&](const char* axis, int64_t v) {
    if (p.has(axis) && p.i(axis) > 0 && p.i(axis) != v)
      fail(op, std::string("tensors give ") + axis + " = " + std::to_string(v) + ", the point says " +
                   std::to_string(p.i(axis)));
  };
  param_is("batch", s.b); param_is("head", s.h); param_is("rank", s.r); param_is("dim", s.d);
  param_is("dim_v", s.e); param_is("m", s.m);
  const K::TpaScales scales = K::TpaScales::defaults(s);
  const c10::cuda::CUDAGuard guard(aq.device());
  // The launch plan (sizes checked, device queried) once here, not in every measured call.
  const K::TpaPlan plan = [&] {
    try {
      return K::TpaPlan(s, dt, strategy);
    } catch (const K::KernelError& err) {
      fail(op, err.what());
    }
  }();
  // cuda_bn's workspace (work counters, float32 partials) is the provider's, made and zeroed
  // here once like a real caller's; it stays allocated, so every call's peak memory counts it.
  const size_t wsb = plan.workspace_bytes();
  const at::Tensor ws = wsb ? at::zeros({static_cast<int64_t>(wsb)}, aq.options().dtype(at::kByte)) : at::Tensor();
  return [aq, ak, av, bq, bk, bv, s, scales, plan, wsb, ws]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard g(aq.device());
    at::Tensor out = at::empty({s.b, 1, s.h, s.e}, aq.options());
    plan.run(aq.data_ptr(), ak.data_ptr(), av.data_ptr(), bq.data_ptr(), bk.data_ptr(), bv.data_ptr(),
             out.data_ptr(), ws.defined() ? ws.data_ptr() : nullptr, wsb, scales, current_stream());
    return {out};
  };
}

Provider tpa_provider(K::TpaStrategy strategy, const char* help) {
  Provider pr;
  pr.op = "tpa_decode";
  pr.name = std::string("cuda_") + K::tpa_strategy_name(strategy);
  pr.help = help;
  pr.unavailable = needs_cuda;
  pr.prepare = [strategy](const Params& p, const Inputs& in) { return prepare_tpa(p, in, strategy); };
  return pr;
}

const ProviderRegistration registration([] {
  return std::vector<Provider>{
      md_provider(false),
      md_provider(true),
      tpa_provider(K::TpaStrategy::b, "our CUDA kernel: a block per batch element (and head group), all of m"),
      tpa_provider(K::TpaStrategy::bh, "our CUDA kernel: a block per batch element and head"),
      tpa_provider(K::TpaStrategy::bn,
                   "our CUDA kernels: blocks per batch and chunk of m, then a reduction (split-k)"),
  };
});

}  // namespace

}  // namespace opbench
