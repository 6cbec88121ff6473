// tpa_decode device helpers: MmaOp<T>, the tensor-core traits of a storage type (bf16, fp16):
// mma.sync m16n8k16 with float32 accumulation, and packing float pairs into (and out of) the
// 32-bit registers of its fragments.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/common.cuh"

namespace opbench::kernels::tpa {

// One template for both types: they differ only in the PTX type of the mma (bf16, f16), the
// pair type of a 32-bit register (T2) and its conversions from and to two floats.
template <typename T>
struct MmaOp {
  static_assert(std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>,
                "MmaOp: bf16 or fp16");
  static constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  using T2 = std::conditional_t<kBf16, __nv_bfloat162, __half2>;

  static __device__ __forceinline__ void run(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
// The instruction for PTX type TY ("bf16", "f16"): c += a b.
#define OPBENCH_TPA_MMA(TY)                                                                    \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, "      \
               "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                     \
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                               \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
    if constexpr (kBf16) OPBENCH_TPA_MMA("bf16");
    else OPBENCH_TPA_MMA("f16");
#undef OPBENCH_TPA_MMA
  }
  static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
    T2 v;
    if constexpr (kBf16) v = __floats2bfloat162_rn(lo, hi);
    else v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  static __device__ __forceinline__ float2 unpack(uint32_t r) {
    const T2 v = *reinterpret_cast<const T2*>(&r);
    if constexpr (kBf16) return __bfloat1622float2(v);
    else return __half22float2(v);
  }
};

}  // namespace opbench::kernels::tpa
