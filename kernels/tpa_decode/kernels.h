// tpa_decode: the kernel instantiations a plan can launch, as host function pointers
// (kernels.cu builds them all). nullptr where no instantiation exists.
#pragma once
#include "kernels/common.h"
#include "kernels/tpa_decode/args.h"

namespace opbench::kernels::tpa {

using KernelFn = void (*)(TpaArgs);

// tpa_tc_kernel for bf16 (dt == bf16) or fp16 (any other dt), tile tt (32, 64) and stages:
// 64x2, 64x3, 64x4, 32x2, 32x4.
KernelFn tc_kernel_for(DType dt, int tt, int stages);
// tpa_cc_kernel for dt.
KernelFn cc_kernel_for(DType dt);
// tpa_reduce_kernel for dt, V = 4 (float4 columns) or 1.
KernelFn reduce_kernel_for(DType dt, int V);

}  // namespace opbench::kernels::tpa
