// tpa_decode: tensor product attention, one decoding step (forward only).
// aq (b,1,h,r) ak (b,m,h) av (b,m,h) bq (b,1,r,d) bk (b,m,d) bv (b,m,e) -> o (b,1,h,e).
// q = scale_q aq bq; score[h,t] = scale ak[t,h] <q[h], bk[t]>; p = softmax_t;
// o[h] = sum_t p[h,t] av[t,h] bv[t]. Minimal bytes: |ak| + |av| + |bk| + |bv| + |aq| + |bq| + |o|.
#include "ops/op.hpp"

namespace opbench {

static int64_t dim_v(const Params& p) { return p.i("dim_v") > 0 ? p.i("dim_v") : p.i("dim"); }

namespace {

OpSpec make_spec() {
  OpSpec s;
  s.name = "tpa_decode";
  s.help = "tensor product attention decode step over an m-token factorised kv cache";
  s.axes = {axis_int("batch", 8, "b"), axis_int("head", 32, "h"), axis_int("rank", 16, "r"),
            axis_int("dim", 128, "d"), axis_int("dim_v", 0, "e (0: = dim)", false),
            axis_int("m", std::nullopt, "kv length")};
  for (auto& a : common_axes()) s.axes.push_back(a);
  s.modes = {"fwd"};
  s.x_axes = {"m"};
  s.shared_axes = {"batch"};
  s.providers = {{"cuda_b", "our CUDA kernel, a block per batch"}, {"cuda_bh", "our CUDA kernel, a block per batch and head"}, {"cuda_bn", "our CUDA kernels, split over m then reduced"}, {"torch", "LibTorch eager"}, {"torch_compile", "TorchInductor, compiled ahead of time (AOTInductor)"}, {"torch_naive", "LibTorch eager, q k v materialised"}, {"torch_naive_compile", "the naive form through AOTInductor"}};
  s.validate = [](const Params& p) {
    if (p.s("mode") != "fwd") throw AxisError("mode", "tpa_decode has no backward (fwd only)");
    if (p.i("dim_v") < 0) throw AxisError("dim_v", "must be >= 0");
  };
  s.title = "{op}-{metric}-{mode}-batch{batch}-head{head}-dim{dim}-rank{rank}-{dtype}";
  s.inputs = [](const Params& p) {
    int64_t b = p.i("batch"), h = p.i("head"), r = p.i("rank"), d = p.i("dim"), m = p.i("m");
    return std::vector<TensorSpec>{{"aq", {b, 1, h, r}}, {"ak", {b, m, h}}, {"av", {b, m, h}},
                                   {"bq", {b, 1, r, d}}, {"bk", {b, m, d}}, {"bv", {b, m, dim_v(p)}}};
  };
  s.output_shape = [](const Params& p) {
    return std::vector<int64_t>{p.i("batch"), 1, p.i("head"), dim_v(p)};
  };
  s.min_bytes = [](const Params& p) {
    double b = p.i("batch"), h = p.i("head"), r = p.i("rank"), d = p.i("dim"), m = p.i("m"),
           e = double(dim_v(p));
    return (2 * b * m * h + b * m * d + b * m * e + b * h * r + b * r * d + b * h * e) *
           dtype_bytes(p.s("dtype"));
  };
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench
