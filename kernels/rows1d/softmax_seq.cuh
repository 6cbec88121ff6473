// Softmax over the sequence (act_dim = the n axis), shared by act, lrpe_cosine and lrpe_rotate.
//
// Per column (b, h, k) of length n:
//   forward   o = exp(x - m) / l,              m = max_s x,  l = sum_s exp(x - m)
//   backward  dx = o * (g - r),                r = sum_s o * g = t / l,  t = sum_s exp(x - m) * g
// where g is the gradient reaching the activation (do for act; do_c cos + do_s sin for cosine;
// the rotation by -angle for rotate), recomputed in both passes. Pass 1 collects (m, l[, t])
// online (one rescale per RPT rows); pass 2 writes o or dx. At n = 32768 a (b, h) slab is
// 8 MiB (bf16, d = 128) and all slabs are in flight at once, so pass 2 re-reads the input from
// memory: the floor of these kernels is the two-pass floor, bytes = 2 * inputs + outputs
// (act fwd 3|x|, bwd 5|x|; cosine fwd 4|x|, bwd 7|x|; rotate fwd 3|x|, bwd 5|x|).
//
// Both passes prefetch the next step's rows into L2 (PF) so that DRAM stays busy while a step
// computes. Two strategies:
//   block: one block per (b, h, column group); its 256 threads walk all n rows of its columns
//          (pass 1), reduce across row groups in shared memory, then walk them again (pass 2).
//          One launch, no buffer; needs b * h * column groups >= #SMs to fill the device.
//   split: n is cut into chunks; seq_stats_kernel writes per-chunk partial statistics,
//          seq_combine_kernel merges them per column into m + log(l) [, t / l], and the row
//          kernel (row_kernel.cuh, Soft::seq) applies them. Fills the device for any b * h.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/rows1d/args.h"
#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"
#include "kernels/rows1d/lane_stats.cuh"
#include "kernels/rows1d/lane_step.cuh"
#include "kernels/rows1d/math.cuh"
#include "kernels/rows1d/row_kernel.cuh"

namespace opbench::kernels::rows1d {

// Tree reduction of the statistics over the row groups of a block that share columns: row
// group `sl` (0 .. ds-1) of slot `slot_lo` (head and lane); afterwards sl == 0 holds the total.
template <class L, bool BWD>
__device__ __forceinline__ void reduce_rows(typename L::Vals& m, typename L::Vals& l,
                                            typename L::Vals& t, int sl, int ds, int slot_lo,
                                            int slot_shift) {
  constexpr int UPT = L::UPT, P = L::P, V = L::kV;
  constexpr int K = UPT * P * V;
  __shared__ float red[BWD ? 3 : 2][K][kThreads / 2];
  for (int half = ds >> 1; half > 0; half >>= 1) {
    if (sl >= half && sl < 2 * half) {
      const int slot = ((sl - half) << slot_shift) | slot_lo;
      L::each([&](int i, int p, int e) {
        const int k = (i * P + p) * V + e;
        red[0][k][slot] = m[i][p][e];
        red[1][k][slot] = l[i][p][e];
        if constexpr (BWD) red[2][k][slot] = t[i][p][e];
      });
    }
    __syncthreads();
    if (sl < half) {
      const int slot = (sl << slot_shift) | slot_lo;
      L::each([&](int i, int p, int e) {
        const int k = (i * P + p) * V + e;
        merge_stats(m[i][p][e], l[i][p][e], t[i][p][e], red[0][k][slot], red[1][k][slot],
                    BWD ? red[2][k][slot] : 0.f);
      });
    }
    __syncthreads();
  }
}

template <class L>
__device__ __forceinline__ void init_stats(typename L::Vals& m, typename L::Vals& l,
                                           typename L::Vals& t) {
  L::each([&](int i, int p, int e) {
    m[i][p][e] = -FLT_MAX;
    l[i][p][e] = 0.f;
    t[i][p][e] = 0.f;
  });
}

// Split strategy, pass 1: partial statistics of one chunk of n for HB heads.
// partial planes: m, l[, t], each [B * H][nchunks][D].
template <class OP, typename T, int V, bool BWD, bool PF>
__global__ void __launch_bounds__(kThreads, 2) seq_stats_kernel(const Args a, int stats_steps) {
  constexpr int RPT = BWD ? OP::kRptB : OP::kRptF;
  using L = Lane<OP, T, V>;
  const Tile tl = decode_tile(a, blockIdx.x, stats_steps, RPT, a.nchunks);
  __shared__ __align__(16) float tab[OP::kAngle && BWD ? kTab : 1];
  const L lane(a, tab, tl.hl, tl.b, tl.h, tl.t, 1 << a.tpr_shift, 1 << a.tprc_shift, tl.ds);
  if constexpr (PF) lane.template prefetch<RPT, true, BWD>(tl.s0 + tl.sl);
  if constexpr (BWD) fill_table<OP, V>(a, tab, tl.h - tl.hl, 1 << a.hb_shift);
  typename L::Vals m, l, t;
  init_stats<L>(m, l, t);
  int64_t s0 = tl.s0;
  const int64_t stride = int64_t(tl.ds) * RPT;
  for (int step = 0; step < stats_steps && s0 < a.N; ++step, s0 += stride) {
    if constexpr (PF)
      if (step + 1 < stats_steps) lane.template prefetch<RPT, true, BWD>(s0 + stride + tl.sl);
    lane.template accumulate<BWD, RPT>(s0 + tl.sl, m, l, t);
  }
  reduce_rows<L, BWD>(m, l, t, tl.sl, tl.ds, (tl.hl << a.tprc_shift) | tl.t,
                      a.hb_shift + a.tprc_shift);
  if (tl.sl == 0) {
    const int64_t chunk = tl.s0 / (int64_t(tl.ds) * RPT * stats_steps);
    const int64_t bh = tl.b * a.H + tl.h;
    const int64_t plane = a.B * a.H * a.nchunks * a.D;
    const int64_t row = (bh * a.nchunks + chunk) * a.D;
    L::each([&](int i, int p, int e) {
      if (lane.uv[i]) {
        const int64_t idx = row + lane.u[i] * V + e + p * a.xhalf;
        a.partial[idx] = m[i][p][e];
        a.partial[plane + idx] = l[i][p][e];
        if constexpr (BWD) a.partial[2 * plane + idx] = t[i][p][e];
      }
    });
  }
}

// Split strategy: merge the chunks of each column. stats[c] = m + log(l); stats[ncols + c] = t / l.
template <bool BWD>
__global__ void __launch_bounds__(kThreads) seq_combine_kernel(const Args a, float* stats) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= a.ncols) return;
  const int64_t bh = c / a.D, k = c % a.D;
  const int64_t plane = a.B * a.H * a.nchunks * a.D;
  float m = -FLT_MAX, l = 0.f, t = 0.f;
  for (int ch = 0; ch < a.nchunks; ++ch) {
    const int64_t idx = (bh * a.nchunks + ch) * a.D + k;
    merge_stats(m, l, t, a.partial[idx], a.partial[plane + idx],
                BWD ? a.partial[2 * plane + idx] : 0.f);
  }
  stats[c] = m + logf(l);
  if constexpr (BWD) stats[a.ncols + c] = t / l;
}

