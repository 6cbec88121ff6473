// tpa_decode host: the device queries a plan makes (an attribute of the current device, the
// dynamic shared memory a kernel may use, resident blocks), cached per kernel and device where
// they cost microseconds.
#pragma once
#include <cstddef>

#include "kernels/common.h"
#include "kernels/tpa_decode/kernels.h"

namespace opbench::kernels::tpa {

// An attribute of the current device.
int device_attr(cudaDeviceAttr attr);
// The dynamic shared memory a block of `fn` may use: the device's opt-in limit less fn's static
// shared memory (the tensor-core kernel's tile ring).
int max_dynamic_smem(KernelFn fn);
// Lets `fn` use the device's whole opt-in shared memory (once per kernel and device).
void allow_max_smem(KernelFn fn);
// Blocks of `fn` resident on one multiprocessor (cached: the query costs microseconds).
int blocks_per_sm(KernelFn fn, int threads, size_t smem);

}  // namespace opbench::kernels::tpa
