// The providers of our CUDA kernels (linked only when CUDA is built), listed by
// src/providers/registry.cpp.
#pragma once
#include <vector>

#include "providers/provider.hpp"

namespace opbench {

// cuda for act, lrpe_cosine, lrpe_rotate (kernels/providers_1d.cpp)
std::vector<Provider> cuda_providers_1d();
// cuda and cuda_cache for lrpe_cosine_md; cuda_b, cuda_bh, cuda_bn for tpa_decode
// (kernels/providers_md_tpa.cpp)
std::vector<Provider> cuda_providers_md_tpa();

}  // namespace opbench
