// tpa_decode: tensor product attention, one decoding step, forward only (docs/ops.md).
#include <cmath>

#include "eager.h"

namespace opbench {
namespace eager {

namespace {

struct TpaDims {
  int64_t b, m, h, r, d, e;
};

TpaDims check_tpa(const at::Tensor& aq, const at::Tensor& ak, const at::Tensor& av,
                  const at::Tensor& bq, const at::Tensor& bk, const at::Tensor& bv) {
  require(aq.dim() == 4 && aq.size(1) == 1, "tpa_decode: aq must be (b, 1, h, r)");
  require(bq.dim() == 4 && bq.size(1) == 1, "tpa_decode: bq must be (b, 1, r, d)");
  require(ak.dim() == 3 && av.dim() == 3 && bk.dim() == 3 && bv.dim() == 3,
          "tpa_decode: ak, av, bk, bv must have rank 3");
  TpaDims t{aq.size(0), ak.size(1), aq.size(2), aq.size(3), bq.size(3), bv.size(2)};
  require(bq.size(0) == t.b && bq.size(2) == t.r, "tpa_decode: bq must be (b, 1, r, d)");
  require(ak.size(0) == t.b && ak.size(2) == t.h, "tpa_decode: ak must be (b, m, h)");
  require(av.sizes() == ak.sizes(), "tpa_decode: av must be (b, m, h)");
  require(bk.size(0) == t.b && bk.size(1) == t.m && bk.size(2) == t.d,
          "tpa_decode: bk must be (b, m, d)");
  require(bv.size(0) == t.b && bv.size(1) == t.m, "tpa_decode: bv must be (b, m, e)");
  require(t.m >= 1, "tpa_decode: m must be >= 1");
  return t;
}

double scale_or_default(const TpaScales& s, const TpaDims& t) {
  return s.scale > 0 ? s.scale : 1.0 / std::sqrt(static_cast<double>(t.d));
}
double scale_q_or_default(const TpaScales& s, const TpaDims& t) {
  return s.scale_q > 0 ? s.scale_q : 1.0 / static_cast<double>(t.r);
}

}  // namespace

// Every tensor in the storage dtype, the factors contracted so that the softmax runs over the
// last dimension (m) of a (b, h, 1, m) tensor (baselines/python/opbench_ops.py, same calls).
at::Tensor tpa_decode_forward(const at::Tensor& aq, const at::Tensor& ak, const at::Tensor& av,
                              const at::Tensor& bq, const at::Tensor& bk, const at::Tensor& bv,
                              const TpaScales& scales) {
  const TpaDims t = check_tpa(aq, ak, av, bq, bk, bv);
  const at::Tensor s1 = at::einsum("bnrd,bmd->bnmr", {bq, bk});  // (b, 1, m, r)
  const at::Tensor s2 = at::einsum("bnhr,bnmr->bnmh", {aq, s1});  // (b, 1, m, h)
  at::Tensor s3 = at::einsum("bnmh,bmh->bhnm", {s2, ak});         // (b, h, 1, m)
  if (scales.scale_k != 1) s3 = s3 * scales.scale_k;
  // softmax(s3 * scale_q * scale): each temporary released where Python releases it, so the
  // peak memory is the Python form's too.
  at::Tensor p = s3 * scale_q_or_default(scales, t);
  p = p * scale_or_default(scales, t);
  p = at::softmax(p, -1);
  const at::Tensor w = at::einsum("bhnm,bmh->bnmh", {p, av});   // (b, 1, m, h)
  const at::Tensor o = at::einsum("bnmh,bme->bnhe", {w, bv});   // (b, 1, h, e)
  return scales.scale_v != 1 ? o * scales.scale_v : o;
}

// Materialises q, k = ak * bk and v = av * bv in the storage dtype, then standard attention
// with the softmax over the last dimension.
at::Tensor tpa_decode_naive_forward(const at::Tensor& aq, const at::Tensor& ak,
                                    const at::Tensor& av, const at::Tensor& bq,
                                    const at::Tensor& bk, const at::Tensor& bv,
                                    const TpaScales& scales) {
  const TpaDims t = check_tpa(aq, ak, av, bq, bk, bv);
  const at::Tensor q = at::einsum("bnhr,bnrd->bnhd", {aq, bq}) * scale_q_or_default(scales, t);
  at::Tensor k = at::einsum("bmh,bmd->bmhd", {ak, bk});  // (b, m, h, d)
  at::Tensor v = at::einsum("bmh,bme->bmhe", {av, bv});  // (b, m, h, e)
  if (scales.scale_k != 1) k = k * scales.scale_k;
  if (scales.scale_v != 1) v = v * scales.scale_v;
  const at::Tensor score = at::einsum("bnhd,bmhd->bhnm", {q, k}) * scale_or_default(scales, t);
  const at::Tensor p = at::softmax(score, -1);         // (b, h, 1, m)
  return at::einsum("bhnm,bmhe->bnhe", {p, v});        // (b, 1, h, e)
}

}  // namespace eager
}  // namespace opbench
