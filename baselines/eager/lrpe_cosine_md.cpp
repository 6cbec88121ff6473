// lrpe_cosine_md: cosine LRPE over a 1d, 2d or 3d grid, with l extra tokens first (docs/ops.md).
#include "eager.h"

namespace opbench {
namespace eager {

at::Tensor lrpe_cosine_md_forward_grid(const at::Tensor& x, const at::Tensor& theta,
                                       const std::vector<int64_t>& grid, int64_t l,
                                       const std::string& act, int64_t act_dim) {
  const int64_t k = static_cast<int64_t>(grid.size());
  require(k >= 1 && k <= 3, "lrpe_cosine_md: the grid must have 1, 2 or 3 axes");
  int64_t N = 1;
  for (int64_t s : grid) {
    require(s >= 1, "lrpe_cosine_md: grid sizes must be >= 1");
    N *= s;
  }
  require(l >= 0, "lrpe_cosine_md: l must be >= 0");
  require(x.dim() == 4, "lrpe_cosine_md: x must be (b, h, l + N, d)");
  const int64_t h = x.size(1), L = x.size(2), d = x.size(3);
  require(L == l + N, "lrpe_cosine_md: x has " + std::to_string(L) + " tokens, expected l + N = " +
                          std::to_string(l + N));
  require(theta.dim() == 2 && (theta.size(0) == h || theta.size(0) == 1),
          "lrpe_cosine_md: theta must be (h, e), (1, e) or (h, 1)");
  // A single column is a broadcast theta: e = ceil(d / k).
  const int64_t e = theta.size(1) == 1 ? (d + k - 1) / k : theta.size(1);
  require(e * k >= d, "lrpe_cosine_md: theta has e = " + std::to_string(e) +
                          " columns, needs e * md >= d");
  check_act("lrpe_cosine_md", act, act_dim, {-1, -2});

  // Grid coordinates of the N tokens, row-major (last axis fastest), float32 (at least).
  const at::Tensor th = theta.to(x.device(), at_least_float32(x)).expand({theta.size(0), e});  // (H, e)
  std::vector<at::Tensor> axes;
  for (int64_t s : grid) axes.push_back(at::arange(s, th.options()));
  const std::vector<at::Tensor> coords = at::meshgrid(axes, "ij");
  // Feature j uses axis j / e and theta column j % e: concat the axes' angles, keep d.
  std::vector<at::Tensor> per_axis;
  for (const at::Tensor& c : coords)
    per_axis.push_back(c.reshape({1, N, 1}) * th.unsqueeze(1));  // (H, N, e)
  const at::Tensor angle = at::cat(per_axis, -1).narrow(-1, 0, d);  // (H, N, d)
  const at::Tensor cos = at::cos(angle), sin = at::sin(angle);
  const at::Tensor xa = act_forward(x, act, act_dim);
  const at::Tensor xg = xa.narrow(2, l, N);
  // xg (storage dtype) * cos (float32) promotes to float32: (b, H, N, 2d).
  at::Tensor o = at::cat({xg * cos, xg * sin}, -1);
  // The extra tokens get no position: concat(xa, 0) in front of the grid tokens.
  if (l > 0) o = at::cat({at::constant_pad_nd(xa.narrow(2, 0, l), {0, d}), o}, 2);
  return o.to(x.scalar_type());
}

at::Tensor lrpe_cosine_md_forward(const at::Tensor& x, const at::Tensor& theta, int64_t md,
                                  int64_t n, int64_t l, const std::string& act,
                                  int64_t act_dim) {
  require(md >= 1 && md <= 3, "lrpe_cosine_md: md must be 1, 2 or 3");
  return lrpe_cosine_md_forward_grid(x, theta, std::vector<int64_t>(md, n), l, act, act_dim);
}

}  // namespace eager
}  // namespace opbench
