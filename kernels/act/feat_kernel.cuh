// act's softmax over the d features when d is a power-of-two number (<= 32) of 16-byte units: a
// group of lanes per row, shuffle reductions, no shared memory (act_feat_kernel).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/rows1d/args.h"
#include "kernels/rows1d/units.cuh"

namespace opbench::kernels::act {

// Softmax over the d features, a group of G lanes per row (d = G x V: a power-of-two number of
// 16-byte units, at most 32); no shared memory, few registers, so full occupancy. Forward
// o = e / S; backward dx = e (do - D / S) / S with e = exp(x - max), S = sum e and D = sum e do
// reduced in the same shuffles (this is o (do - sum o do)). Bytes: fwd read x, write o; bwd read
// x and do, write dx. One row per group measured at or above two and four rows in flight at
// every n (docs/kernels.md, act).
template <typename T, int V, bool BWD>
__global__ void __launch_bounds__(rows1d::kThreads)
    act_feat_kernel(const T* __restrict__ x, const T* __restrict__ dout, T* __restrict__ out,
                    int64_t rows, int G, bool cs) {
  const int lg = threadIdx.x & (G - 1);
  const int64_t row = (int64_t(blockIdx.x) * rows1d::kThreads + threadIdx.x) / G;
  const bool ok = row < rows;  // the other lanes still join the shuffles
  const int64_t off = row * G * V + lg * V;
  float xv[V], dv[V];
  rows1d::unpack<T, V>(ok ? rows1d::ld<T, V>(x + off) : rows1d::zero_raw<T, V>(), xv);
  if constexpr (BWD)
    rows1d::unpack<T, V>(ok ? rows1d::ld<T, V>(dout + off) : rows1d::zero_raw<T, V>(), dv);
  float mx = xv[0];
#pragma unroll
  for (int e = 1; e < V; ++e) mx = fmaxf(mx, xv[e]);
  for (int o = G >> 1; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0.f, dot = 0.f;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    xv[e] = __expf(xv[e] - mx);
    sum += xv[e];
    if constexpr (BWD) dot = fmaf(xv[e], dv[e], dot);
  }
  for (int o = G >> 1; o > 0; o >>= 1) {
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if constexpr (BWD) dot += __shfl_xor_sync(0xffffffffu, dot, o);
  }
  if (!ok) return;
  const float inv = 1.f / sum;
  float res[V];
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if constexpr (BWD) res[e] = xv[e] * inv * (dv[e] - dot * inv);
    else res[e] = xv[e] * inv;
  }
  rows1d::st<T, V>(out + off, rows1d::pack<T, V>(res), cs);
}

}  // namespace opbench::kernels::act
