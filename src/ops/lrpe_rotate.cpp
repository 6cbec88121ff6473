// lrpe_rotate (1d): rotary form. x1, x2 = halves of act(x); o = concat(x1 cos - x2 sin,
// x1 sin + x2 cos), angle = (offset + s) theta[h, k]. x (b, n, h, d), d even, theta (h, d/2).
// Minimal bytes: forward 2|x|; backward 2|x| (+|x| when the act needs x).
#include "ops/op.hpp"

namespace opbench {

namespace {

OpSpec make_spec() {
  OpSpec s = lrpe_1d_base("lrpe_rotate", 2, 1);
  s.help = "rotary linear relative positional encoding; x (b, n, h, d), d even";
  auto base_validate = s.validate;
  s.validate = [base_validate](const Params& p) {
    if (p.i("dim") % 2 != 0)
      throw AxisError("dim", "lrpe_rotate needs an even dim, got " + std::to_string(p.i("dim")));
    base_validate(p);
  };
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench
