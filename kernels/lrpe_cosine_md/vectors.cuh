// lrpe_cosine_md: loads and stores of V consecutive elements (Pack: one 16-byte access when V
// elements make 16 bytes, else scalars), streaming for the tensors and read-only for float
// tables (the L2 prefetch: prefetch_l2 in common.cuh).
#pragma once

#include "kernels/common.cuh"

namespace opbench::kernels::lrpe_cosine_md {

// V consecutive storage elements: one 16-byte access when V * sizeof(T) == 16, else scalars.
template <typename T, int V>
struct alignas(V * sizeof(T) == 16 ? 16 : alignof(T)) Pack {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> ld_stream(const T* p) {
  Pack<T, V> r;
  if constexpr (V * sizeof(T) == 16) {
    *reinterpret_cast<int4*>(&r) = __ldcs(reinterpret_cast<const int4*>(p));
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) r.v[k] = p[k];
  }
  return r;
}

template <typename T, int V>
__device__ __forceinline__ void st_stream(T* p, const Pack<T, V>& v) {
  if constexpr (V * sizeof(T) == 16) {
    __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) p[k] = v.v[k];
  }
}

// V floats; 16-byte loads when V is a multiple of 4 (callers guarantee the alignment then).
template <int V>
__device__ __forceinline__ void ld_floats(const float* __restrict__ p, float (&out)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V; k += 4) {
      const float4 t = __ldg(reinterpret_cast<const float4*>(p + k));
      out[k] = t.x; out[k + 1] = t.y; out[k + 2] = t.z; out[k + 3] = t.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) out[k] = __ldg(p + k);
  }
}

}  // namespace opbench::kernels::lrpe_cosine_md
