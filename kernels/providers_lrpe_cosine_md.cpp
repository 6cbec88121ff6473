// Providers of our CUDA kernels for lrpe_cosine_md ("cuda", "cuda_cache"). The binding
// validates the tensors (rank, dtype, contiguity, device, shapes) with a one-line error, does
// everything that is not the measured work in prepare (the cos/sin table of cuda_cache,
// workspace sizing), and the Call allocates only what the op must: the output (forward) or dx
// (backward).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/binding.h"
#include "kernels/lrpe_cosine_md.h"
#include "torch/providers/provider.hpp"

namespace opbench {

namespace {

using namespace binding;

// What a measured call of the kernels takes, all of it made in prepare.
struct MdLaunch {
  at::Tensor x, theta, cos_t, sin_t;  // cos_t, sin_t: cuda_cache's table, else undefined
  K::LrpeMdShape s{};
  K::DType dt{};
  K::Act act{};
  int act_dim = -1;
  size_t wsb = 0;  // workspace bytes
};

// theta (h, e), or broadcast (1, e) / (h, 1): made a contiguous (h, e) here, once.
at::Tensor theta_table(const std::string& op, at::Tensor theta, const at::Tensor& x, int64_t h, int64_t d,
                       int64_t md) {
  if (!theta.defined() || theta.dim() != 2) fail(op, "theta must be 2-D (h, e)");
  if (theta.scalar_type() != at::kFloat) fail(op, "theta must be float32");
  if (!theta.is_cuda() || theta.device() != x.device()) fail(op, "theta must be on x's device");
  const int64_t e = theta.size(1) == 1 ? (d + md - 1) / md : theta.size(1);
  if (theta.size(0) != h && theta.size(0) != 1)
    fail(op, "theta has shape " + shape_str(theta.sizes()) + ", expected (" + std::to_string(h) + ", e)");
  return theta.expand({h, e}).contiguous();
}

// The kernels' shape of x (b, h, l + n^md, d) against theta's e, as the launch API accepts it.
K::LrpeMdShape md_shape(const std::string& op, const at::Tensor& x, int64_t l, int64_t md, int64_t n, int64_t e,
                        K::Act act, int act_dim) {
  K::LrpeMdShape s;
  s.b = x.size(0); s.h = x.size(1); s.l = l; s.md = static_cast<int>(md); s.d = x.size(3); s.e = e;
  for (int i = 0; i < md; ++i) s.n[i] = n;
  try {
    K::lrpe_cosine_md_check(s, act, act_dim);
  } catch (const K::KernelError& err) {
    fail(op, err.what());
  }
  return s;
}

// cuda_cache's table (N, h, d) float32 of cos and sin, built once as a real cache would hold
// it: counted by the memory metric.
std::pair<at::Tensor, at::Tensor> cos_sin_table(const at::Tensor& x, const at::Tensor& theta, const K::LrpeMdShape& s,
                                                int64_t N, int64_t h, int64_t d) {
  at::Tensor cos_t = at::empty({N, h, d}, x.options().dtype(at::kFloat));
  at::Tensor sin_t = at::empty({N, h, d}, x.options().dtype(at::kFloat));
  K::lrpe_cosine_md_build_cache(theta.data_ptr<float>(), cos_t.data_ptr<float>(), sin_t.data_ptr<float>(), s,
                                current_stream());
  return {cos_t, sin_t};
}

Call forward_call(const MdLaunch& k) {
  return [k]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard g(k.x.device());
    at::Tensor out = at::empty({k.s.b, k.s.h, k.s.tokens(), 2 * k.s.d}, k.x.options());
    at::Tensor ws = workspace_on(k.x, k.wsb);
    K::lrpe_cosine_md_fwd(k.x.data_ptr(), k.theta.data_ptr<float>(),
                          k.cos_t.defined() ? k.cos_t.data_ptr<float>() : nullptr,
                          k.sin_t.defined() ? k.sin_t.data_ptr<float>() : nullptr, out.data_ptr(),
                          ws.defined() ? ws.data_ptr() : nullptr, k.wsb, k.s, k.dt, k.act, k.act_dim,
                          current_stream());
    return {out};
  };
}

Call backward_call(const MdLaunch& k, const at::Tensor& go) {
  return [k, go]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard g(k.x.device());
    at::Tensor dx = at::empty_like(k.x);
    at::Tensor ws = workspace_on(k.x, k.wsb);
    K::lrpe_cosine_md_bwd(k.x.data_ptr(), go.data_ptr(), k.theta.data_ptr<float>(),
                          k.cos_t.defined() ? k.cos_t.data_ptr<float>() : nullptr,
                          k.sin_t.defined() ? k.sin_t.data_ptr<float>() : nullptr, dx.data_ptr(),
                          ws.defined() ? ws.data_ptr() : nullptr, k.wsb, k.s, k.dt, k.act, k.act_dim,
                          current_stream());
    return {dx};
  };
}

Call prepare_md(const Params& p, const Inputs& in, bool cache) {
  const std::string op = std::string("lrpe_cosine_md/") + (cache ? "cuda_cache" : "cuda");
  const std::string mode = p.s("mode");
  if (mode != "fwd" && mode != "bwd") fail(op, "unknown mode '" + mode + "'");
  const bool bwd = mode == "bwd";
  if (in.tensors.size() != 2) fail(op, "expects inputs x, theta");
  MdLaunch k;
  k.act = parse_act(op, p.s("act"));
  k.act_dim = static_cast<int>(p.i_or("act_dim", -1));
  const int64_t md = p.i("md"), n = p.i("n"), l = p.i_or("l", 0);
  if (md < 1 || md > 3) fail(op, "md must be 1, 2 or 3, got " + std::to_string(md));
  if (n < 1 || l < 0) fail(op, "n must be >= 1 and l >= 0");

  k.x = in[0];
  if (!k.x.defined() || k.x.dim() != 4) fail(op, "x must be 4-D (b, h, l + N, d)");
  k.dt = kernel_dtype(op, k.x, "x");
  check_dtype_param(op, p, k.x);
  int64_t N = 1;
  for (int64_t i = 0; i < md; ++i) N *= n;
  const int64_t b = k.x.size(0), h = k.x.size(1), L = l + N, d = k.x.size(3);
  check_tensor(op, k.x, "x", k.x.scalar_type(), {b, h, L, d});
  k.theta = theta_table(op, in[1], k.x, h, d, md);
  k.s = md_shape(op, k.x, l, md, n, k.theta.size(1), k.act, k.act_dim);

  const c10::cuda::CUDAGuard guard(k.x.device());
  k.wsb = K::lrpe_cosine_md_workspace_bytes(k.s, k.act, k.act_dim, bwd);
  if (cache) std::tie(k.cos_t, k.sin_t) = cos_sin_table(k.x, k.theta, k.s, N, h, d);
  if (!bwd) return forward_call(k);
  const at::Tensor go = in.grad_out;
  check_tensor(op, go, "grad_out", k.x.scalar_type(), {b, h, L, 2 * d});
  if (go.device() != k.x.device()) fail(op, "grad_out must be on x's device");
  return backward_call(k, go);
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

const ProviderRegistration registration([] {
  return std::vector<Provider>{md_provider(false), md_provider(true)};
});

}  // namespace

}  // namespace opbench
