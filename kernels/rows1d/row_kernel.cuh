// The 1d row machinery's row kernel, shared by the 1d ops (act, lrpe_cosine, lrpe_rotate): one
// pass over rows of d features, the activation fused in front of the positional encoding, no
// intermediate tensor.
//
// A row is the d-vector of one (b, s, h): x[b*xsb + h*xsh + s*xss + k]; act's x is (b, h, n, d)
// and lrpe's (b, n, h, d), so only the strides differ. A row is cut into "units" of V elements
// (16 bytes: 8 bf16/fp16 or 4 fp32; V = 1 on the scalar path for d that is not a multiple of V
// or unaligned pointers). Each op says how many pieces a unit has in x (P: rotate reads the two
// halves x1, x2 of the pair) and in the output-shaped tensor (Q: cosine writes cos and sin halves):
//   act     P = 1, Q = 1   o = xa
//   cosine  P = 1, Q = 2   o = [xa cos, xa sin]                       dxa = do_c cos + do_s sin
//   rotate  P = 2, Q = 2   o = [xa1 c - xa2 s, xa1 s + xa2 c]         dxa1 = do1 c + do2 s,
//                                                                      dxa2 = do2 c - do1 s
// Threads: a block of 256 threads is RG row groups of TPR threads (TPR a power of two covering
// the row's units, UPT = 8 / V units per thread, so every thread holds 8 elements per piece).
// A tile is (b, HB heads, a range of s); row group g takes head g % HB and rows
// s = s_tile + g / HB + j * ds (ds = RG / HB), RPT rows loaded per step (16-byte loads all
// issued before the first use), `steps` steps per tile, and before each step the next step's
// rows are prefetched into L2 (prefetch.global.L2: no registers held, DRAM kept busy while a
// step computes). For lrpe, HB heads side by side make each load instruction of a block cover
// HB whole contiguous rows. The angles: math.cuh; the loads, math and stores of a step: the
// Lane (lane.cuh). Softmax over features is a shuffle reduction inside the row group; softmax
// over the sequence uses column statistics (softmax_seq.cuh).
#pragma once
#include <cstdint>

#include "kernels/rows1d/args.h"
#include "kernels/rows1d/lane.cuh"
#include "kernels/rows1d/lane_io.cuh"
#include "kernels/rows1d/lane_step.cuh"

namespace opbench::kernels::rows1d {

// The row kernel: one tile per block (b, HB heads, tiles of s), `steps` steps of RPT rows.

// Rows per step of an op's row kernel: along s, or with batch rows (BR) across batches (two
// for feature softmax and for float32's two units per thread: four of those spill registers).
template <class OP>
__host__ __device__ constexpr int rows_per_step(bool bwd, bool br, bool feat, bool f32) {
  return br ? (feat || f32 ? 2 : bwd ? OP::kRptBRB : OP::kRptBRF) : (bwd ? OP::kRptB : OP::kRptF);
}

struct Tile {
  int64_t b, h, s0;  // s0: this row group's first row
  int t, sl, hl, ds;
};

__device__ __forceinline__ Tile decode_tile(const Args& a, int64_t tile, int steps, int rpt,
                                            int64_t tiles_s) {
  const int HB = 1 << a.hb_shift;
  const int64_t hblks = a.H >> a.hb_shift;
  int64_t hblk, sc, b;
  if (a.h_fast) {
    hblk = tile % hblks;
    const int64_t r = tile / hblks;
    sc = r % tiles_s;
    b = r / tiles_s;
  } else {
    sc = tile % tiles_s;
    const int64_t r = tile / tiles_s;
    hblk = r % hblks;
    b = r / hblks;
  }
  Tile T;
  const int g = threadIdx.x >> a.tprc_shift;
  T.t = threadIdx.x & ((1 << a.tprc_shift) - 1);
  T.hl = g & (HB - 1);
  T.sl = g >> a.hb_shift;
  T.ds = (kThreads >> a.tprc_shift) >> a.hb_shift;
  T.b = b;
  T.h = hblk * HB + T.hl;
  T.s0 = sc * (int64_t(T.ds) * rpt * steps);  // the tile's first row (uniform in the block)
  return T;
}

// Fill the block's theta table for heads h0 .. h0 + nh - 1. Ends with a barrier.
template <class OP, int V>
__device__ __forceinline__ void fill_table(const Args& a, float* tab, int64_t h0, int nh) {
  if constexpr (OP::kAngle) {
    const int per = a.U * V;  // entries per head: the whole piece
    for (int idx = threadIdx.x; idx < nh * per; idx += kThreads) {
      const int hl = idx / per, k = idx - hl * per;
      tab[idx] = __ldg(a.theta + (h0 + hl) * a.th_sh + int64_t(k) * a.th_sk);
    }
    __syncthreads();
  }
}

// PF: before each step, prefetch the next step's rows into L2 (see Lane::prefetch).
// BR (batch rows): a step's RPT rows are RPT batches at one s (angles evaluated once per step),
// and the tile's "b" counts groups of RPT batches; otherwise RPT rows along s of one batch.
template <class OP, typename T, int V, Act A, Soft S, bool BWD, bool PF, bool BR = false>
__global__ void __launch_bounds__(kThreads, (BWD || S == Soft::seq) ? 2 : 3) rows_kernel(const Args a) {
  constexpr int RPT = rows_per_step<OP>(BWD, BR, S == Soft::feat, sizeof(T) == 4);
  using L = Lane<OP, T, V>;
  constexpr bool kNeedX = L::template kNeedX<A, S, BWD>;
  const Tile tl = decode_tile(a, blockIdx.x, a.steps, BR ? 1 : RPT, a.tiles_s);
  __shared__ __align__(16) float tab[OP::kAngle ? kTab : 1];
  const int64_t b0 = BR ? tl.b * RPT : tl.b;
  L lane(a, tab, tl.hl, b0, tl.h, tl.t, 1 << a.tpr_shift, 1 << a.tprc_shift, tl.ds);
  lane.nbr = a.B - b0;
  // The first step's rows start coming while the theta table is filled.
  if constexpr (PF) lane.template prefetch<RPT, kNeedX, BWD, BR>(tl.s0 + tl.sl);
  fill_table<OP, V>(a, tab, tl.h - tl.hl, 1 << a.hb_shift);
  typename L::Vals Mp, R;
  if constexpr (S == Soft::seq) {
    const int64_t bh = tl.b * a.H + tl.h;
    L::each([&](int i, int p, int e) {
      const int64_t c = lane.col(bh, i, p, e);
      Mp[i][p][e] = lane.uv[i] ? a.stats[c] : 0.f;
      R[i][p][e] = (BWD && lane.uv[i]) ? a.stats[a.ncols + c] : 0.f;
    });
  }
  const int64_t stride = int64_t(tl.ds) * (BR ? 1 : RPT);
  int64_t s0 = tl.s0;  // uniform in the block: so is the loop condition (shuffles inside)
  for (int step = 0; step < a.steps && s0 < a.N; ++step, s0 += stride) {
    if constexpr (PF)
      if (step + 1 < a.steps) lane.template prefetch<RPT, kNeedX, BWD, BR>(s0 + stride + tl.sl);
    lane.template apply<A, S, BWD, RPT, BR>(s0 + tl.sl, Mp, R);
  }
}

}  // namespace opbench::kernels::rows1d
