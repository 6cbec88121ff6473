// Device-side helpers shared by every kernel family: storage-type traits, 16-byte vector
// loads and stores, the L2 prefetch, cp.async into shared memory, counters between blocks,
// reductions inside a lane group, and the activation functions in float32.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common.h"

namespace opbench::kernels {

// Storage types and their float32 conversions.
template <typename T> struct Storage;
template <> struct Storage<float> {
  static __device__ __forceinline__ float to_f(float v) { return v; }
  static __device__ __forceinline__ float from_f(float v) { return v; }
};
template <> struct Storage<__half> {
  static __device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
  static __device__ __forceinline__ __half from_f(float v) { return __float2half_rn(v); }
};
template <> struct Storage<__nv_bfloat16> {
  static __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __forceinline__ __nv_bfloat16 from_f(float v) { return __float2bfloat16_rn(v); }
};

// A 16-byte packet of storage elements: 8 halves or 4 floats.
template <typename T>
struct alignas(16) Vec {
  static constexpr int N = 16 / sizeof(T);
  T v[N];
};

template <typename T>
__device__ __forceinline__ Vec<T> load16(const T* p) {
  Vec<T> r;
  *reinterpret_cast<int4*>(&r) = __ldg(reinterpret_cast<const int4*>(p));
  return r;
}
// Streaming load (read once, do not keep in L1/L2 longer than needed).
template <typename T>
__device__ __forceinline__ Vec<T> load16_stream(const T* p) {
  Vec<T> r;
  *reinterpret_cast<int4*>(&r) = __ldcs(reinterpret_cast<const int4*>(p));
  return r;
}
template <typename T>
__device__ __forceinline__ void store16(T* p, const Vec<T>& v) {
  *reinterpret_cast<int4*>(p) = *reinterpret_cast<const int4*>(&v);
}
template <typename T>
__device__ __forceinline__ void store16_stream(T* p, const Vec<T>& v) {
  __stcs(reinterpret_cast<int4*>(p), *reinterpret_cast<const int4*>(&v));
}

// Asks L2 for the line holding p (prefetch.global.L2: no register is held; a load of it that
// follows hits L2).
__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// Shared-memory address of a generic pointer, for PTX operands.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared without registers (cp.async, L2 only); ok false writes zeros and
// reads nothing.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool ok) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
               "r"(ok ? 16 : 0)
               : "memory");
}
// cp.async groups: close the copies issued so far into a group; wait until at most N groups
// are pending (the issuing thread then sees their bytes).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Counters shared between blocks: an acq_rel add and an acquire load, at gpu scope.
__device__ __forceinline__ unsigned atom_add_acq_rel(unsigned* p, unsigned v) {
  unsigned old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Reductions inside a group of `width` lanes (a power of two <= 32, aligned in the warp).
// Every lane of the warp must call these (no divergence around them).
__device__ __forceinline__ float group_max(float v, int width) {
  for (int off = width >> 1; off > 0; off >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float group_sum(float v, int width) {
  for (int off = width >> 1; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Elementwise activations (softmax is a reduction and lives with its kernels).
__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + __expf(-x)); }

template <Act A>
__device__ __forceinline__ float act_fwd(float x) {
  if constexpr (A == Act::relu) return x > 0.f ? x : 0.f;
  else if constexpr (A == Act::sigmoid) return sigmoidf_(x);
  else if constexpr (A == Act::silu) return x * sigmoidf_(x);
  else return x;
}
// dx from x and the gradient of the activation's output.
template <Act A>
__device__ __forceinline__ float act_bwd(float x, float g) {
  if constexpr (A == Act::relu) return x > 0.f ? g : 0.f;  // relu'(0) = 0, as PyTorch
  else if constexpr (A == Act::sigmoid) { float s = sigmoidf_(x); return g * s * (1.f - s); }
  else if constexpr (A == Act::silu) { float s = sigmoidf_(x); return g * s * (1.f + x * (1.f - s)); }
  else return g;
}

}  // namespace opbench::kernels
