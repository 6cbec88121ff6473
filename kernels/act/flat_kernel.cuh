// act's flat kernel: relu / sigmoid / silu forward or backward over all elements as one flat
// array of units (16 bytes, or single elements on the scalar path), kFlatRpt units a thread, the
// inputs through the read-only path or plain loads. Launch shapes: act.cu (flat_shape).
#pragma once
#include <cstdint>

#include "kernels/common.cuh"
#include "kernels/rows1d/units.cuh"

namespace opbench::kernels::act {

using rows1d::Raw;
constexpr int kFlatMaxThreads = 512;  // act_flat_kernel: blocks of 128, 256 (default) or 512

// Elementwise forward (o = f(x)) or backward (dx = f'(x) do) over nunits units of V elements;
// kFlatRpt units per thread (all loaded before the first use), blocks of blockDim.x threads.
// kPlain: the inputs through plain ld.global instead of the read-only path (ld.global.nc).
template <typename T, int V, Act A, bool BWD, int kFlatRpt, bool kPlain>
__global__ void __launch_bounds__(kFlatMaxThreads)
    act_flat_kernel(const T* __restrict__ x, const T* __restrict__ dout, T* __restrict__ out,
                    int64_t nunits, bool cs) {
  const int nt = blockDim.x;
  const int64_t base = int64_t(blockIdx.x) * (nt * kFlatRpt) + threadIdx.x;
  Raw<T, V> xr[kFlatRpt], dr[kFlatRpt];
#pragma unroll
  for (int j = 0; j < kFlatRpt; ++j) {
    const int64_t i = base + int64_t(j) * nt;
    const bool ok = i < nunits;
    xr[j] = ok ? rows1d::ld<T, V, kPlain>(x + i * V) : rows1d::zero_raw<T, V>();
    if constexpr (BWD) dr[j] = ok ? rows1d::ld<T, V, kPlain>(dout + i * V) : rows1d::zero_raw<T, V>();
  }
#pragma unroll
  for (int j = 0; j < kFlatRpt; ++j) {
    const int64_t i = base + int64_t(j) * nt;
    if (i >= nunits) continue;
    float xv[V], r[V];
    rows1d::unpack<T, V>(xr[j], xv);
    if constexpr (BWD) {
      float dv[V];
      rows1d::unpack<T, V>(dr[j], dv);
#pragma unroll
      for (int e = 0; e < V; ++e) r[e] = act_bwd<A>(xv[e], dv[e]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) r[e] = act_fwd<A>(xv[e]);
    }
    rows1d::st<T, V>(out + i * V, rows1d::pack<T, V>(r), cs);
  }
}

}  // namespace opbench::kernels::act
