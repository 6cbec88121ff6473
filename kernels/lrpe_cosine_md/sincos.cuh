// lrpe_cosine_md: md_sincos, sin and cos of a float32 angle to ~1 ulp whatever the fast-math
// flags. The repo builds kernels with --use_fast_math, which would turn sincosf into the
// approximate __sinf/__cosf (absolute error ~1e-6 * |angle|, too coarse at angle ~ 3e4), so
// md_sincos reduces the argument itself (three-part Cody-Waite with FMA, |angle| <= 65536;
// double precision beyond) and evaluates minimax polynomials on [-pi/4, pi/4].
#pragma once
#include <cmath>

namespace opbench::kernels::lrpe_cosine_md {

// sin and cos of a float32 angle, ~1 ulp, independent of --use_fast_math.
__device__ __forceinline__ void md_sincos(float x, float& s, float& c) {
  if (fabsf(x) > 65536.f) {  // rare: exact reduction in double
    double sd, cd;
    sincos(static_cast<double>(x), &sd, &cd);
    s = static_cast<float>(sd);
    c = static_cast<float>(cd);
    return;
  }
  const float k = rintf(x * 0.636619746685028076f);  // x / (pi / 2), nearest quadrant
  float r = fmaf(-k, 1.5707963705062866f, x);         // pi/2 = P1 + P2 + P3
  r = fmaf(-k, -4.3711388286737929e-08f, r);
  r = fmaf(-k, -1.7151245100058819e-15f, r);
  const float z = r * r;
  // Minimax polynomials on [-pi/4, pi/4] (Cephes sinf/cosf coefficients).
  float ps = fmaf(z, -1.9515295891e-4f, 8.3321608736e-3f);
  ps = fmaf(z, ps, -1.6666654611e-1f);
  const float sr = fmaf(r * z, ps, r);
  float pc = fmaf(z, 2.443315711809948e-5f, -1.388731625493765e-3f);
  pc = fmaf(z, pc, 4.166664568298827e-2f);
  const float cr = fmaf(z * z, pc, fmaf(-0.5f, z, 1.f));
  const int q = static_cast<int>(k) & 3;
  const float ss = (q & 1) ? cr : sr;
  const float cc = (q & 1) ? sr : cr;
  s = (q & 2) ? -ss : ss;
  c = ((q + 1) & 2) ? -cc : cc;
}

}  // namespace opbench::kernels::lrpe_cosine_md
