// lrpe_rotate (1d): rotary form, halves (not interleaved pairs) (docs/ops.md).
#include "eager.h"

namespace opbench {
namespace eager {

at::Tensor lrpe_rotate_forward(const at::Tensor& x, const at::Tensor& theta, int64_t offset,
                               const std::string& act, int64_t act_dim) {
  require(x.dim() == 4, "lrpe_rotate: x must be (b, n, h, d)");
  const int64_t n = x.size(1), h = x.size(2), d = x.size(3);
  require(d % 2 == 0, "lrpe_rotate: d must be even");
  require(theta.dim() == 2 && (theta.size(0) == h || theta.size(0) == 1) &&
              (theta.size(1) == d / 2 || theta.size(1) == 1),
          "lrpe_rotate: theta must be (h, d/2), (1, d/2) or (h, 1)");
  require(offset >= 0, "lrpe_rotate: offset must be >= 0");
  check_act("lrpe_rotate", act, act_dim, {-1, 1});

  // angle[s, h, k] = (offset + s) * theta[h, k], in float32 (at least): (n, h|1, d/2|1)
  const at::Tensor th = theta.to(x.device(), at_least_float32(x));
  const at::Tensor pos = at::arange(n, th.options()) + offset;
  const at::Tensor angle = pos.view({n, 1, 1}) * th;
  const at::Tensor cos = at::cos(angle), sin = at::sin(angle);
  const at::Tensor xa = act_forward(x, act, act_dim);
  const std::vector<at::Tensor> halves = xa.chunk(2, -1);
  const at::Tensor &x1 = halves[0], &x2 = halves[1];
  // Products promote to float32; cast back at the end. Each half's products are released once
  // the half is formed, the halves once concatenated, as in Python.
  at::Tensor o;
  {
    const at::Tensor o1 = x1 * cos - x2 * sin;
    const at::Tensor o2 = x1 * sin + x2 * cos;
    o = at::cat({o1, o2}, -1);
  }
  return o.to(x.scalar_type());
}

}  // namespace eager
}  // namespace opbench
