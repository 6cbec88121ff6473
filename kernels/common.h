// Shared host-side vocabulary of the CUDA kernels (torch-free, includable from .cpp and .cu).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace opbench::kernels {

enum class DType { f32, f16, bf16 };
enum class Act { none, relu, sigmoid, silu, softmax };

inline int dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

// Thrown for a failed CUDA call or launch, or input a kernel does not take.
class KernelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess)
    throw KernelError(std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                      ": " + cudaGetErrorString(e));
}

}  // namespace opbench::kernels

// Check a CUDA runtime call; check a launch (the launch error, not a sync).
#define OPBENCH_CUDA_CHECK(call) ::opbench::kernels::check_cuda((call), #call, __FILE__, __LINE__)
#define OPBENCH_LAUNCH_CHECK() \
  ::opbench::kernels::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
