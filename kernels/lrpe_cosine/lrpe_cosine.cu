// lrpe_cosine (1d), forward and backward, with the activation fused (one pass over memory).
//
//   angle[s, h, k] = (offset + s) * theta[h, k]            float32 (the product rounded, as in OPS.md)
//   xa = act(x, act_dim)                                  x (b, n, h, d)
//   o  = concat(xa * cos(angle), xa * sin(angle))         (b, n, h, 2d)
//   backward: dxa = do_c cos + do_s sin,  dx = act backward of dxa
//
// Minimal bytes (OPS.md): forward 3|x| (read x, write 2|x|); backward 3|x| (read do = 2|x|,
// write dx), +|x| when the act needs x (everything but none). Softmax over the sequence reads
// its inputs twice: forward 4|x|, backward 7|x| (rows1d/softmax_seq.cuh).
//
// Work per element: one unit of 8 elements (16 bytes of bf16) per thread and row, 4 rows per
// step, the next step prefetched into L2; sin and cos of each float32 angle range-reduced,
// accurate to ~5e-7 at any n (rows1d/math.cuh). Small backward calls with an elementwise act run
// a flat kernel instead (one unit per thread, no theta table; bwd_flat_kernel.cuh).
#include "kernels/lrpe_cosine.h"
#include "kernels/lrpe_cosine/bwd_flat_kernel.cuh"
#include "kernels/rows1d/launch.cuh"
#include "kernels/rows1d/lrpe_call.h"

namespace opbench::kernels {
namespace {

using lrpe_cosine::cos_bwd_flat_kernel;

struct CosOp {
  static constexpr int P = 1, Q = 2, kRptF = 4, kRptB = 2, kRptBRF = 4, kRptBRB = 2;
  static constexpr bool kAngle = true;
  static constexpr bool kElemRows = true;
  // Row-kernel settings per variant from the measurements (docs/kernels.md, lrpe_cosine). Large
  // calls: tiles of 2 steps (4 for feature softmax) with the prefetch, batch rows backward and
  // for feature softmax. Smaller calls: 16-step tiles, batch rows, the prefetch only for the
  // backward with an exp per element. Softmax over n: the prefetch on; the resident strategy
  // for n in (512, 4096] forward, (256, 2048] backward.
  static rows1d::RowChoice choose(bool bwd, Act act, bool seq, bool large) {
    if (seq) return {16, false, true, bwd ? 256 : 512, bwd ? 2048 : 4096};
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

template <typename T, int V>
void launch_flat_bwd(const rows1d::Call& c, const rows1d::Args& a, int64_t nunits) {
  const unsigned grid = rows1d::grid_of((nunits + rows1d::kThreads - 1) / rows1d::kThreads, c.op);
  switch (c.act) {
    case Act::none: cos_bwd_flat_kernel<T, V, Act::none><<<grid, rows1d::kThreads, 0, c.stream>>>(a, nunits); break;
    case Act::relu: cos_bwd_flat_kernel<T, V, Act::relu><<<grid, rows1d::kThreads, 0, c.stream>>>(a, nunits); break;
    case Act::sigmoid: cos_bwd_flat_kernel<T, V, Act::sigmoid><<<grid, rows1d::kThreads, 0, c.stream>>>(a, nunits); break;
    case Act::silu: cos_bwd_flat_kernel<T, V, Act::silu><<<grid, rows1d::kThreads, 0, c.stream>>>(a, nunits); break;
    default: throw KernelError(std::string(c.op) + ": the flat backward takes elementwise acts only");
  }
  OPBENCH_LAUNCH_CHECK();
}

// Whether a backward call runs the flat kernel: elementwise acts on the vector path (16-byte
// units, every tensor aligned), x under kFlatMaxBytes unless Tuning1d::flat_lrpe says otherwise.
// Measured (H100, b 12 h 12 d 128 bf16, write flush, docs/kernels.md, lrpe_cosine): silu 20.5 / 33.4 /
// 58.6 / 108.2 / 206.1 us at n = 256 .. 4096 against the row kernel's 24.0 / 38.6 / 65.2 /
// 120.1 / 207.3; act none gains from n = 512 to 2048 and loses at 4096 (160.4 vs 155.0), where
// x holds 151 MB; larger calls stay with the row kernel (at the floor).
constexpr double kFlatMaxBytes = double(128 << 20);
bool flat_backward(const rows1d::Call& c) {
  if (c.seq || c.act == Act::softmax || !rows1d::vector_plan(c)) return false;
  const int f = tuning_1d().flat_lrpe;
  if (f >= 0) return f != 0;
  return double(c.B) * c.H * c.N * c.D * dtype_size(c.dtype) < kFlatMaxBytes;
}

void launch_flat_backward(const rows1d::Call& c) {
  rows1d::check_common(c);
  const rows1d::Plan p = rows1d::make_plan(c, 1, false, 1);  // V, U (units per row)
  const rows1d::Args a = rows1d::make_args(c, p);
  const int64_t nunits = c.B * c.H * c.N * p.U;
  switch (c.dtype) {
    case DType::f32: launch_flat_bwd<float, 4>(c, a, nunits); break;
    case DType::f16: launch_flat_bwd<__half, 8>(c, a, nunits); break;
    case DType::bf16: launch_flat_bwd<__nv_bfloat16, 8>(c, a, nunits); break;
  }
}

}  // namespace

size_t lrpe_cosine_workspace_bytes(const LrpeArgs& a, bool backward) {
  return rows1d::workspace_bytes<CosOp>(rows1d::lrpe_call(a, backward, false));
}
void lrpe_cosine_forward(const LrpeArgs& a) {
  rows1d::launch<CosOp>(rows1d::lrpe_call(a, false, false));
}
void lrpe_cosine_backward(const LrpeArgs& a) {
  const rows1d::Call c = rows1d::lrpe_call(a, true, false);
  if (flat_backward(c)) launch_flat_backward(c);
  else rows1d::launch<CosOp>(c);
}

}  // namespace opbench::kernels