// Softmax over the sequence, resident strategy: one persistent launch that reads the inputs once.
//
// A group is one column group (a range of a row's units) of one (b, h) slab; it is cut along n
// into G chunks, each read by one block into its shared memory (cp.async, no registers held),
// where it stays until the group's statistics are known. Per chunk the block
//   1. computes the chunk's column statistics from shared memory (m, l[, t]: softmax_seq.cuh),
//      reduces them over its row groups (warp shuffles, then shared memory, W lanes a column)
//      and writes them to the workspace as the chunk's partial, then adds 1 to the group's counter;
//   2. once the counter reaches G, merges the group's G partials (L2; W lanes a column, every
//      load in flight at once) into m + log(l) [, t / l];
//   3. writes the outputs from shared memory (Lane::process, as the split strategy's row kernel
//      does) and, slot by slot as they are read, refills the stage with a later chunk.
// Each block holds `stages` chunks; step 1 of chunk k + 1 runs before step 2 of chunk k. With
// TEAMS the block is two warp teams that run side by side: one does step 1 of chunk k + 1 while
// the other waits for chunk k's group and does steps 2 and 3 (the team that copies a chunk is
// the one that writes its outputs; the other reads it after a block barrier per chunk). Without,
// every warp does the three steps in turn. Bytes: inputs once, outputs once.
//
// Blocks take items (group * G + chunk) i, i + grid, ... in order. Every block of the grid is
// resident (cooperative launch) and a group's G chunks go to G different blocks (G <= grid), so a
// block only waits for groups whose chunks every other block reaches first: no deadlock. The
// counters are zeroed by the launch itself (before a grid barrier), so the workspace needs no
// preparation. G = 1 (the whole column group in one chunk) needs neither counters nor partials.
#pragma once
#include <cooperative_groups.h>

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "kernels/rows1d/args.h"
#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"
#include "kernels/rows1d/lane_stats.cuh"
#include "kernels/rows1d/lane_step.cuh"
#include "kernels/rows1d/math.cuh"
#include "kernels/rows1d/softmax_seq.cuh"

namespace opbench::kernels::rows1d {

constexpr int kResMaxThreads = 512;

// cp.async.wait_group with a run-time count (0 .. 3).
__device__ __forceinline__ void cp_async_wait_n(int n) {
  if (n <= 0) cp_async_wait<0>();
  else if (n == 1) cp_async_wait<1>();
  else if (n == 2) cp_async_wait<2>();
  else cp_async_wait<3>();
}

// Merge of a lane's statistics with those of the lane `off` away (xor). All lanes take part.
template <bool BWD>
__device__ __forceinline__ void xor_merge(float& m, float& l, float& t, int off) {
  const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
  const float l2 = __shfl_xor_sync(0xffffffffu, l, off);
  const float t2 = BWD ? __shfl_xor_sync(0xffffffffu, t, off) : 0.f;
  merge_stats(m, l, t, m2, l2, t2);
}
// Merge of the statistics of W aligned lanes (W a power of two <= 32); every lane ends with the
// total.
template <bool BWD>
__device__ __forceinline__ void lanes_merge(float& m, float& l, float& t, int W) {
  for (int off = W >> 1; off > 0; off >>= 1) xor_merge<BWD>(m, l, t, off);
}

// One item: its group (column group cg of slab (b, h)), its chunk and the chunk's first row.
struct ResItem {
  int64_t b, h, s0;
  uint32_t group;
  int chunk, cg;
};
__device__ __forceinline__ ResItem res_item(const ResArgs& r, uint32_t item) {
  ResItem it;
  it.group = r.div_g.div(item);
  it.chunk = int(item - it.group * uint32_t(r.G));
  const uint32_t bh = r.div_cgs.div(it.group);
  it.cg = int(it.group - bh * uint32_t(r.cgs));
  const uint32_t b = r.div_h.div(bh);
  it.b = b;
  it.h = bh - b * r.div_h.d;
  it.s0 = int64_t(it.chunk) * r.rows;
  return it;
}

// One team's view (the whole block without TEAMS): its shared memory (stages, reduction buffer,
// final statistics and theta tables of the two chunks in progress) and its place in a row group.
template <class OP, typename T, int V, bool BWD, bool TEAMS>
struct ResBlock {
  using L = Lane<OP, T, V>;
  using Vals = typename L::Vals;
  static constexpr int RPT = BWD ? OP::kRptB : OP::kRptF;
  static constexpr int UPT = L::UPT, P = L::P, Q = L::Q;
  static constexpr int K = UPT * P * V;  // statistics of one thread
  static constexpr int NSTAT = BWD ? 3 : 2;

