// lrpe_cosine (1d), forward and backward, with the activation fused (one pass over memory).
//
//   angle[s, h, k] = (offset + s) * theta[h, k]            float32 (the product rounded, as in OPS.md)
//   xa = act(x, act_dim)                                  x (b, n, h, d)
//   o  = concat(xa * cos(angle), xa * sin(angle))         (b, n, h, 2d)
//   backward: dxa = do_c cos + do_s sin,  dx = act backward of dxa
//
// Minimal bytes (OPS.md): forward 3|x| (read x, write 2|x|); backward 3|x| (read do = 2|x|,
// write dx), +|x| when the act needs x (everything but none). Softmax over the sequence reads
// its inputs twice: forward 4|x|, backward 7|x| (softmax_seq.cuh).
//
// Work per element: one unit of 8 elements (16 bytes of bf16) per thread and row, 4 rows per
// step, the next step prefetched into L2; sin and cos of each float32 angle range-reduced,
// accurate to ~5e-7 at any n (rows1d.cuh).
#include "launch1d.cuh"
#include "lrpe_cosine.h"

namespace opbench::kernels {
namespace {

struct CosOp {
  static constexpr int P = 1, Q = 2, kRptF = 4, kRptB = 2, kRptBRF = 4, kRptBRB = 2;
  static constexpr bool kAngle = true;
  static constexpr bool kElemRows = true;
  // Row-kernel settings per variant from the measurements (notes/perf-1d.md, run 4). Large
  // calls: tiles of 2 steps (4 for feature softmax) with the prefetch, batch rows backward and
  // for feature softmax. Smaller calls: 16-step tiles, batch rows, the prefetch only for the
  // backward with an exp per element. Softmax over n: the prefetch on.
  static rows1d::RowChoice choose(bool bwd, Act act, bool seq, bool large) {
    if (seq) return {16, false, true};
    const bool feat = act == Act::softmax;
    if (large) return {feat ? 4 : 2, feat || bwd, true};
    return {16, true, !feat && bwd && (act == Act::sigmoid || act == Act::silu)};
  }
  template <int V>
  __device__ static __forceinline__ void fwd(const float (&xa)[1][V], const float (&c)[V],
                                             const float (&s)[V], float (&o)[2][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      o[0][e] = xa[0][e] * c[e];
      o[1][e] = xa[0][e] * s[e];
    }
  }
  template <int V>
  __device__ static __forceinline__ void bwd(const float (&d)[2][V], const float (&c)[V],
                                             const float (&s)[V], float (&g)[1][V]) {
#pragma unroll
    for (int e = 0; e < V; ++e) g[0][e] = fmaf(d[0][e], c[e], d[1][e] * s[e]);
  }
};

}  // namespace

size_t lrpe_cosine_workspace_bytes(const LrpeArgs& a, bool backward) {
  return rows1d::workspace_bytes<CosOp>(rows1d::lrpe_call(a, backward, false));
}
void lrpe_cosine_forward(const LrpeArgs& a) {
  rows1d::launch<CosOp>(rows1d::lrpe_call(a, false, false));
}
void lrpe_cosine_backward(const LrpeArgs& a) {
  rows1d::launch<CosOp>(rows1d::lrpe_call(a, true, false));
}

}  // namespace opbench::kernels
