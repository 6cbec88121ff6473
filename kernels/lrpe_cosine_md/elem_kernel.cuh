// lrpe_cosine_md: md_elem_kernel, one thread per (head, token, 16-byte feature vector); it
// computes (or reads) cos/sin once and walks `bpt` batches. Acts none/relu/sigmoid/silu, and the
// apply pass of softmax over the sequence (from finished column statistics).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/lrpe_cosine_md/angles.cuh"
#include "kernels/lrpe_cosine_md/args.h"
#include "kernels/lrpe_cosine_md/vectors.cuh"

namespace opbench::kernels::lrpe_cosine_md {

// Elementwise acts (and the apply pass of softmax over the sequence when A == softmax).
template <typename T, int V, Act A, bool BWD>
__global__ void __launch_bounds__(kThreads) md_elem_kernel(MdArgs a) {
  using S = Storage<T>;
  constexpr int U = 4;  // batches whose loads are in flight together
  const int64_t items = a.h * a.L * a.nvec;
  const int64_t item = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (item >= items) return;
  const int vj = static_cast<int>(item % a.nvec);
  const int64_t row = item / a.nvec;  // hh * L + s
  const int64_t s = row % a.L, hh = row / a.L;
  const int j0 = vj * V;

  float cs[V], sn[V];
  md_angles<V>(a, hh, s, j0, cs, sn);

  const int64_t b0 = static_cast<int64_t>(blockIdx.y) * a.bpt;
  const int64_t b1 = b0 + a.bpt < a.b ? b0 + a.bpt : a.b;
  const T* __restrict__ x = static_cast<const T*>(a.x);
  const T* __restrict__ dout = static_cast<const T*>(a.dout);
  T* __restrict__ out = static_cast<T*>(a.out);
  constexpr bool kNeedX = !BWD || A != Act::none;

  for (int64_t bi = b0; bi < b1; bi += U) {
    if constexpr (!BWD) {  // forward only: backward measured slower with it (docs/kernels.md, lrpe_cosine_md)
      if (a.prefetch) {
#pragma unroll
        for (int u = 0; u < U; ++u)
          if (bi + U + u < b1) prefetch_l2(x + ((bi + U + u) * a.h * a.L + row) * a.d + j0);
      }
    }
    Pack<T, V> xv[U], dc[U], ds[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (bi + u < b1) {
        const int64_t xo = ((bi + u) * a.h * a.L + row) * a.d + j0;
        if constexpr (kNeedX) xv[u] = ld_stream<T, V>(x + xo);
        if constexpr (BWD) {
          const int64_t oo = ((bi + u) * a.h * a.L + row) * 2 * a.d + j0;
          dc[u] = ld_stream<T, V>(dout + oo);
          ds[u] = ld_stream<T, V>(dout + oo + a.d);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (bi + u >= b1) continue;
      const int64_t bh = (bi + u) * a.h + hh;
      float sm[V], sa[V], sc[V];
      if constexpr (A == Act::softmax) {
        ld_floats<V>(a.st_m + bh * a.d + j0, sm);
        ld_floats<V>(a.st_a + bh * a.d + j0, sa);
        if constexpr (BWD) ld_floats<V>(a.st_c + bh * a.d + j0, sc);
      }
      if constexpr (!BWD) {
        Pack<T, V> oc, os;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float xf = S::to_f(xv[u].v[k]);
          float xa;
          if constexpr (A == Act::softmax) xa = __expf(xf - sm[k]) * sa[k];
          else xa = act_fwd<A>(xf);
          oc.v[k] = S::from_f(xa * cs[k]);
          os.v[k] = S::from_f(xa * sn[k]);
        }
        const int64_t oo = (bh * a.L + s) * 2 * a.d + j0;
        st_stream<T, V>(out + oo, oc);
        st_stream<T, V>(out + oo + a.d, os);
      } else {
        Pack<T, V> dx;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float g = S::to_f(dc[u].v[k]) * cs[k] + S::to_f(ds[u].v[k]) * sn[k];
          float r;
          if constexpr (A == Act::none) {
            r = g;
          } else if constexpr (A == Act::softmax) {
            const float o = __expf(S::to_f(xv[u].v[k]) - sm[k]) * sa[k];
            r = o * (g - sc[k]);
          } else {
            r = act_bwd<A>(S::to_f(xv[u].v[k]), g);
          }
          dx.v[k] = S::from_f(r);
        }
        st_stream<T, V>(out + (bh * a.L + s) * a.d + j0, dx);
      }
    }
  }
}

}  // namespace opbench::kernels::lrpe_cosine_md