  const Args& a;
  const ResArgs& r;
  uint4* stage_mem;  // [stages][sps][step_slots]
  float* red;        // [NSTAT][team warps][ncg]
  float* fin;        // [2][2][ncg]: m + log(l), t / l of chunk parity 0 and 1
  float* tab;        // [2][kTabPiece]: theta of chunk parity 0 and 1
  int tn, team, tid, t, g, ds, tprc;

  __device__ __forceinline__ ResBlock(const Args& args, const ResArgs& ra, uint4* smem, float* table)
      : a(args), r(ra), tab(table) {
    tn = TEAMS ? int(blockDim.x) / 2 : int(blockDim.x);
    team = TEAMS ? int(threadIdx.x) / tn : 0;
    tid = int(threadIdx.x) - team * tn;
    stage_mem = smem;
    red = reinterpret_cast<float*>(smem + size_t(r.stages) * r.sps * r.step_slots);
    fin = red + NSTAT * (tn / 32) * r.ncg;
    tprc = 1 << a.tprc_shift;
    t = tid & (tprc - 1);
    g = tid >> a.tprc_shift;
    ds = tn >> a.tprc_shift;
  }

  // A barrier of this team (the block without TEAMS).
  __device__ __forceinline__ void sync() const {
    if constexpr (TEAMS) asm volatile("bar.sync %0, %1;" ::"r"(1 + team), "r"(tn) : "memory");
    else __syncthreads();
  }
  // A block's k-th item uses half k & 1 of tab and fin (two items are in progress at once).
  __device__ __forceinline__ L lane(const ResItem& it, int k) const {
    return L(a, tab + (k & 1) * kTabPiece, 0, it.b, it.h, it.cg * tprc + t, 1 << a.tpr_shift,
             tprc, ds);
  }
  __device__ __forceinline__ uint4* slot(int stage, int js) const {
    return stage_mem + (size_t(stage) * r.sps + js) * r.step_slots + tid;
  }
  // This thread's first row of step js of a chunk.
  __device__ __forceinline__ int64_t row0(const ResItem& it, int js) const {
    return it.s0 + int64_t(js) * ds * RPT + g;
  }
  // Local column of statistic (i, p, e) of this thread within its group.
  __device__ __forceinline__ int col(int i, int p, int e) const { return t * K + (i * P + p) * V + e; }

  // The theta table of the k-th item's head (lrpe), in its half, by this team; its previous
  // readers finished before the block barrier that ends each item.
  __device__ __forceinline__ void fill(const ResItem& it, int k) const {
    if constexpr (OP::kAngle) {
      float* tb = tab + (k & 1) * kTabPiece;
      const int per = a.U * V;
      for (int idx = tid; idx < per; idx += tn) tb[idx] = __ldg(a.theta + it.h * a.th_sh + int64_t(idx) * a.th_sk);
      sync();
    }
  }

  // Copies of a whole chunk into a stage (none past the last item).
  __device__ __forceinline__ void issue(uint32_t item, int stage) const {
    if (item >= r.items) return;
    const ResItem it = res_item(r, item);
    const L ln = lane(it, 0);
    for (int js = 0; js < r.sps; ++js) ln.template stage<RPT, BWD>(row0(it, js), slot(stage, js), tn);
  }

  __device__ __forceinline__ void write_final(int k, int c, float m, float l, float tt) const {
    float* f = fin + (k & 1) * 2 * r.ncg;
    f[c] = m + logf(l);
    if constexpr (BWD) f[r.ncg + c] = tt / l;
  }

