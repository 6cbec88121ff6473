// Softmax over the sequence, l2 strategy: one persistent launch whose second pass reads from L2.
//
// A group is one column group (a range of a row's units) of one (b, h) slab, cut along n into G
// tiles. Work comes from one counter, in rounds of 2G tiles: round r holds the statistics tiles
// of group r, then the output tiles of group r - lag. So a group's output tiles are drawn `lag`
// rounds after its statistics tiles, while the bytes those read are still in L2: about lag + 1
// groups are in flight at once (rows1d/plan.h sizes them), far under the L2.
//   statistics tile: the tile's column statistics (Lane::accumulate over its steps, reduced over
//     the row groups: softmax_seq.cuh), written as the tile's partial; the block whose arrival
//     completes the group merges the group's G partials into m + log(l) [, t / l] per column
//     (the statistics a.stats the row kernel reads) and raises the group's ready flag;
//   output tile: once the group is ready, the outputs of the tile's rows (Lane::apply), their
//     inputs read again, from L2.
// Blocks draw tiles as they finish them, so the multiprocessors that memory serves faster take
// more; a block waits only for statistics tiles drawn before its tile, which blocks already
// running complete without waiting: no deadlock, whatever the grid. Bytes from memory: inputs
// once, outputs once, when the second reads hit L2. The counters (arrivals, ready flags, the
// work counter) are zeroed before each launch.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/rows1d/args.h"
#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"
#include "kernels/rows1d/lane_stats.cuh"
#include "kernels/rows1d/lane_step.cuh"
#include "kernels/rows1d/math.cuh"
#include "kernels/rows1d/row_kernel.cuh"
#include "kernels/rows1d/softmax_seq.cuh"

namespace opbench::kernels::rows1d {

__device__ __forceinline__ void st_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// A tile: its group (column group cg of slab (b, h)) and its index in the group.
struct L2Tile {
  int64_t b, h, bh;
  uint32_t group;
  int cg, j;
};
__device__ __forceinline__ L2Tile l2_tile(const Args& a, const L2Args& q, uint32_t group, int j) {
  L2Tile tl;
  tl.group = group;
  tl.j = j;
  const uint32_t bh = q.div_cgs.div(group);
  tl.cg = int(group - bh * uint32_t(q.cgs));
  tl.bh = bh;
  tl.b = bh / a.H;
  tl.h = bh - tl.b * a.H;
  return tl;
}

// One block's work on tiles (256 threads: row groups of tprc lanes over the column group).
template <class OP, typename T, int V, bool BWD, bool PF>
struct L2Block {
  using L = Lane<OP, T, V>;
  using Vals = typename L::Vals;
  static constexpr int RPT = BWD ? OP::kRptB : OP::kRptF;
  static constexpr int UPT = L::UPT, P = L::P;
  static constexpr int K = UPT * P * V;  // statistics of one thread
  static constexpr int NSTAT = BWD ? 3 : 2;

  const Args& a;
  const L2Args& q;
  float* tab;
  int tprc, t, sl, ds;

  __device__ __forceinline__ L2Block(const Args& args, const L2Args& qa, float* table)
      : a(args), q(qa), tab(table) {
    tprc = 1 << a.tprc_shift;
    t = threadIdx.x & (tprc - 1);
    sl = threadIdx.x >> a.tprc_shift;
    ds = kThreads >> a.tprc_shift;
  }

  __device__ __forceinline__ L lane(const L2Tile& tl) const {
    return L(a, tab, 0, tl.b, tl.h, tl.cg * tprc + t, 1 << a.tpr_shift, tprc, ds);
  }
  // The theta table of the tile's head (lrpe); the previous tile's readers are done first.
  __device__ __forceinline__ void fill(const L2Tile& tl) const {
    if constexpr (OP::kAngle) {
      __syncthreads();
      fill_table<OP, V>(a, tab, tl.h, 1);
    }
  }
  __device__ __forceinline__ int64_t first_row(const L2Tile& tl) const {
    return int64_t(tl.j) * q.steps * ds * RPT;
  }
  __device__ __forceinline__ float* partial(uint32_t group, int j) const {
    return q.partial + (size_t(group) * q.G + j) * (NSTAT * q.ncg);
  }
  // Global column of local statistic c = (t * UPT + i) * P * V + p * V + e.
  __device__ __forceinline__ int64_t column(const L2Tile& tl, int c) const {
    const int e = c % V, ip = (c / V) % (UPT * P), tt = c / K;
    const int i = ip / P, p = ip % P;
    const int u = tl.cg * tprc + tt + i * (1 << a.tpr_shift);
    return tl.bh * a.D + int64_t(u) * V + e + p * a.xhalf;
  }

