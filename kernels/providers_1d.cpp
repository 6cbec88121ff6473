// Providers "cuda" of our 1d kernels: act, lrpe_cosine, lrpe_rotate (kernels/act.cu,
// lrpe_cosine.cu, lrpe_rotate.cu through their torch-free launch API).
//
// prepare validates the tensors (rank, dtype, contiguity, CUDA device, theta's shape and its
// broadcasts) and the point's parameters, with a one-line error, and sizes the workspace; the
// Call allocates only what the op must: the output (forward) or dx (backward), plus the small
// statistics buffer of softmax over the sequence (split and resident strategies), on the current
// stream. act none returns x itself (forward) or grad_out itself (backward): no copy, no bytes.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/act.h"
#include "kernels/lrpe_cosine.h"
#include "kernels/lrpe_rotate.h"
#include "kernels/binding.h"
#include "torch/providers/provider.hpp"

namespace opbench {

namespace {

using namespace binding;

// The storage dtype of x, which must also be the point's dtype.
K::DType storage_dtype(const std::string& op, const Params& p, const at::Tensor& x) {
  const K::DType dt = kernel_dtype(op, x, "x");
  check_dtype_param(op, p, x);
  return dt;
}

// A 4-D contiguous tensor on a CUDA device.
void check_x(const std::string& op, const at::Tensor& x, const char* layout) {
  if (!x.defined()) fail(op, "x is missing");
  if (x.dim() != 4) fail(op, "x must be 4-D " + std::string(layout) + ", has shape " + shape_str(x.sizes()));
  if (!x.is_cuda()) fail(op, "x must be on a CUDA device, is on " + x.device().str());
  if (!x.is_contiguous()) fail(op, "x must be contiguous");
}

// grad_out: defined, on x's device, x's dtype, the output's shape, contiguous.
void check_grad(const std::string& op, const at::Tensor& g, const at::Tensor& x,
                const std::vector<int64_t>& shape) {
  if (!g.defined()) fail(op, "backward needs grad_out");
  if (!g.is_cuda() || g.device() != x.device()) fail(op, "grad_out must be on x's device");
  if (g.scalar_type() != x.scalar_type())
    fail(op, "grad_out has dtype " + std::string(c10::toString(g.scalar_type())) + ", x has " +
                 std::string(c10::toString(x.scalar_type())));
  if (g.sizes() != at::IntArrayRef(shape))
    fail(op, "grad_out has shape " + shape_str(g.sizes()) + ", expected " + shape_str(shape));
  if (!g.is_contiguous()) fail(op, "grad_out must be contiguous");
}

// $OPBENCH_TUNING_1D ("key=value,..."; kernels/args1d.h) applied once, before the first call:
// a sweep can then time a kernel variant against the defaults (one run each, then opbench diff).
void apply_env_tuning(const std::string& op) {
  static const std::string error = [] {
    const char* spec = std::getenv("OPBENCH_TUNING_1D");
    return spec ? K::apply_tuning_1d(spec, K::tuning_1d()) : std::string();
  }();
  if (!error.empty()) fail(op, "OPBENCH_TUNING_1D: " + error);
}

// ---------------------------------------------------------------------------------------------
// act: x (b, h, n, d)

Call prepare_act(const Params& p, const Inputs& in) {
  const std::string op = "act/cuda";
  apply_env_tuning(op);
  const bool bwd = backward_mode(op, p);
  if (in.tensors.size() != 1) fail(op, "expects one input, x");
  const at::Tensor x = in[0];
  check_x(op, x, "(b, h, n, d)");
  K::ActArgs a;
  a.dtype = storage_dtype(op, p, x);
  a.act = parse_act(op, p.s("act"));
  a.act_dim = static_cast<int>(p.i_or("act_dim", -1));
  a.b = x.size(0), a.h = x.size(1), a.n = x.size(2), a.d = x.size(3);
  if (bwd) check_grad(op, in.grad_out, x, x.sizes().vec());
  if (a.act == K::Act::none) {  // the identity: x itself, do itself; nothing is moved
    if (!bwd) return [x]() -> std::vector<at::Tensor> { return {x}; };
    const at::Tensor g = in.grad_out;
    return [g]() -> std::vector<at::Tensor> { return {g}; };
  }
  const c10::cuda::CUDAGuard guard(x.device());
  size_t wsb = 0;
  try {
    wsb = K::act_workspace_bytes(a, bwd);  // validates the sizes and act_dim
  } catch (const K::KernelError& e) {
    fail(op, e.what());
  }
  const at::Tensor g = bwd ? in.grad_out : at::Tensor();
  return [x, g, a, wsb, bwd]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard dg(x.device());
    at::Tensor out = at::empty(x.sizes(), x.options());  // o, or dx
    at::Tensor ws = workspace_on(x, wsb);
    K::ActArgs args = a;
    args.x = x.data_ptr();
    args.dout = bwd ? g.data_ptr() : nullptr;
    args.out = out.data_ptr();
    args.workspace = ws.defined() ? ws.data_ptr() : nullptr;
    args.workspace_bytes = wsb;
    args.stream = current_stream();
    if (bwd) K::act_backward(args);
    else K::act_forward(args);
    return {out};
  };
}

// ---------------------------------------------------------------------------------------------
// lrpe_cosine / lrpe_rotate (1d): x (b, n, h, d), theta float32 (h, k) or (1, k) or (h, 1)
// with k = d (cosine) or d / 2 (rotate).

Call prepare_lrpe(const Params& p, const Inputs& in, bool rotate) {
  const std::string op = std::string(rotate ? "lrpe_rotate" : "lrpe_cosine") + "/cuda";
  apply_env_tuning(op);
  const bool bwd = backward_mode(op, p);
  if (in.tensors.size() != 2) fail(op, "expects inputs x, theta");
  const at::Tensor x = in[0], theta = in[1];
  check_x(op, x, "(b, n, h, d)");
  K::LrpeArgs a;
  a.dtype = storage_dtype(op, p, x);
  a.act = parse_act(op, p.s("act"));
  a.act_dim = static_cast<int>(p.i_or("act_dim", -1));
  a.offset = p.i_or("offset", 0);
  a.b = x.size(0), a.n = x.size(1), a.h = x.size(2), a.d = x.size(3);
  if (rotate && a.d % 2 != 0) fail(op, "d must be even, got " + std::to_string(a.d));
  const int64_t k = rotate ? a.d / 2 : a.d;
  const std::string want = "(" + std::to_string(a.h) + ", " + std::to_string(k) + "), (1, " +
                           std::to_string(k) + ") or (" + std::to_string(a.h) + ", 1)";
  if (!theta.defined() || theta.dim() != 2) fail(op, "theta must be 2-D " + want);
  if (theta.scalar_type() != at::kFloat)
    fail(op, "theta must be float32, is " + std::string(c10::toString(theta.scalar_type())));
  if (!theta.is_cuda() || theta.device() != x.device()) fail(op, "theta must be on x's device");
  const int64_t r0 = theta.size(0), r1 = theta.size(1);
  if (!((r0 == a.h || r0 == 1) && (r1 == k || r1 == 1)) || (r0 == 1 && r1 == 1 && a.h > 1 && k > 1))
    fail(op, "theta has shape " + shape_str(theta.sizes()) + ", expected " + want);
  // Broadcast dimensions get stride 0; any strides are fine otherwise.
  a.theta_sh = r0 == 1 ? 0 : theta.stride(0);
  a.theta_sk = r1 == 1 ? 0 : theta.stride(1);
  const std::vector<int64_t> out_shape = {a.b, a.n, a.h, rotate ? a.d : 2 * a.d};
  if (bwd) check_grad(op, in.grad_out, x, out_shape);
  const c10::cuda::CUDAGuard guard(x.device());
  size_t wsb = 0;
  try {  // validates the sizes, d, offset and act_dim
    K::LrpeArgs probe = a;
    probe.theta = theta.data_ptr<float>();
    wsb = rotate ? K::lrpe_rotate_workspace_bytes(probe, bwd) : K::lrpe_cosine_workspace_bytes(probe, bwd);
  } catch (const K::KernelError& e) {
    fail(op, e.what());
  }
  const at::Tensor g = bwd ? in.grad_out : at::Tensor();
  return [x, theta, g, a, wsb, bwd, rotate, out_shape]() -> std::vector<at::Tensor> {
    const c10::cuda::CUDAGuard dg(x.device());
    at::Tensor out = bwd ? at::empty(x.sizes(), x.options()) : at::empty(out_shape, x.options());
    at::Tensor ws = workspace_on(x, wsb);
    K::LrpeArgs args = a;
    args.x = x.data_ptr();
    args.theta = theta.data_ptr<float>();
    args.dout = bwd ? g.data_ptr() : nullptr;
    args.out = out.data_ptr();
    args.workspace = ws.defined() ? ws.data_ptr() : nullptr;
    args.workspace_bytes = wsb;
    args.stream = current_stream();
    if (rotate) bwd ? K::lrpe_rotate_backward(args) : K::lrpe_rotate_forward(args);
    else bwd ? K::lrpe_cosine_backward(args) : K::lrpe_cosine_forward(args);
    return {out};
  };
}

Provider provider(const char* op, const char* help,
                  std::function<Call(const Params&, const Inputs&)> prepare) {
  Provider pr;
  pr.op = op;
  pr.name = "cuda";
  pr.help = help;
  pr.unavailable = needs_cuda;
  pr.prepare = std::move(prepare);
  pr.tuning_env = {"OPBENCH_TUNING_1D"};
  return pr;
}

const ProviderRegistration registration([] {
  return std::vector<Provider>{
      provider("act",
               "our CUDA kernels: 16-byte elementwise, softmax over d in a lane group per row, "
               "over n by column statistics (block, split, or resident: one read)",
               prepare_act),
      provider("lrpe_cosine",
               "our CUDA kernels: act fused, one pass, sin/cos of the float32 angle range-reduced",
               [](const Params& p, const Inputs& in) { return prepare_lrpe(p, in, false); }),
      provider("lrpe_rotate",
               "our CUDA kernels: act fused, one pass, halves rotated by the float32 angle",
               [](const Params& p, const Inputs& in) { return prepare_lrpe(p, in, true); }),
  };
});

}  // namespace

}  // namespace opbench