  // Step 1: the chunk's statistics from its stage, over the team, published (or, G = 1, final).
  __device__ __forceinline__ void stats(uint32_t item, const ResItem& it, int k, int stage) const {
    const L ln = lane(it, k);
    Vals m, l, tt;
    init_stats<L>(m, l, tt);
    for (int js = 0; js < r.sps; ++js) {
      Raw<T, V> xr[RPT][UPT][P];
      Raw<T, V> dr[RPT][UPT][Q];
      ln.template load_staged<RPT, BWD>(slot(stage, js), tn, xr, dr);
      ln.template accumulate_rows<BWD, RPT>(row0(it, js), xr, dr, m, l, tt);
    }
    // Over the row groups of a warp (lanes t, t + tprc, ...), then over the team's warps: W
    // lanes a column, one warp's partial each.
    for (int off = tprc; off < 32; off <<= 1)
      L::each([&](int i, int p, int e) { xor_merge<BWD>(m[i][p][e], l[i][p][e], tt[i][p][e], off); });
    const int W = tn / 32, ncg = r.ncg, rs = W * ncg;
    if ((tid & 31) < tprc) {
      const int w0 = (tid >> 5) * ncg;
      L::each([&](int i, int p, int e) {
        red[w0 + col(i, p, e)] = m[i][p][e];
        red[rs + w0 + col(i, p, e)] = l[i][p][e];
        if constexpr (BWD) red[2 * rs + w0 + col(i, p, e)] = tt[i][p][e];
      });
    }
    sync();
    const int w = tid & (W - 1);
    for (int c0 = 0; c0 < ncg; c0 += tn / W) {
      const int c = c0 + tid / W;
      float M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
      if (c < ncg) {
        M = red[w * ncg + c];
        Ls = red[rs + w * ncg + c];
        if constexpr (BWD) Ts = red[2 * rs + w * ncg + c];
      }
      lanes_merge<BWD>(M, Ls, Ts, W);
      if (c < ncg && w == 0) {
        if (r.G == 1) {
          write_final(k, c, M, Ls, Ts);
        } else {
          float* pp = r.partial + size_t(item) * (NSTAT * ncg);
          pp[c] = M;
          pp[ncg + c] = Ls;
          if constexpr (BWD) pp[2 * ncg + c] = Ts;
        }
      }
    }
    // The partial stores precede the barrier, which orders them before the release.
    sync();
    if (r.G > 1 && tid == 0) atom_add_acq_rel(r.counters + it.group, 1u);
  }

  // Step 2: wait for the group's G partials and merge them: W lanes a column, each over every
  // W-th partial with every load in flight, then across the W lanes.
  __device__ __forceinline__ void merge(uint32_t group, int k) const {
    if (tid == 0) {
      const unsigned* cnt = r.counters + group;
      while (ld_acquire(cnt) < unsigned(r.G)) __nanosleep(32);
    }
    sync();
    const int ncg = r.ncg;
    const int W = tn / ncg < 1 ? 1 : tn / ncg > 32 ? 32 : tn / ncg;
    const int w = tid & (W - 1);
    const float* base = r.partial + size_t(group) * r.G * (NSTAT * ncg);
    for (int c0 = 0; c0 < ncg; c0 += tn / W) {
      const int c = c0 + tid / W;
      float M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
      if (c < ncg) {
        int ch = w;
        constexpr int kBatch = 4;
        for (; ch + (kBatch - 1) * W < r.G; ch += kBatch * W) {
          float v[kBatch][NSTAT];
#pragma unroll
          for (int q = 0; q < kBatch; ++q)
#pragma unroll
            for (int s = 0; s < NSTAT; ++s) v[q][s] = __ldcg(base + size_t(ch + q * W) * (NSTAT * ncg) + s * ncg + c);
#pragma unroll
          for (int q = 0; q < kBatch; ++q) merge_stats(M, Ls, Ts, v[q][0], v[q][1], BWD ? v[q][NSTAT - 1] : 0.f);
        }
        for (; ch < r.G; ch += W) {
          const float* pp = base + size_t(ch) * (NSTAT * ncg) + c;
          merge_stats(M, Ls, Ts, __ldcg(pp), __ldcg(pp + ncg), BWD ? __ldcg(pp + 2 * ncg) : 0.f);
        }
      }
      lanes_merge<BWD>(M, Ls, Ts, W);
      if (c < ncg && w == 0) write_final(k, c, M, Ls, Ts);
    }
    sync();
  }