// Block strategy: one block per (b, h, column group), both passes.
template <class OP, typename T, int V, bool BWD, bool PF>
__global__ void __launch_bounds__(kThreads, 2) seq_block_kernel(const Args a) {
  constexpr int RPT = BWD ? OP::kRptB : OP::kRptF;
  using L = Lane<OP, T, V>;
  constexpr int K = L::UPT * L::P * V;
  const int cg_shift = a.tpr_shift - a.tprc_shift;
  const int64_t blk = blockIdx.x;
  const int cg = int(blk & ((1 << cg_shift) - 1));
  const int64_t bh = blk >> cg_shift;
  const int64_t b = bh / a.H, h = bh % a.H;
  const int tprc = 1 << a.tprc_shift;
  const int t = threadIdx.x & (tprc - 1);
  const int g = threadIdx.x >> a.tprc_shift;
  const int ds = kThreads >> a.tprc_shift;
  // The table covers the whole piece (U * V <= 256 entries), indexed by unit.
  __shared__ __align__(16) float tab[OP::kAngle ? kTabPiece : 1];
  const L lane(a, tab, 0, b, h, cg * tprc + t, 1 << a.tpr_shift, tprc, ds);
  if constexpr (PF) lane.template prefetch<RPT, true, BWD>(g);
  fill_table<OP, V>(a, tab, h, 1);
  typename L::Vals m, l, tt;
  init_stats<L>(m, l, tt);
  const int64_t stride = int64_t(ds) * RPT;
  for (int64_t s0 = 0; s0 < a.N; s0 += stride) {
    // Prefetch the next step, and at the end of pass 1 the first step of pass 2.
    if constexpr (PF) lane.template prefetch<RPT, true, BWD>(s0 + stride < a.N ? s0 + stride + g : g);
    lane.template accumulate<BWD, RPT>(s0 + g, m, l, tt);
  }
  reduce_rows<L, BWD>(m, l, tt, g, ds, t, a.tprc_shift);
  __shared__ float fin[2][K][32];
  if (g == 0) {
    L::each([&](int i, int p, int e) {
      const int k = (i * L::P + p) * V + e;
      fin[0][k][t] = m[i][p][e] + logf(l[i][p][e]);
      if constexpr (BWD) fin[1][k][t] = tt[i][p][e] / l[i][p][e];
    });
  }
  __syncthreads();
  typename L::Vals Mp, R;
  L::each([&](int i, int p, int e) {
    const int k = (i * L::P + p) * V + e;
    Mp[i][p][e] = fin[0][k][t];
    R[i][p][e] = BWD ? fin[1][k][t] : 0.f;
  });
  for (int64_t s0 = 0; s0 < a.N; s0 += stride) {
    if constexpr (PF)
      if (s0 + stride < a.N) lane.template prefetch<RPT, true, BWD>(s0 + stride + g);
    lane.template apply<Act::softmax, Soft::seq, BWD, RPT>(s0 + g, Mp, R);
  }
}

}  // namespace opbench::kernels::rows1d
