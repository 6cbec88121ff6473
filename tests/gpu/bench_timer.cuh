// The kernel benchmarks' timer: CUDA events around each call, a 256 MiB L2 flush (a memset of
// a raw buffer) before each sample, after a few untimed calls. Returns the samples sorted, in
// ms; each benchmark takes the statistics it prints.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "kernels/common.h"

namespace opbench::bench {

class FlushTimer {
 public:
  FlushTimer() {
    OPBENCH_CUDA_CHECK(cudaEventCreate(&a_));
    OPBENCH_CUDA_CHECK(cudaEventCreate(&b_));
    OPBENCH_CUDA_CHECK(cudaMalloc(&flush_, kFlushBytes));
  }
  ~FlushTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
    cudaFree(flush_);
  }
  FlushTimer(const FlushTimer&) = delete;
  FlushTimer& operator=(const FlushTimer&) = delete;

  template <class F>
  std::vector<double> sorted_samples(F f, int reps, int warmup = 3) {
    for (int i = 0; i < warmup; ++i) f();
    OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      OPBENCH_CUDA_CHECK(cudaMemsetAsync(flush_, i & 0xff, kFlushBytes));
      OPBENCH_CUDA_CHECK(cudaEventRecord(a_));
      f();
      OPBENCH_CUDA_CHECK(cudaEventRecord(b_));
      OPBENCH_CUDA_CHECK(cudaEventSynchronize(b_));
      float ms = 0;
      OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
      t.push_back(ms);
    }
    OPBENCH_CUDA_CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t;
  }

 private:
  static constexpr size_t kFlushBytes = size_t(256) << 20;
  cudaEvent_t a_, b_;
  void* flush_ = nullptr;
};

}  // namespace opbench::bench