  // Step 3: the outputs from the stage; each step's slots, once read, take the copies of `refill`.
  __device__ __forceinline__ void apply(const ResItem& it, int k, int stage, uint32_t refill) const {
    const L ln = lane(it, k);
    const float* f = fin + (k & 1) * 2 * r.ncg;
    Vals Mp, R;
    L::each([&](int i, int p, int e) {
      Mp[i][p][e] = f[col(i, p, e)];
      R[i][p][e] = BWD ? f[r.ncg + col(i, p, e)] : 0.f;
    });
    const bool more = refill < r.items;
    const ResItem nx = more ? res_item(r, refill) : it;
    const L nl = lane(nx, 0);
    for (int js = 0; js < r.sps; ++js) {
      Raw<T, V> xr[RPT][UPT][P];
      Raw<T, V> dr[RPT][UPT][Q];
      ln.template load_staged<RPT, BWD>(slot(stage, js), tn, xr, dr);
      ln.template process<Act::softmax, Soft::seq, BWD, RPT>(row0(it, js), xr, dr, Mp, R);
      if (more) nl.template stage<RPT, BWD>(row0(nx, js), slot(stage, js), tn);
    }
    cp_async_commit();
  }
};

// TEAMS: team 0 computes statistics (step 1), team 1 copies the chunks and writes the outputs
// (steps 2 and 3); without, the whole block does everything.
template <class OP, typename T, int V, bool BWD, bool TEAMS>
__global__ void __launch_bounds__(kResMaxThreads, 1) seq_resident_kernel(const Args a, const ResArgs r) {
  extern __shared__ __align__(16) uint4 res_smem[];
  __shared__ __align__(16) float tab[OP::kAngle ? 2 * kTabPiece : 1];
  const ResBlock<OP, T, V, BWD, TEAMS> blk(a, r, res_smem, tab);
  const bool stats_team = !TEAMS || blk.team == 0, copy_team = !TEAMS || blk.team == 1;
  const uint32_t step = gridDim.x, first = blockIdx.x;  // items < 2^31: no overflow below
  if (copy_team) {
    // This launch's counters start at zero: zeroed here, before a grid barrier that the first
    // chunks' copies overlap.
    if (r.G > 1)
      for (uint32_t i = first * blk.tn + blk.tid; i < r.groups; i += step * blk.tn) r.counters[i] = 0u;
    for (int s = 0; s < r.stages; ++s) {
      blk.issue(first + s * step, s);
      cp_async_commit();
    }
  }
  if (r.G > 1) cooperative_groups::this_grid().sync();
  // The block's k-th item is first + k * step, in stage k % stages. The copy team waits for its
  // copies of an item and a block barrier makes them visible before the item's statistics.
  ResItem cur = res_item(r, first);
  if (copy_team) cp_async_wait_n(r.stages - 1);
  __syncthreads();
  if (stats_team && first < r.items) {
    blk.fill(cur, 0);
    blk.stats(first, cur, 0, 0);
  }
  if (copy_team) cp_async_wait_n(r.stages - 2);
  __syncthreads();
  int stage = 0, k = 0;
  for (uint32_t item = first; item < r.items; item += step, ++k) {
    const uint32_t next = item + step;
    const int nstage = stage + 1 == r.stages ? 0 : stage + 1;
    const ResItem nx = res_item(r, next < r.items ? next : item);
    if (stats_team && next < r.items) {  // step 1 of the next chunk before this one's group
      blk.fill(nx, k + 1);
      blk.stats(next, nx, k + 1, nstage);
    }
    if (copy_team) {
      if (r.G > 1) blk.merge(cur.group, k);
      blk.apply(cur, k, stage, item + uint32_t(r.stages) * step);
      cp_async_wait_n(r.stages - 2);  // the chunk after next has landed
    }
    __syncthreads();
    cur = nx;
    stage = nstage;
  }
  cp_async_wait<0>();
}

}  // namespace opbench::kernels::rows1d
