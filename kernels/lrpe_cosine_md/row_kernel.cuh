// lrpe_cosine_md: md_row_kernel, softmax over the d features of each (b, h, token) row: a group
// of G threads (a power of two <= 32) per (head, token) row, K vectors each, shuffles for
// max/sum/dot.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/lrpe_cosine_md/angles.cuh"
#include "kernels/lrpe_cosine_md/args.h"
#include "kernels/lrpe_cosine_md/vectors.cuh"

namespace opbench::kernels::lrpe_cosine_md {

template <typename T, int V, int K, bool BWD>
__global__ void __launch_bounds__(kThreads) md_row_kernel(MdArgs a, int G) {
  using S = Storage<T>;
  const int lg = threadIdx.x & (G - 1);
  const int64_t rows = a.h * a.L;
  int64_t row = (static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x) / G;
  const bool active = row < rows;  // inactive lanes still join the shuffles
  if (!active) row = 0;
  const int64_t s = row % a.L, hh = row / a.L;

  float cs[K][V], sn[K][V];
  bool ok[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const int vj = lg + k * G;
    ok[k] = active && vj < a.nvec;
    if (ok[k]) md_angles<V>(a, hh, s, vj * V, cs[k], sn[k]);
  }

  const int64_t b0 = static_cast<int64_t>(blockIdx.y) * a.bpt;
  const int64_t b1 = b0 + a.bpt < a.b ? b0 + a.bpt : a.b;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);
  T* __restrict__ out = static_cast<T*>(a.out);

  for (int64_t bi = b0; bi < b1; ++bi) {
    const int64_t r = bi * rows + row;  // (b, h, s) row index
    Pack<T, V> xv[K], dc[K], ds[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (!ok[k]) continue;
      const int j0 = (lg + k * G) * V;
      xv[k] = ld_stream<T, V>(x + r * a.d + j0);
      if constexpr (BWD) {
        dc[k] = ld_stream<T, V>(dout + r * 2 * a.d + j0);
        ds[k] = ld_stream<T, V>(dout + r * 2 * a.d + a.d + j0);
      }
    }
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (ok[k]) mx = fmaxf(mx, S::to_f(xv[k].v[v]));
    mx = group_max(mx, G);
    float ex[K][V], sum = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int v = 0; v < V; ++v) {
        ex[k][v] = ok[k] ? __expf(S::to_f(xv[k].v[v]) - mx) : 0.f;
        sum += ex[k][v];
      }
    sum = group_sum(sum, G);
    const float inv = 1.f / sum;
    if constexpr (!BWD) {
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (!ok[k]) continue;
        const int j0 = (lg + k * G) * V;
        Pack<T, V> oc, os;
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const float o = ex[k][v] * inv;
          oc.v[v] = S::from_f(o * cs[k][v]);
          os.v[v] = S::from_f(o * sn[k][v]);
        }
        st_stream<T, V>(out + r * 2 * a.d + j0, oc);
        st_stream<T, V>(out + r * 2 * a.d + a.d + j0, os);
      }
    } else {
      float g[K][V], dot = 0.f;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          g[k][v] = ok[k] ? S::to_f(dc[k].v[v]) * cs[k][v] + S::to_f(ds[k].v[v]) * sn[k][v] : 0.f;
          ex[k][v] *= inv;  // o
          dot += ex[k][v] * g[k][v];
        }
      dot = group_sum(dot, G);
#pragma unroll
      for (int k = 0; k < K; ++k) {
        if (!ok[k]) continue;
        Pack<T, V> dx;
#pragma unroll
        for (int v = 0; v < V; ++v) dx.v[v] = S::from_f(ex[k][v] * (g[k][v] - dot));
        st_stream<T, V>(out + r * a.d + (lg + k * G) * V, dx);
      }
    }
  }
}

}  // namespace opbench::kernels::lrpe_cosine_md