  // The group's G partials merged into its columns' statistics: W lanes per column, each over
  // every W-th partial (loads in flight together), then merged across the W lanes.
  __device__ __forceinline__ void combine(const L2Tile& tl) const {
    const int ncg = q.ncg;
    const int W = ncg >= kThreads / 32 ? kThreads / ncg : 32;
    const int w = threadIdx.x & (W - 1);
    for (int c0 = 0; c0 < ncg; c0 += kThreads / W) {
      const int c = c0 + int(threadIdx.x) / W;
      float M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
      if (c < ncg) {
        int ch = w;
        for (; ch + 3 * W < q.G; ch += 4 * W) {
          float v[4][NSTAT];
#pragma unroll
          for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int s = 0; s < NSTAT; ++s) v[k][s] = __ldcg(partial(tl.group, ch + k * W) + s * ncg + c);
#pragma unroll
          for (int k = 0; k < 4; ++k) merge_stats(M, Ls, Ts, v[k][0], v[k][1], BWD ? v[k][NSTAT - 1] : 0.f);
        }
        for (; ch < q.G; ch += W) {
          const float* pp = partial(tl.group, ch);
          merge_stats(M, Ls, Ts, __ldcg(pp + c), __ldcg(pp + ncg + c), BWD ? __ldcg(pp + 2 * ncg + c) : 0.f);
        }
      }
      for (int off = W >> 1; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(0xffffffffu, M, off);
        const float l2 = __shfl_xor_sync(0xffffffffu, Ls, off);
        const float t2 = BWD ? __shfl_xor_sync(0xffffffffu, Ts, off) : 0.f;
        merge_stats(M, Ls, Ts, m2, l2, t2);
      }
      if (c < ncg && w == 0) {
        const int64_t col = column(tl, c);
        q.stats[col] = M + logf(Ls);
        if constexpr (BWD) q.stats[a.ncols + col] = Ts / Ls;
      }
    }
  }

  // Statistics tile: the partial of its rows; the group's last arrival merges the group.
  __device__ __forceinline__ void stats_tile(const L2Tile& tl) const {
    if constexpr (BWD) fill(tl);
    const L ln = lane(tl);
    const int64_t s_first = first_row(tl);
    const int64_t stride = int64_t(ds) * RPT;
    if constexpr (PF) ln.template prefetch<RPT, true, BWD>(s_first + sl);
    Vals m, l, tt;
    init_stats<L>(m, l, tt);
    int64_t s0 = s_first;
    for (int step = 0; step < q.steps && s0 < a.N; ++step, s0 += stride) {
      if constexpr (PF)
        if (step + 1 < q.steps) ln.template prefetch<RPT, true, BWD>(s0 + stride + sl);
      ln.template accumulate<BWD, RPT>(s0 + sl, m, l, tt);
    }
    reduce_rows<L, BWD>(m, l, tt, sl, ds, t, a.tprc_shift);
    if (sl == 0) {
      float* pp = partial(tl.group, tl.j);
#pragma unroll
      for (int i = 0; i < UPT; ++i)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const int c = (t * UPT + i) * P * V + p * V + e;
            pp[c] = m[i][p][e];
            pp[q.ncg + c] = l[i][p][e];
            if constexpr (BWD) pp[2 * q.ncg + c] = tt[i][p][e];
          }
    }
    // The partial stores precede the barrier, which orders them before thread 0's release.
    __shared__ int last;
    __syncthreads();
    if (threadIdx.x == 0) last = atom_add_acq_rel(q.arrived + tl.group, 1u) == unsigned(q.G - 1);
    __syncthreads();
    if (last) {
      combine(tl);
      __syncthreads();
      if (threadIdx.x == 0) st_release(q.ready + tl.group, 1u);
    }
  }

  // Output tile: once its group is ready, its rows' outputs (inputs read again, from L2).
  __device__ __forceinline__ void output_tile(const L2Tile& tl) const {
    if (threadIdx.x == 0)
      while (ld_acquire(q.ready + tl.group) == 0u) __nanosleep(64);
    __syncthreads();
    fill(tl);
    const L ln = lane(tl);
    Vals Mp, R;
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const int64_t c = ln.col(tl.bh, i, p, e);
          Mp[i][p][e] = ln.uv[i] ? __ldcg(a.stats + c) : 0.f;
          R[i][p][e] = (BWD && ln.uv[i]) ? __ldcg(a.stats + a.ncols + c) : 0.f;
        }
    const int64_t s_first = first_row(tl);
    const int64_t stride = int64_t(ds) * RPT;
    if constexpr (PF) ln.template prefetch<RPT, true, BWD>(s_first + sl);
    int64_t s0 = s_first;
    for (int step = 0; step < q.steps && s0 < a.N; ++step, s0 += stride) {
      if constexpr (PF)
        if (step + 1 < q.steps) ln.template prefetch<RPT, true, BWD>(s0 + stride + sl);
      ln.template apply<Act::softmax, Soft::seq, BWD, RPT>(s0 + sl, Mp, R);
    }
  }
};

template <class OP, typename T, int V, bool BWD, bool PF>
__global__ void __launch_bounds__(kThreads, 2) seq_l2_kernel(const Args a, const L2Args q) {
  __shared__ __align__(16) float tab[OP::kAngle ? kTabPiece : 1];
  __shared__ uint32_t work_s;
  const L2Block<OP, T, V, BWD, PF> blk(a, q, tab);
  const uint32_t per_round = 2u * uint32_t(q.G);
  // The first tile is the block's index; the next is drawn during each tile (thread 0's
  // atomic, read at the end of the tile).
  uint32_t w = blockIdx.x, next = 0;
  while (w < q.work) {
    if (threadIdx.x == 0) next = gridDim.x + atomicAdd(q.counter, 1u);
    const uint32_t r = q.div_round.div(w);
    const int j = int(w - r * per_round);
    if (j < q.G) {
      if (r < q.groups) blk.stats_tile(l2_tile(a, q, r, j));
    } else if (r >= uint32_t(q.lag)) {
      blk.output_tile(l2_tile(a, q, r - q.lag, j - q.G));
    }
    __syncthreads();
    if (threadIdx.x == 0) work_s = next;
    __syncthreads();
    w = work_s;
  }
}

}  // namespace opbench::kernels::rows1d
