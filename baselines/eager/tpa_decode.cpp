// tpa_decode: tensor product attention, one decoding step, forward only (OPS.md).
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

// q = scale_q * sum_r aq[h, r] * bq[r, :], float32: (b, h, d)
at::Tensor tpa_query(const at::Tensor& aq, const at::Tensor& bq, double scale_q) {
  return at::einsum("bhr,brd->bhd", {aq.select(1, 0).to(at::kFloat),
                                     bq.select(1, 0).to(at::kFloat)}) *
         scale_q;
}

}  // namespace

at::Tensor tpa_decode_forward(const at::Tensor& aq, const at::Tensor& ak, const at::Tensor& av,
                              const at::Tensor& bq, const at::Tensor& bk, const at::Tensor& bv,
                              const TpaScales& scales) {
  const TpaDims t = check_tpa(aq, ak, av, bq, bk, bv);
  const at::Tensor q = tpa_query(aq, bq, scale_q_or_default(scales, t));  // (b, h, d)
  // score[t, h] = scale * scale_k * ak[t, h] * <q[h], bk[t]>: bk @ q^T, (b, m, h)
  const at::Tensor qk = at::matmul(bk.to(at::kFloat), q.transpose(1, 2));
  const at::Tensor score = qk * ak.to(at::kFloat) * (scale_or_default(scales, t) * scales.scale_k);
  const at::Tensor p = at::softmax(score, 1);  // over m
  // o[h, :] = scale_v * sum_t p[t, h] * av[t, h] * bv[t, :]: (b, h, m) @ (b, m, e)
  const at::Tensor w = (p * av.to(at::kFloat)).transpose(1, 2);
  const at::Tensor o = at::matmul(w, bv.to(at::kFloat)) * scales.scale_v;  // (b, h, e)
  return o.unsqueeze(1).to(aq.scalar_type());
}

at::Tensor tpa_decode_naive_forward(const at::Tensor& aq, const at::Tensor& ak,
                                    const at::Tensor& av, const at::Tensor& bq,
                                    const at::Tensor& bk, const at::Tensor& bv,
                                    const TpaScales& scales) {
  const TpaDims t = check_tpa(aq, ak, av, bq, bk, bv);
  const at::Tensor q = tpa_query(aq, bq, scale_q_or_default(scales, t));  // (b, h, d)
  // Materialise k (b, m, h, d) and v (b, m, h, e).
  const at::Tensor k = ak.to(at::kFloat).unsqueeze(-1) * bk.to(at::kFloat).unsqueeze(2) *
                       scales.scale_k;
  const at::Tensor v = av.to(at::kFloat).unsqueeze(-1) * bv.to(at::kFloat).unsqueeze(2) *
                       scales.scale_v;
  // Standard attention of one query per head over the m keys.
  const at::Tensor qh = q.unsqueeze(2);       // (b, h, 1, d)
  const at::Tensor kh = k.permute({0, 2, 1, 3});  // (b, h, m, d)
  const at::Tensor vh = v.permute({0, 2, 1, 3});  // (b, h, m, e)
  const at::Tensor score = at::matmul(qh, kh.transpose(-1, -2)) * scale_or_default(scales, t);
  const at::Tensor p = at::softmax(score, -1);  // (b, h, 1, m)
  const at::Tensor o = at::matmul(p, vh);       // (b, h, 1, e)
  return o.transpose(1, 2).contiguous().to(aq.scalar_type());  // (b, 1, h, e)
}

}  // namespace eager
}  // namespace opbench
