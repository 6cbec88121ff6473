// lrpe_cosine (1d): linear relative positional encoding, cosine form (docs/ops.md).
#include "eager.h"

namespace opbench {
namespace eager {

at::Tensor lrpe_cosine_forward(const at::Tensor& x, const at::Tensor& theta, int64_t offset,
                               const std::string& act, int64_t act_dim) {
  require(x.dim() == 4, "lrpe_cosine: x must be (b, n, h, d)");
  const int64_t n = x.size(1), h = x.size(2), d = x.size(3);
  require(theta.dim() == 2 && (theta.size(0) == h || theta.size(0) == 1) &&
              (theta.size(1) == d || theta.size(1) == 1),
          "lrpe_cosine: theta must be (h, d), (1, d) or (h, 1)");
  require(offset >= 0, "lrpe_cosine: offset must be >= 0");
  check_act("lrpe_cosine", act, act_dim, {-1, 1});

  // angle[s, h, k] = (offset + s) * theta[h, k], in float32 (at least): (n, h|1, d|1)
  const at::Tensor th = theta.to(x.device(), at_least_float32(x));
  const at::Tensor pos = at::arange(n, th.options()) + offset;
  const at::Tensor angle = pos.view({n, 1, 1}) * th;
  const at::Tensor cos = at::cos(angle), sin = at::sin(angle);
  const at::Tensor xa = act_forward(x, act, act_dim);
  // xa (storage dtype) * cos (float32) promotes to float32; cast back at the end. The products
  // are released before the cast, as in Python.
  const at::Tensor o = at::cat({xa * cos, xa * sin}, -1);
  return o.to(x.scalar_type());
}

}  // namespace eager
}  // namespace opbench
