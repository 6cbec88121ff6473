// lrpe_cosine_md: md_angles, the cos and sin of V consecutive features of one token and head:
// 1 and 0 for the extra tokens, else from the cos/sin cache or from theta and the token's grid
// coordinates.
#pragma once
#include <cstdint>

#include "kernels/lrpe_cosine_md/args.h"
#include "kernels/lrpe_cosine_md/sincos.cuh"
#include "kernels/lrpe_cosine_md/vectors.cuh"

namespace opbench::kernels::lrpe_cosine_md {

// Angles of the V features j0 .. j0+V-1 of token s, head hh.
template <int V>
__device__ __forceinline__ void md_angles(const MdArgs& a, int64_t hh, int64_t s, int j0,
                                          float (&cs)[V], float (&sn)[V]) {
  if (s < a.l) {
#pragma unroll
    for (int k = 0; k < V; ++k) { cs[k] = 1.f; sn[k] = 0.f; }
    return;
  }
  const int64_t g = s - a.l;
  if (a.cos_t != nullptr) {
    const int64_t off = (g * a.h + hh) * a.d + j0;
    ld_floats<V>(a.cos_t + off, cs);
    ld_floats<V>(a.sin_t + off, sn);
    return;
  }
  int c0, c1 = 0, c2 = 0;
  if (a.md == 1) {
    c0 = static_cast<int>(g);
  } else if (a.md == 2) {
    c0 = static_cast<int>(g / a.n1);
    c1 = static_cast<int>(g % a.n1);
  } else {
    const int64_t plane = a.n1 * a.n2;
    c0 = static_cast<int>(g / plane);
    const int64_t rem = g % plane;
    c1 = static_cast<int>(rem / a.n2);
    c2 = static_cast<int>(rem % a.n2);
  }
  int axis = j0 / a.e, base = j0 % a.e;
  const float* th = a.theta + hh * a.e;
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const int c = axis == 0 ? c0 : (axis == 1 ? c1 : c2);
    const float ang = static_cast<float>(c) * __ldg(th + base);
    md_sincos(ang, sn[k], cs[k]);
    if (++base == a.e) { base = 0; ++axis; }
  }
}

}  // namespace opbench::kernels::lrpe_cosine_md
