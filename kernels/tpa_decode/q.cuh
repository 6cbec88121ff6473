// tpa_decode device helpers: building q = scale_q * aq bq for a block's heads in shared memory,
// from the raw q inputs (aq rows, bq) copied in asynchronously with the first tile.
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/tpa_decode/args.h"
#include "kernels/tpa_decode/copy.cuh"

namespace opbench::kernels::tpa {

// The q inputs of a block, raw: aq rows of its heads (hv x r) and bq (r x d), copied into shared
// memory at qin asynchronously (copy_flat_async; the caller commits the group). Returns where
// bq starts there.
template <typename T>
__device__ __forceinline__ const T* stage_q_inputs(const TpaArgs& a, int bi, int head0, int hv,
                                                   T* qin, int tid, int nthr) {
  const T* aq = static_cast<const T*>(a.aq) + (static_cast<int64_t>(bi) * a.h + head0) * a.r;
  const T* bq = static_cast<const T*>(a.bq) + static_cast<int64_t>(bi) * a.r * a.d;
  T* bq_s = qin + ((hv * a.r + 7) & ~7);
  copy_flat_async(qin, aq, hv * a.r * static_cast<int>(sizeof(T)), tid, nthr);
  copy_flat_async(bq_s, bq, a.r * a.d * static_cast<int>(sizeof(T)), tid, nthr);
  return bq_s;
}

// q (HG x q_cols) for the block's heads from the staged inputs, pre-scaled by qscale; rows >= hv
// and columns >= d are zero. aq goes first into a transposed float table aq_t (r x HG8, zero
// past hv: the caller gives r * HG8 floats), then a thread per (8 heads, column) reads 8 heads
// with two 16-byte broadcasts per rank.
template <typename T, typename QT>
__device__ __forceinline__ void compute_q(const TpaArgs& a, const T* aq_s, const T* bq_s, int hv,
                                          float* aq_t, QT* Qs, int q_stride, int q_cols, int tid,
                                          int nthr) {
  using S = Storage<T>;
  const int HG8 = (a.HG + 7) & ~7;
  for (int i = tid; i < HG8 * a.r; i += nthr) {
    const int hh = i / a.r, rr = i % a.r;
    aq_t[rr * HG8 + hh] = hh < hv ? S::to_f(aq_s[i]) : 0.f;
  }
  __syncthreads();
  const int groups = HG8 / 8;
  for (int i = tid; i < groups * q_cols; i += nthr) {
    const int hc = i / q_cols, k = i % q_cols;
    float acc[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    if (k < a.d) {
      for (int rr = 0; rr < a.r; ++rr) {
        const float bv = S::to_f(bq_s[rr * a.d + k]);
        const float4 a0 = *reinterpret_cast<const float4*>(aq_t + rr * HG8 + hc * 8);
        const float4 a1 = *reinterpret_cast<const float4*>(aq_t + rr * HG8 + hc * 8 + 4);
        acc[0] = fmaf(a0.x, bv, acc[0]); acc[1] = fmaf(a0.y, bv, acc[1]);
        acc[2] = fmaf(a0.z, bv, acc[2]); acc[3] = fmaf(a0.w, bv, acc[3]);
        acc[4] = fmaf(a1.x, bv, acc[4]); acc[5] = fmaf(a1.y, bv, acc[5]);
        acc[6] = fmaf(a1.z, bv, acc[6]); acc[7] = fmaf(a1.w, bv, acc[7]);
      }
    }
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int row = hc * 8 + j;
      if (row < a.HG) {
        if constexpr (sizeof(QT) == 4) Qs[row * q_stride + k] = acc[j] * a.qscale;
        else Qs[row * q_stride + k] = Storage<QT>::from_f(acc[j] * a.qscale);
      }
    }
  }
}

}  // namespace opbench::kernels::tpa
