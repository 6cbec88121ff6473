// The 1d row machinery's units: V storage elements (16-byte vectors, or single elements on the
// scalar path), loaded (read-only path or plain), stored (streaming or plain), and converted to
// and from float32 (prefetched into L2: prefetch_l2 in common.cuh).
#pragma once
#include <type_traits>

#include "kernels/common.cuh"

namespace opbench::kernels::rows1d {

template <typename T, int V>
struct alignas(sizeof(T) * V) Raw {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Raw<T, V> zero_raw() {
  Raw<T, V> r;
  if constexpr (sizeof(T) * V == 16) {
    *reinterpret_cast<int4*>(&r) = make_int4(0, 0, 0, 0);
  } else {
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = Storage<T>::from_f(0.f);
  }
  return r;
}

// One unit from global memory: through the read-only path (ld.global.nc), or with kPlain a
// plain ld.global (what ATen's elementwise kernels use; act's small forward calls measured
// faster with it, act/act.cu flat_shape).
template <typename T, int V, bool kPlain = false>
__device__ __forceinline__ Raw<T, V> ld(const T* p) {
  Raw<T, V> r;
  if constexpr (sizeof(T) * V == 16) {
    if constexpr (kPlain) {
      int4 v;
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "l"(p));
      *reinterpret_cast<int4*>(&r) = v;
    } else {
      *reinterpret_cast<int4*>(&r) = __ldg(reinterpret_cast<const int4*>(p));
    }
  } else {
    static_assert(V == 1, "a unit is 16 bytes or one element");
    r.v[0] = kPlain ? *p : __ldg(p);
  }
  return r;
}

// cs: a streaming store (st.global.cs, evict-first), else a plain write-back store.
template <typename T, int V>
__device__ __forceinline__ void st(T* p, const Raw<T, V>& r, bool cs) {
  if constexpr (sizeof(T) * V == 16) {
    if (cs) __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&r));
    else *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&r);
  } else {
    static_assert(V == 1, "a unit is 16 bytes or one element");
    *p = r.v[0];
  }
}

template <typename T, int V>
__device__ __forceinline__ void unpack(const Raw<T, V>& r, float (&f)[V]) {
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < V; ++i) f[i] = r.v[i];
  } else if constexpr (V == 1) {
    f[0] = Storage<T>::to_f(r.v[0]);
  } else if constexpr (std::is_same_v<T, __half>) {
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      const float2 t = __half22float2(*reinterpret_cast<const __half2*>(&r.v[2 * i]));
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  } else {
#pragma unroll
    for (int i = 0; i < V / 2; ++i) {
      const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&r.v[2 * i]));
      f[2 * i] = t.x;
      f[2 * i + 1] = t.y;
    }
  }
}

template <typename T, int V>
__device__ __forceinline__ Raw<T, V> pack(const float (&f)[V]) {
  Raw<T, V> r;
  if constexpr (std::is_same_v<T, float>) {
#pragma unroll
    for (int i = 0; i < V; ++i) r.v[i] = f[i];
  } else if constexpr (V == 1) {
    r.v[0] = Storage<T>::from_f(f[0]);
  } else if constexpr (std::is_same_v<T, __half>) {
#pragma unroll
    for (int i = 0; i < V / 2; ++i)
      *reinterpret_cast<__half2*>(&r.v[2 * i]) = __floats2half2_rn(f[2 * i], f[2 * i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < V / 2; ++i)
      *reinterpret_cast<__nv_bfloat162*>(&r.v[2 * i]) =
          __floats2bfloat162_rn(f[2 * i], f[2 * i + 1]);
  }
  return r;
}

}  // namespace opbench::kernels::rows1d
