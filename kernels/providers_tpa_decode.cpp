// Providers of our CUDA kernels for tpa_decode ("cuda_b", "cuda_bh", "cuda_bn"). The binding
// validates the tensors (rank, dtype, contiguity, device, shapes) with a one-line error, does
// everything that is not the measured work in prepare (the launch plan, workspace sizing,
// cuda_bn's zeroed workspace of work counters and split partials), and the Call allocates only
// the output.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/binding.h"
#include "kernels/tpa_decode.h"
#include "torch/providers/provider.hpp"

namespace opbench {

namespace {

using namespace binding;

// The shape and dtype the tensors give (the point's dtype), each tensor checked against them
// (rank, dtype, contiguity, device).
struct TpaTensors {
  K::TpaShape s;
  K::DType dt;
};

TpaTensors checked_tensors(const std::string& op, const Params& p, const Inputs& in) {
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
  return {s, dt};
}

// The point's axes, where it gives them, agree with the tensors' shape.
void check_point_axes(const std::string& op, const Params& p, const K::TpaShape& s) {
  auto param_is = [&](const char* axis, int64_t v) {
    if (p.has(axis) && p.i(axis) > 0 && p.i(axis) != v)
      fail(op, std::string("tensors give ") + axis + " = " + std::to_string(v) + ", the point says " +
                   std::to_string(p.i(axis)));
  };
  param_is("batch", s.b); param_is("head", s.h); param_is("rank", s.r); param_is("dim", s.d);
  param_is("dim_v", s.e); param_is("m", s.m);
}

// The launch plan (sizes checked, device queried), made once here, not in every measured call.
K::TpaPlan launch_plan(const std::string& op, const K::TpaShape& s, K::DType dt, K::TpaStrategy strategy) {
  try {
    return K::TpaPlan(s, dt, strategy);
  } catch (const K::KernelError& err) {
    fail(op, err.what());
  }
}

Call prepare_tpa(const Params& p, const Inputs& in, K::TpaStrategy strategy) {
  const std::string op = std::string("tpa_decode/cuda_") + K::tpa_strategy_name(strategy);
  if (p.has("mode") && p.s("mode") != "fwd") fail(op, "forward only (mode '" + p.s("mode") + "')");
  const TpaTensors checked = checked_tensors(op, p, in);
  const K::TpaShape s = checked.s;
  const at::Tensor aq = in[0], ak = in[1], av = in[2], bq = in[3], bk = in[4], bv = in[5];
  check_point_axes(op, p, s);
  const K::TpaScales scales = K::TpaScales::defaults(s);
  const c10::cuda::CUDAGuard guard(aq.device());
  const K::TpaPlan plan = launch_plan(op, s, checked.dt, strategy);
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
      tpa_provider(K::TpaStrategy::b, "our CUDA kernel: a block per batch element (and head group), all of m"),
      tpa_provider(K::TpaStrategy::bh, "our CUDA kernel: a block per batch element and head"),
      tpa_provider(K::TpaStrategy::bn,
                   "our CUDA kernels: blocks per batch and chunk of m, then a reduction (split-k)"),
  };
});

}  // namespace

}  // namespace opbench
