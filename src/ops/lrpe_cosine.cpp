// lrpe_cosine (1d): o = concat(xa cos(angle), xa sin(angle)), angle = (offset + s) theta[h, k],
// xa = act(x). x (b, n, h, d), theta (h, d) float32 -> o (b, n, h, 2d).
// Minimal bytes: forward 3|x| (read x, write 2|x|); backward 3|x| (read do = 2|x|, write dx),
// +|x| when the act needs x.
#include "ops/op.hpp"

namespace opbench {

namespace {

OpSpec make_spec() {
  OpSpec s = lrpe_1d_base("lrpe_cosine", 1, 2);
  s.help = "cosine linear relative positional encoding; x (b, n, h, d) -> (b, n, h, 2d)";
  return s;
}

const OpRegistration registration(make_spec);

}  // namespace

}  // namespace opbench
