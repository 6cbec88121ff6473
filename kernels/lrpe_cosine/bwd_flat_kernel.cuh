// lrpe_cosine's flat backward kernel (cos_bwd_flat_kernel): small backward calls with an
// elementwise act, one thread per 16-byte unit of dx. When it runs: lrpe_cosine.cu
// (flat_backward).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/rows1d/args.h"
#include "kernels/rows1d/math.cuh"
#include "kernels/rows1d/units.cuh"

namespace opbench::kernels::lrpe_cosine {

// Backward of small calls with an elementwise act: one thread per 16-byte unit of dx, theta
// read through the read-only cache, no table and no barrier. The row kernel's blocks fill a
// theta table (an L2 round trip and a barrier) before their loads; at b 12 h 12 d 128 n = 256
// that is 1152 one-step blocks at 2 per SM, 4.4 waves of it (docs/kernels.md, lrpe_cosine). Here each
// thread evaluates the angles of its own 8 elements (no reuse across batches), at up to 8
// blocks per SM. Bytes as the row kernel: do (2|x|) and x read, dx written.
template <typename T, int V, Act A>
__global__ void __launch_bounds__(rows1d::kThreads) cos_bwd_flat_kernel(const rows1d::Args a,
                                                                        int64_t nunits) {
  const int64_t i = int64_t(blockIdx.x) * rows1d::kThreads + threadIdx.x;
  if (i >= nunits) return;
  const int64_t row = i / a.U;  // row (b, s, h) of x; x and dx rows are d long, do rows 2d
  const int k0 = int(i - row * a.U) * V;
  const int64_t h = row % a.H, s = (row / a.H) % a.N;
  const T* X = static_cast<const T*>(a.x);
  const T* G = static_cast<const T*>(a.dout);
  const int64_t xo = row * a.D + k0, go = row * 2 * a.D + k0;
  const rows1d::Raw<T, V> dcr = rows1d::ld<T, V>(G + go), dsr = rows1d::ld<T, V>(G + go + a.D);
  rows1d::Raw<T, V> xr;
  if constexpr (A != Act::none) xr = rows1d::ld<T, V>(X + xo);
  float th[V];
#pragma unroll
  for (int e = 0; e < V; ++e) th[e] = __ldg(a.theta + h * a.th_sh + int64_t(k0 + e) * a.th_sk);
  float dc[V], ds[V], xv[V], dx[V];
  rows1d::unpack<T, V>(dcr, dc);
  rows1d::unpack<T, V>(dsr, ds);
  if constexpr (A != Act::none) rows1d::unpack<T, V>(xr, xv);
  const int64_t pos = a.offset + s;
#pragma unroll
  for (int e = 0; e < V; ++e) {
    float sn, cs;
    rows1d::sincos_angle(rows1d::angle_of(pos, th[e]), sn, cs);
    const float g = fmaf(dc[e], cs, ds[e] * sn);
    dx[e] = A == Act::none ? g : rows1d::fact_bwd<A>(xv[e], g);
  }
  rows1d::st<T, V>(static_cast<T*>(a.out) + xo, rows1d::pack<T, V>(dx), a.cs);
}

}  // namespace opbench::kernels::lrpe_cosine
