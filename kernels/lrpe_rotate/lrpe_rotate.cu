// lrpe_rotate (1d), forward and backward, with the activation fused (one pass over memory).
//
//   angle[s, h, k] = (offset + s) * theta[h, k]            k < d/2, float32 (rounded product)
//   xa = act(x, act_dim) = concat(x1, x2)                 halves of d, x (b, n, h, d)
//   o  = concat(x1 cos - x2 sin, x1 sin + x2 cos)         (b, n, h, d)
//   backward (rotation by -angle): dx1 = do1 cos + do2 sin, dx2 = do2 cos - do1 sin,
//   then the act backward.
//
// Minimal bytes (OPS.md): forward 2|x|; backward 2|x| (read do, write dx), +|x| when the act
// needs x. Softmax over the sequence reads its inputs twice: forward 3|x|, backward 5|x|.
//
// A unit is a pair of 16-byte vectors, one from each half (x1[k..k+8), x2[k..k+8)), so one
// angle serves 2 elements; 2 rows per step, the next step prefetched into L2.
#include "kernels/lrpe_rotate.h"
#include "kernels/rows1d/launch.cuh"
#include "kernels/rows1d/lrpe_call.h"

namespace opbench::kernels {
namespace {

struct RotOp {
  static constexpr int P = 2, Q = 2, kRptF = 2, kRptB = 2, kRptBRF = 4, kRptBRB = 2;
  static constexpr bool kAngle = true;
  static constexpr bool kElemRows = true;
  // Row-kernel settings per variant from the measurements (docs/kernels.md, lrpe_rotate). Large
  // calls: tiles of 2 steps with the prefetch, batch rows for feature softmax. Smaller calls:
  // 16-step tiles, batch rows, the prefetch for the forward with softmax. Softmax over n: the
  // prefetch forward; the resident strategy for n in (512, 8192] forward, (512, 4096] backward.
  static rows1d::RowChoice choose(bool bwd, Act act, bool seq, bool large) {
    if (seq) return {16, false, !bwd, 512, bwd ? 4096 : 8192};
    const bool feat = act == Act::softmax;
    if (large) return {2, feat, true};
    return {16, true, !bwd && feat};
  }
  template <int V>
  __device__ static __forceinline__ void fwd(const float (&xa)[2][V], const float (&c)[V],
                                             const float (&s)[V], float (&o)[2][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      o[0][e] = fmaf(xa[0][e], c[e], -xa[1][e] * s[e]);
      o[1][e] = fmaf(xa[0][e], s[e], xa[1][e] * c[e]);
    }
  }
  template <int V>
  __device__ static __forceinline__ void bwd(const float (&d)[2][V], const float (&c)[V],
                                             const float (&s)[V], float (&g)[2][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      g[0][e] = fmaf(d[0][e], c[e], d[1][e] * s[e]);
      g[1][e] = fmaf(d[1][e], c[e], -d[0][e] * s[e]);
    }
  }
};

}  // namespace

size_t lrpe_rotate_workspace_bytes(const LrpeArgs& a, bool backward) {
  return rows1d::workspace_bytes<RotOp>(rows1d::lrpe_call(a, backward, true));
}
void lrpe_rotate_forward(const LrpeArgs& a) {
  rows1d::launch<RotOp>(rows1d::lrpe_call(a, false, true));
}
void lrpe_rotate_backward(const LrpeArgs& a) {
  rows1d::launch<RotOp>(rows1d::lrpe_call(a, true, true));
}

}  // namespace opbench::kernels
