// lrpe_rotate (1d): x (b, n, h, d), d even, theta float32 (h, d/2) or broadcast (1, d/2), (h, 1).
//   angle = (offset + s) * theta[h, k];  xa = act(x, act_dim) = [x1, x2] (halves)
//   o = [x1 cos - x2 sin, x1 sin + x2 cos]                               (b, n, h, d)
//   backward: dx1 = do1 cos + do2 sin, dx2 = do2 cos - do1 sin, then the act backward.
// Bytes: forward 2|x|, backward 2|x| (+|x| when the act needs x); softmax over n reads its
// inputs twice: fwd 3|x|, bwd 5|x|. Our CUDA kernels, torch-free (kernels/lrpe_rotate/).
#pragma once
#include "args1d.h"

namespace opbench::kernels {

size_t lrpe_rotate_workspace_bytes(const LrpeArgs& a, bool backward);
void lrpe_rotate_forward(const LrpeArgs& a);
void lrpe_rotate_backward(const LrpeArgs& a);

}  // namespace opbench::kernels
