// The eager providers: "torch" for every op, "torch_naive" for tpa_decode (registered here).
// Each op's "torch" is its reference computation (Provider::reference).
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <functional>
#include <stdexcept>
#include <utility>

#include "eager.h"

namespace opbench {

namespace {

std::string runs_anywhere(const at::Device&) { return ""; }

const std::string& checked_mode(const char* op, const Params& p, bool has_bwd) {
  const std::string& mode = p.s("mode");
  if (mode == "fwd" || (has_bwd && mode == "bwd")) return mode;
  throw std::invalid_argument(std::string(op) + ": the eager provider has no mode '" + mode +
                              "'" + (has_bwd ? "" : " (forward only)"));
}

}  // namespace

Call eager::prepare_unary(const char* op, const Params& p, const Inputs& in, UnaryForward f) {
  const std::string& mode = checked_mode(op, p, /*has_bwd=*/true);
  const at::Tensor x = in[0];
  if (mode == "fwd") {
    return [f = std::move(f), x]() -> std::vector<at::Tensor> {
      at::NoGradGuard no_grad;
      return {f(x)};
    };
  }
  eager::require(in.grad_out.defined(), std::string(op) + ": bwd needs grad_out");
  at::Tensor leaf = x.detach().requires_grad_(true);
  at::Tensor o;
  {
    at::AutoGradMode grad_on(true);
    o = f(leaf);
  }
  eager::require(in.grad_out.sizes() == o.sizes(),
                 std::string(op) + ": grad_out is not shaped as the output");
  const at::Tensor grad_out = in.grad_out;
  return [o, leaf, grad_out]() -> std::vector<at::Tensor> {
    return torch::autograd::grad({o}, {leaf}, {grad_out}, /*retain_graph=*/true);
  };
}

namespace {

using eager::prepare_unary;

Provider act_torch() {
  Provider pr;
  pr.op = "act";
  pr.name = "torch";
  pr.help = "LibTorch eager: relu / sigmoid / silu, softmax in float32 cast back";
  pr.unavailable = runs_anywhere;
  pr.reference = true;
  pr.prepare = [](const Params& p, const Inputs& in) {
    const std::string act = p.s("act");
    const int64_t act_dim = p.i("act_dim");
    eager::check_act("act", act, act_dim, {-1, -2});
    return prepare_unary("act", p, in, [act, act_dim](const at::Tensor& x) {
      return eager::act_forward(x, act, act_dim);
    });
  };
  return pr;
}

// lrpe_cosine and lrpe_rotate: x (b, n, h, d), theta; act over features (-1) or the sequence (1).
using Lrpe1dForward = at::Tensor (*)(const at::Tensor&, const at::Tensor&, int64_t, const std::string&, int64_t);

Provider lrpe_1d_torch(const char* op, const char* help, Lrpe1dForward fwd) {
  Provider pr;
  pr.op = op;
  pr.name = "torch";
  pr.help = help;
  pr.unavailable = runs_anywhere;
  pr.reference = true;
  pr.prepare = [op = std::string(op), fwd](const Params& p, const Inputs& in) {
    const std::string act = p.s("act");
    const int64_t act_dim = p.i("act_dim"), offset = p.i_or("offset", 0);
    eager::check_act(op.c_str(), act, act_dim, {-1, 1});
    const at::Tensor theta = in[1];
    return prepare_unary(op.c_str(), p, in, [=](const at::Tensor& x) {
      return fwd(x, theta, offset, act, act_dim);
    });
  };
  return pr;
}

Provider lrpe_cosine_md_torch() {
  Provider pr;
  pr.op = "lrpe_cosine_md";
  pr.name = "torch";
  pr.help = "LibTorch eager: grid angle table built per call, concat(x cos, x sin)";
  pr.unavailable = runs_anywhere;
  pr.reference = true;
  pr.prepare = [](const Params& p, const Inputs& in) {
    const std::string act = p.s("act");
    const int64_t act_dim = p.i("act_dim"), md = p.i("md"), n = p.i("n"), l = p.i_or("l", 0);
    eager::check_act("lrpe_cosine_md", act, act_dim, {-1, -2});
    const at::Tensor theta = in[1];
    return prepare_unary("lrpe_cosine_md", p, in, [=](const at::Tensor& x) {
      return eager::lrpe_cosine_md_forward(x, theta, md, n, l, act, act_dim);
    });
  };
  return pr;
}

using TpaForward = at::Tensor (*)(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                  const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                  const eager::TpaScales&);

Provider tpa_decode_provider(const char* name, const char* help, TpaForward fwd, bool reference) {
  Provider pr;
  pr.op = "tpa_decode";
  pr.name = name;
  pr.help = help;
  pr.unavailable = runs_anywhere;
  pr.reference = reference;
  pr.reference_form = !reference;  // the naive form: the same op as a PyTorch user writes it too
  pr.prepare = [fwd](const Params& p, const Inputs& in) -> Call {
    checked_mode("tpa_decode", p, /*has_bwd=*/false);
    eager::require(in.tensors.size() == 6, "tpa_decode: expects aq, ak, av, bq, bk, bv");
    const std::vector<at::Tensor> t = in.tensors;
    return [fwd, t]() -> std::vector<at::Tensor> {
      at::NoGradGuard no_grad;
      return {fwd(t[0], t[1], t[2], t[3], t[4], t[5], eager::TpaScales{})};
    };
  };
  return pr;
}

const ProviderRegistration registration([] {
  return std::vector<Provider>{
      act_torch(),
      lrpe_1d_torch("lrpe_cosine", "LibTorch eager: act, angle and sin/cos in float32, concat(x cos, x sin)",
                    eager::lrpe_cosine_forward),
      lrpe_1d_torch("lrpe_rotate", "LibTorch eager: act, then rotate the halves by (offset + s) * theta",
                    eager::lrpe_rotate_forward),
      lrpe_cosine_md_torch(),
      tpa_decode_provider("torch",
                          "LibTorch eager, factorised in the storage dtype: scores "
                          "(b, h, 1, m) from the factors, softmax over m, then av, bv",
                          &eager::tpa_decode_forward, /*reference=*/true),
      tpa_decode_provider("torch_naive",
                          "LibTorch eager, naive: materialises k, v (b, m, h, d) in the "
                          "storage dtype, then attention",
                          &eager::tpa_decode_naive_forward, /*reference=*/false),
  };
});

}  // namespace

}  // namespace opbench
