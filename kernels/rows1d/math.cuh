// The 1d row machinery's float32 math: angles and their sin and cos, the elementwise
// activations with the fast reciprocal, and the merge of online-softmax statistics (reductions
// inside a row group: group_max, group_sum in common.cuh).
//
// Angles: angle = (offset + s) * theta[h, k] in float32, as OPS.md states and the torch
// baseline computes it (the product rounded to float32: at s = 32768 that rounding moves the
// angle by up to 2e-3 rad, so it is part of the op's definition). sin and cos of that float
// are evaluated accurately at any size: a three-term Cody-Waite reduction mod pi/2 with FMAs,
// then the fast sin/cos on |r| <= pi/4 (absolute error 2^-21.4 ~ 4e-7); __sinf on the raw
// angle would be off by ~1e-3 at 32768.
#pragma once
#include <cstdint>

#include "kernels/common.cuh"

namespace opbench::kernels::rows1d {

// The float32 angle of position pos (exact integer below 2^24) and frequency th.
__device__ __forceinline__ float angle_of(int64_t pos, float th) {
  return __fmul_rn(static_cast<float>(pos), th);
}

// sin and cos of a float32 angle p, absolute error ~5e-7 for |p| < 4e6 (the reduction's
// roundings grow as |p| * 2^-47 beyond). k = nearest multiple of pi/2; r = p - k pi/2 with
// pi/2 = C1 + C2 + C3 (FMAs, so k * C1 needs no exact split); q = k mod 4 picks the quadrant.
__device__ __forceinline__ void sincos_angle(float p, float& s, float& c) {
  const float k = rintf(p * 0x1.45f306p-1f);  // p * 2/pi
  float r = fmaf(k, -0x1.921fb6p+0f, p);      // C1 = 0x1.921fb6p+0
  r = fmaf(k, 0x1.777a5cp-25f, r);            // C2 = -0x1.777a5cp-25
  r = fmaf(k, 0x1.ee59dap-50f, r);            // C3 = -0x1.ee59dap-50
  const float q = k - 4.f * floorf(0.25f * k);  // k mod 4, exact for any float k
  float sr, cr;
  __sincosf(r, &sr, &cr);
  const bool odd = q == 1.f || q == 3.f, neg = q >= 2.f;
  const float s1 = odd ? cr : sr, c1 = odd ? -sr : cr;
  s = neg ? -s1 : s1;
  c = neg ? -c1 : c1;
}

// Elementwise activations in float32 with the fast reciprocal (MUFU.RCP, 2 ulp) instead of an
// IEEE division: s(x) = 1 / (1 + e^-x); e^-x = inf for x < -88 gives s = 0, as it should.
__device__ __forceinline__ float fsig(float x) { return __fdividef(1.f, 1.f + __expf(-x)); }
template <Act A>
__device__ __forceinline__ float fact_fwd(float x) {
  if constexpr (A == Act::relu) return x > 0.f ? x : 0.f;
  else if constexpr (A == Act::sigmoid) return fsig(x);
  else if constexpr (A == Act::silu) return __fdividef(x, 1.f + __expf(-x));
  else return x;
}
template <Act A>
__device__ __forceinline__ float fact_bwd(float x, float g) {
  if constexpr (A == Act::relu) return x > 0.f ? g : 0.f;  // relu'(0) = 0, as PyTorch
  else if constexpr (A == Act::sigmoid) { const float s = fsig(x); return g * s * (1.f - s); }
  else if constexpr (A == Act::silu) { const float s = fsig(x); return g * s * fmaf(x, 1.f - s, 1.f); }
  else return g;
}

// Merge of online-softmax statistics (max m, sum of exp(x - m) l, sum of exp(x - m) g t).
// Empty statistics are (-FLT_MAX, 0, 0): finite, so no inf - inf appears.
__device__ __forceinline__ void merge_stats(float& m, float& l, float& t, float m2, float l2,
                                            float t2) {
  const float mm = fmaxf(m, m2);
  const float a1 = __expf(m - mm), a2 = __expf(m2 - mm);
  m = mm;
  l = l * a1 + l2 * a2;
  t = t * a1 + t2 * a2;
}

}  // namespace opbench::kernels::rows1d
