// lrpe_cosine_md: softmax over the sequence, md_seq_stats_kernel (per (b, h, feature) column
// online max / sum, and backward sum of exp * dxa, over a split of the tokens) and
// md_seq_merge_kernel (the splits merged per column).
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/lrpe_cosine_md/angles.cuh"
#include "kernels/lrpe_cosine_md/args.h"
#include "kernels/lrpe_cosine_md/vectors.cuh"

namespace opbench::kernels::lrpe_cosine_md {

// Softmax over the sequence, pass 1: per (b, h, feature) column and token split, the online
// max m, sum S = sum exp(x - m) and (backward) T = sum exp(x - m) * dxa (SeqPartials).
// Grid (b * h, nsplit); the block's threads are (R token rows) x (CV feature vectors).
template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(kThreads) md_seq_stats_kernel(MdArgs a, SeqPartials p) {
  using S = Storage<T>;
  __shared__ float sh_m[kThreads * V], sh_s[kThreads * V], sh_t[BWD ? kThreads * V : 1];
  const int64_t bh = blockIdx.x;
  const int64_t hh = bh % a.h;
  const int split = blockIdx.y;
  const int64_t s_begin = split * p.split_len;
  const int64_t s_end = s_begin + p.split_len < a.L ? s_begin + p.split_len : a.L;
  const int CV = a.nvec < kThreads ? a.nvec : kThreads;
  const int R = kThreads / CV;
  const int r = threadIdx.x / CV, c = threadIdx.x % CV;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);

  for (int vj0 = 0; vj0 < a.nvec; vj0 += CV) {
    const int vj = vj0 + c;
    const bool ok = r < R && vj < a.nvec;
    float m[V], sum[V], tt[V];
#pragma unroll
    for (int v = 0; v < V; ++v) { m[v] = -INFINITY; sum[v] = 0.f; tt[v] = 0.f; }
    if (ok) {
      const int j0 = vj * V;
      for (int64_t s = s_begin + r; s < s_end; s += R) {
        const Pack<T, V> xv = ld_stream<T, V>(x + (bh * a.L + s) * a.d + j0);
        float g[V];
        if constexpr (BWD) {
          float cs[V], sn[V];
          md_angles<V>(a, hh, s, j0, cs, sn);
          const Pack<T, V> dc = ld_stream<T, V>(dout + (bh * a.L + s) * 2 * a.d + j0);
          const Pack<T, V> ds = ld_stream<T, V>(dout + (bh * a.L + s) * 2 * a.d + a.d + j0);
#pragma unroll
          for (int v = 0; v < V; ++v) g[v] = S::to_f(dc.v[v]) * cs[v] + S::to_f(ds.v[v]) * sn[v];
        }
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float xf = S::to_f(xv.v[v]);
          const float dl = xf - m[v];  // +inf for the first token
          const float w = __expf(-fabsf(dl));
          if (dl > 0.f) {  // new max: rescale what was summed so far
            sum[v] = fmaf(sum[v], w, 1.f);
            if constexpr (BWD) tt[v] = fmaf(tt[v], w, g[v]);
            m[v] = xf;
          } else {
            sum[v] += w;
            if constexpr (BWD) tt[v] = fmaf(w, g[v], tt[v]);
          }
        }
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      sh_m[threadIdx.x * V + v] = m[v];
      sh_s[threadIdx.x * V + v] = sum[v];
      if constexpr (BWD) sh_t[threadIdx.x * V + v] = tt[v];
    }
    __syncthreads();
    if (r == 0 && vj < a.nvec) {
#pragma unroll
      for (int v = 0; v < V; ++v) {
        float M = -INFINITY;
        for (int rr = 0; rr < R; ++rr) M = fmaxf(M, sh_m[(rr * CV + c) * V + v]);
        float Ssum = 0.f, Tsum = 0.f;
        if (M != -INFINITY) {
          for (int rr = 0; rr < R; ++rr) {
            const int i = (rr * CV + c) * V + v;
            const float w = __expf(sh_m[i] - M);  // 0 for rows that saw no token
            Ssum = fmaf(sh_s[i], w, Ssum);
            if constexpr (BWD) Tsum = fmaf(sh_t[i], w, Tsum);
          }
        }
        const int64_t o = (bh * p.nsplit + split) * a.d + vj * V + v;
        p.m[o] = M;
        p.s[o] = Ssum;
        if constexpr (BWD) p.t[o] = Tsum;
      }
    }
    __syncthreads();
  }
}

// Pass 2: merge the splits of each column into (max, 1/sum[, sum(o * dxa)]).
__global__ void __launch_bounds__(kThreads) md_seq_merge_kernel(SeqPartials p, int64_t columns,
                                                                  int d, float* fm, float* fa,
                                                                  float* fc) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (col >= columns) return;
  const int64_t bh = col / d, j = col % d;
  float M = -INFINITY;
  for (int i = 0; i < p.nsplit; ++i) M = fmaxf(M, p.m[(bh * p.nsplit + i) * d + j]);
  float Ssum = 0.f, Tsum = 0.f;
  for (int i = 0; i < p.nsplit; ++i) {
    const int64_t o = (bh * p.nsplit + i) * d + j;
    const float w = __expf(p.m[o] - M);
    Ssum = fmaf(p.s[o], w, Ssum);
    if (fc != nullptr) Tsum = fmaf(p.t[o], w, Tsum);
  }
  fm[col] = M;
  fa[col] = 1.f / Ssum;
  if (fc != nullptr) fc[col] = Tsum / Ssum;
}

}  // namespace opbench::kernels::lrpe_cosine_md
