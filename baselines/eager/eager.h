// LibTorch eager baselines of the five ops (docs/ops.md): the reference PyTorch code, the same ATen
// calls in the same order as baselines/python/opbench_ops.py. Tensors stay in the storage dtype
// (ATen computes each op in float32 inside and rounds once); the only casts are the
// reference's own (softmax as an activation in float32 cast back; the LRPE angle tables are
// float32, so x * cos promotes until the final cast back). docs/baselines.md says why per op.
// Every function except the tpa_decode ones is differentiable through autograd (they are
// compositions of ATen ops); baselines/eager/providers.cpp wraps them as providers.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "torch/providers/provider.hpp"

namespace opbench {
namespace eager {

// The call of an op whose one differentiable input is x = inputs[0]; `f` computes its output
// from x, holding the other inputs and the point's axes (baselines/eager/providers.cpp).
//   fwd: f(x) under no-grad, returns {o}.
//   bwd: here, x becomes a leaf requiring grad and f runs once with grad on (the graph is
//        kept); the call is autograd::grad of o w.r.t. x with grad_out, graph retained,
//        returning {dx} (nothing accumulates into .grad).
using UnaryForward = std::function<at::Tensor(const at::Tensor& x)>;
Call prepare_unary(const char* op, const Params& p, const Inputs& in, UnaryForward f);

// Throws std::invalid_argument(message) unless ok (shape and argument checks).
inline void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

// The dtype of the reference's own float32 steps (the softmax, the LRPE angle tables):
// float32, or x's when wider, so that the same code run on float64 inputs (the check's
// reference computation, Provider::reference) is a float64 computation throughout.
inline at::ScalarType at_least_float32(const at::Tensor& x) {
  return at::promote_types(at::kFloat, x.scalar_type());
}

// act: x (b, h, n, d) (any rank works); act in none|relu|sigmoid|silu|softmax.
// act_dim is the softmax dimension (ignored by the elementwise acts); softmax runs in
// float32 (float64 for float64 x) and is cast back. act "none" returns x itself (no copy).
at::Tensor act_forward(const at::Tensor& x, const std::string& act, int64_t act_dim);

// Throws std::invalid_argument (naming `op`) for an unknown act, or for softmax along a
// dimension not in `allowed_dims`.
void check_act(const char* op, const std::string& act, int64_t act_dim,
               const std::vector<int64_t>& allowed_dims);

// lrpe_cosine: x (b, n, h, d), theta float32 (h, d) | (1, d) | (h, 1); act_dim -1 (feature)
// or 1 (sequence). Returns (b, n, h, 2d) in x's dtype.
at::Tensor lrpe_cosine_forward(const at::Tensor& x, const at::Tensor& theta, int64_t offset,
                               const std::string& act, int64_t act_dim);

// lrpe_rotate: x (b, n, h, d), d even, theta float32 (h, d/2) | (1, d/2) | (h, 1).
// Returns (b, n, h, d) in x's dtype.
at::Tensor lrpe_rotate_forward(const at::Tensor& x, const at::Tensor& theta, int64_t offset,
                               const std::string& act, int64_t act_dim);

// lrpe_cosine_md over a grid of any sizes: x (b, h, l + N, d) with N = prod(grid) (grid has
// 1..3 axes, row-major, last axis fastest), theta float32 (h, e) | (1, e) | (h, 1) with
// e * grid.size() >= d (a theta with one column is broadcast to e = ceil(d / grid.size())).
// act_dim -1 (feature) or -2 (sequence, over all l + N tokens). Returns (b, h, l + N, 2d).
at::Tensor lrpe_cosine_md_forward_grid(const at::Tensor& x, const at::Tensor& theta,
                                       const std::vector<int64_t>& grid, int64_t l,
                                       const std::string& act, int64_t act_dim);
// The cube: grid {n} * md.
at::Tensor lrpe_cosine_md_forward(const at::Tensor& x, const at::Tensor& theta, int64_t md,
                                  int64_t n, int64_t l, const std::string& act,
                                  int64_t act_dim);

// tpa_decode scales; a value <= 0 for scale / scale_q means the docs/ops.md default
// (scale = d^-0.5, scale_q = 1/r).
struct TpaScales {
  double scale = 0;
  double scale_q = 0;
  double scale_k = 1;
  double scale_v = 1;
};

// tpa_decode, forward only: aq (b, 1, h, r), ak (b, m, h), av (b, m, h), bq (b, 1, r, d),
// bk (b, m, d), bv (b, m, e) -> o (b, 1, h, e), every step in the storage dtype.
// Factorised: never materialises k, v of size (b, m, h, d); the scores are contracted from
// the factors into (b, h, 1, m), so the softmax runs over the last dimension.
at::Tensor tpa_decode_forward(const at::Tensor& aq, const at::Tensor& ak, const at::Tensor& av,
                              const at::Tensor& bq, const at::Tensor& bk, const at::Tensor& bv,
                              const TpaScales& scales = {});
// Naive: materialises q (b, 1, h, d), k (b, m, h, d), v (b, m, h, e), then standard attention
// (softmax over the last dimension).
at::Tensor tpa_decode_naive_forward(const at::Tensor& aq, const at::Tensor& ak,
                                    const at::Tensor& av, const at::Tensor& bq,
                                    const at::Tensor& bk, const at::Tensor& bv,
                                    const TpaScales& scales = {});

}  // namespace eager

}  // namespace opbench
