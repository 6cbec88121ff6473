// lrpe_cosine (1d): x (b, n, h, d), theta float32 (h, d) or broadcast (1, d), (h, 1); offset.
//   angle = (offset + s) * theta[h, k];  xa = act(x, act_dim);  o = [xa cos, xa sin] (b, n, h, 2d)
//   backward: dxa = do_c cos + do_s sin, dx = act backward of dxa.
// Bytes: forward 3|x|, backward 3|x| (+|x| when the act needs x); softmax over n reads its
// inputs twice: fwd 4|x|, bwd 7|x|. Our CUDA kernels, torch-free (kernels/lrpe_cosine/).
#pragma once
#include "args1d.h"

namespace opbench::kernels {

size_t lrpe_cosine_workspace_bytes(const LrpeArgs& a, bool backward);
// o = lrpe_cosine(x): a.x, a.theta -> a.out (b, n, h, 2d).
void lrpe_cosine_forward(const LrpeArgs& a);
// dx: a.x, a.theta, a.dout (b, n, h, 2d) -> a.out (b, n, h, d).
void lrpe_cosine_backward(const LrpeArgs& a);

}  // namespace opbench::kernels
