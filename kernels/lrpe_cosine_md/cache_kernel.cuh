// lrpe_cosine_md: md_cache_kernel, the (N, h, d) cos and sin tables of
// lrpe_cosine_md_build_cache.
#pragma once
#include <cstdint>

#include "kernels/lrpe_cosine_md/angles.cuh"
#include "kernels/lrpe_cosine_md/args.h"

namespace opbench::kernels::lrpe_cosine_md {

__global__ void __launch_bounds__(kThreads) md_cache_kernel(MdArgs a, int64_t total, float* cos_t,
                                                              float* sin_t) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * kThreads) {
    const int j = static_cast<int>(i % a.d);
    const int64_t gh = i / a.d;
    const int64_t hh = gh % a.h, g = gh / a.h;
    float cs[1], sn[1];
    md_angles<1>(a, hh, a.l + g, j, cs, sn);
    cos_t[i] = cs[0];
    sin_t[i] = sn[0];
  }
}

}  // namespace opbench::kernels::lrpe_cosine_md
