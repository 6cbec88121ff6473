// Softmax over the sequence, resident strategy: one persistent launch that reads the inputs once.
//
// A group is one column group (a range of a row's units) of one (b, h) slab; it is cut along n
// into G chunks, each read by one block into its shared memory (cp.async, no registers held),
// where it stays until the group's statistics are known. Per chunk the block
//   1. computes the chunk's column statistics from shared memory (m, l[, t]: softmax_seq.cuh),
//      reduces them over its row groups (warp shuffles, then shared memory) and writes them to
//      the workspace as the chunk's partial statistics, then adds 1 to the group's counter;
//   2. once the counter reaches G, merges the group's G partials (L2) into m + log(l) [, t / l];
//   3. writes the outputs from shared memory (Lane::process, as the split strategy's row kernel
//      does) and, slot by slot as they are read, refills the stage with a later chunk.
// Each block holds `stages` chunks: while it waits for one group, the copies of the next chunks
// keep the memory busy, and the statistics of the next chunk are computed before the wait
// (step 1 of chunk k + 1 runs before step 2 of chunk k). Bytes: inputs once, outputs once.
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
#include "kernels/rows1d/row_kernel.cuh"
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

__device__ __forceinline__ float ld_l2(const float* p) { return __ldcg(p); }

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

// One block's view: its shared memory (stages, reduction buffer, final statistics of the two
// chunks in progress, theta tables of the two) and its place in a row group.
template <class OP, typename T, int V, bool BWD>
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
  float* red;        // [NSTAT][red_stride]
  float* fin;        // [2][2][ncg]: m + log(l), t / l of chunk parity 0 and 1
  float* tab;        // [2][kTabPiece]: theta of chunk parity 0 and 1
  int nt, tid, t, g, ds, tprc;

  __device__ __forceinline__ ResBlock(const Args& args, const ResArgs& ra, uint4* smem, float* table)
      : a(args), r(ra), tab(table) {
    stage_mem = smem;
    red = reinterpret_cast<float*>(smem + size_t(r.stages) * r.sps * r.step_slots);
    fin = red + NSTAT * r.red_stride;
    nt = blockDim.x;
    tid = threadIdx.x;
    tprc = 1 << a.tprc_shift;
    t = tid & (tprc - 1);
    g = tid >> a.tprc_shift;
    ds = nt >> a.tprc_shift;
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

  // The theta table of the k-th item's head (lrpe), in its half.
  __device__ __forceinline__ void fill(const ResItem& it, int k) {
    if constexpr (OP::kAngle) {
      __syncthreads();  // the previous user of this half is done
      fill_table<OP, V>(a, tab + (k & 1) * kTabPiece, it.h, 1);
    }
  }

  // Copies of a whole chunk into a stage (none past the last item).
  __device__ __forceinline__ void issue(uint32_t item, int stage) const {
    if (item >= r.items) return;
    const ResItem it = res_item(r, item);
    const L ln = lane(it, 0);
    for (int js = 0; js < r.sps; ++js) ln.template stage<RPT, BWD>(row0(it, js), slot(stage, js), nt);
  }

  __device__ __forceinline__ void write_final(int k, int c, float m, float l, float tt) const {
    float* f = fin + (k & 1) * 2 * r.ncg;
    f[c] = m + logf(l);
    if constexpr (BWD) f[r.ncg + c] = tt / l;
  }

  // Step 1: the chunk's statistics from its stage, over the block, published (or, G = 1, final).
  __device__ __forceinline__ void stats(uint32_t item, const ResItem& it, int k, int stage) {
    const L ln = lane(it, k);
    Vals m, l, tt;
    init_stats<L>(m, l, tt);
    for (int js = 0; js < r.sps; ++js) {
      Raw<T, V> xr[RPT][UPT][P];
      Raw<T, V> dr[RPT][UPT][Q];
      ln.template load_staged<RPT, BWD>(slot(stage, js), nt, xr, dr);
      ln.template accumulate_rows<BWD, RPT>(row0(it, js), xr, dr, m, l, tt);
    }
    // Over the row groups of a warp (lanes t, t + tprc, ...), then over the warps.
    for (int off = tprc; off < 32; off <<= 1)
#pragma unroll
      for (int i = 0; i < UPT; ++i)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m[i][p][e], off);
            const float l2 = __shfl_xor_sync(0xffffffffu, l[i][p][e], off);
            const float t2 = BWD ? __shfl_xor_sync(0xffffffffu, tt[i][p][e], off) : 0.f;
            merge_stats(m[i][p][e], l[i][p][e], tt[i][p][e], m2, l2, t2);
          }
    const int warp = tid >> 5, ncg = r.ncg, rs = r.red_stride;
    if ((tid & 31) < tprc) {
#pragma unroll
      for (int i = 0; i < UPT; ++i)
#pragma unroll
        for (int p = 0; p < P; ++p)
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const int c = warp * ncg + col(i, p, e);
            red[c] = m[i][p][e];
            red[rs + c] = l[i][p][e];
            if constexpr (BWD) red[2 * rs + c] = tt[i][p][e];
          }
    }
    __syncthreads();
    if (tid < ncg) {
      float M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
      for (int w = 0; w < (nt >> 5); ++w) {
        const int c = w * ncg + tid;
        merge_stats(M, Ls, Ts, red[c], red[rs + c], BWD ? red[2 * rs + c] : 0.f);
      }
      if (r.G == 1) {
        write_final(k, tid, M, Ls, Ts);
      } else {
        float* pp = r.partial + size_t(item) * (NSTAT * ncg);
        pp[tid] = M;
        pp[ncg + tid] = Ls;
        if constexpr (BWD) pp[2 * ncg + tid] = Ts;
      }
    }
    // The partial stores precede the barrier, which orders them before thread 0's release.
    __syncthreads();
    if (r.G > 1 && tid == 0) atom_add_acq_rel(r.counters + it.group, 1u);
  }

  // Step 2: wait for the group's G partials and merge them (every load in flight at once).
  __device__ __forceinline__ void merge(uint32_t group, int k) {
    if (tid == 0) {
      const unsigned* cnt = r.counters + group;
      while (ld_acquire(cnt) < unsigned(r.G)) __nanosleep(32);
    }
    __syncthreads();
    const int ncg = r.ncg, rs = r.red_stride;
    const int c = tid & (ncg - 1), sub = tid / ncg, nsub = nt / ncg;
    const float* base = r.partial + size_t(group) * r.G * (NSTAT * ncg) + c;
    float M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
    int ch = sub;
    constexpr int kBatch = 4;
    for (; ch + (kBatch - 1) * nsub < r.G; ch += kBatch * nsub) {
      float v[kBatch][NSTAT];
#pragma unroll
      for (int q = 0; q < kBatch; ++q)
#pragma unroll
        for (int s = 0; s < NSTAT; ++s) v[q][s] = ld_l2(base + (ch + q * nsub) * (NSTAT * ncg) + s * ncg);
#pragma unroll
      for (int q = 0; q < kBatch; ++q) merge_stats(M, Ls, Ts, v[q][0], v[q][1], BWD ? v[q][NSTAT - 1] : 0.f);
    }
    for (; ch < r.G; ch += nsub) {
      const float* pp = base + ch * (NSTAT * ncg);
      merge_stats(M, Ls, Ts, ld_l2(pp), ld_l2(pp + ncg), BWD ? ld_l2(pp + 2 * ncg) : 0.f);
    }
    red[sub * ncg + c] = M;
    red[rs + sub * ncg + c] = Ls;
    if constexpr (BWD) red[2 * rs + sub * ncg + c] = Ts;
    __syncthreads();
    if (tid < ncg) {
      M = -FLT_MAX, Ls = 0.f, Ts = 0.f;
      for (int s2 = 0; s2 < nsub; ++s2) {
        const int k = s2 * ncg + tid;
        merge_stats(M, Ls, Ts, red[k], red[rs + k], BWD ? red[2 * rs + k] : 0.f);
      }
      write_final(k, tid, M, Ls, Ts);
    }
    __syncthreads();
  }

  // Step 3: the outputs from the stage; each step's slots, once read, take the copies of `refill`.
  __device__ __forceinline__ void apply(const ResItem& it, int k, int stage, uint32_t refill) const {
    const L ln = lane(it, k);
    const float* f = fin + (k & 1) * 2 * r.ncg;
    Vals Mp, R;
#pragma unroll
    for (int i = 0; i < UPT; ++i)
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          Mp[i][p][e] = f[col(i, p, e)];
          R[i][p][e] = BWD ? f[r.ncg + col(i, p, e)] : 0.f;
        }
    const bool more = refill < r.items;
    const ResItem nx = more ? res_item(r, refill) : it;
    const L nl = lane(nx, 0);
    for (int js = 0; js < r.sps; ++js) {
      Raw<T, V> xr[RPT][UPT][P];
      Raw<T, V> dr[RPT][UPT][Q];
      ln.template load_staged<RPT, BWD>(slot(stage, js), nt, xr, dr);
      ln.template process<Act::softmax, Soft::seq, BWD, RPT>(row0(it, js), xr, dr, Mp, R);
      if (more) nl.template stage<RPT, BWD>(row0(nx, js), slot(stage, js), nt);
    }
    cp_async_commit();
  }
};

template <class OP, typename T, int V, bool BWD>
__global__ void __launch_bounds__(kResMaxThreads) seq_resident_kernel(const Args a, const ResArgs r) {
  extern __shared__ __align__(16) uint4 res_smem[];
  __shared__ __align__(16) float tab[OP::kAngle ? 2 * kTabPiece : 1];
  ResBlock<OP, T, V, BWD> blk(a, r, res_smem, tab);
  const uint32_t step = gridDim.x, first = blockIdx.x;  // items < 2^31: no overflow below
  // This launch's counters start at zero: zeroed here, before a grid barrier that the first
  // chunks' copies overlap.
  if (r.G > 1)
    for (uint32_t i = first * blockDim.x + threadIdx.x; i < r.groups; i += step * blockDim.x)
      r.counters[i] = 0u;
  for (int s = 0; s < r.stages; ++s) {
    blk.issue(first + s * step, s);
    cp_async_commit();
  }
  if (r.G > 1) cooperative_groups::this_grid().sync();
  // The block's k-th item is first + k * step, in stage k % stages.
  ResItem cur = res_item(r, first);
  if (first < r.items) {
    cp_async_wait_n(r.stages - 1);
    blk.fill(cur, 0);
    blk.stats(first, cur, 0, 0);
  }
  int stage = 0, k = 0;
  for (uint32_t item = first; item < r.items; item += step, ++k) {
    const uint32_t next = item + step;
    const int nstage = stage + 1 == r.stages ? 0 : stage + 1;
    const ResItem nx = res_item(r, next < r.items ? next : item);
    cp_async_wait_n(r.stages - 2);
    if (next < r.items) {  // step 1 of the next chunk before waiting for this one's group
      blk.fill(nx, k + 1);
      blk.stats(next, nx, k + 1, nstage);
    }
    if (r.G > 1) blk.merge(cur.group, k);
    blk.apply(cur, k, stage, item + uint32_t(r.stages) * step);
    cur = nx;
    stage = nstage;
  }
  cp_async_wait<0>();
}

}  // namespace opbench::kernels::rows1d
