// The kernel benchmarks' timer: CUDA events around each call, a 256 MiB L2 flush before each
// sample, after a few untimed calls. Returns the samples sorted, in ms; each benchmark takes the
// statistics it prints. The flush (environment OPBENCH_FLUSH):
//   read  (default) a kernel reads the buffer: L2 is left holding clean lines only, so the
//         timed call pays no write-back of someone else's data;
//   write a memset of the buffer (what triton.testing.do_bench does with zero_()): up to an L2's
//         worth of dirty lines stay behind, and the timed call pays their write-back.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/common.h"

namespace opbench::bench {

// Reads n 16-byte words; writes `sink` only on an impossible value, so the loads stay.
__global__ void flush_read_kernel(const int4* p, size_t n, int* sink) {
  int acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7f3a9c11) *sink = acc;
}

class FlushTimer {
 public:
  FlushTimer() {
    OPBENCH_CUDA_CHECK(cudaEventCreate(&a_));
    OPBENCH_CUDA_CHECK(cudaEventCreate(&b_));
    OPBENCH_CUDA_CHECK(cudaMalloc(&flush_, kFlushBytes + 16));
    OPBENCH_CUDA_CHECK(cudaMemset(flush_, 0, kFlushBytes + 16));
    const char* m = std::getenv("OPBENCH_FLUSH");
    write_ = m != nullptr && std::strcmp(m, "write") == 0;
    std::printf("flush: %s 256 MiB before each sample\n", write_ ? "write (memset)" : "read");
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
    for (int i = 0; i < reps; ++i) t.push_back(sample(f, i));
    OPBENCH_CUDA_CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t;
  }

  // One sample (ms): the flush, then events around one call.
  template <class F>
  double sample(F f, int i) {
    flush(i);
    OPBENCH_CUDA_CHECK(cudaEventRecord(a_));
    f();
    OPBENCH_CUDA_CHECK(cudaEventRecord(b_));
    OPBENCH_CUDA_CHECK(cudaEventSynchronize(b_));
    float ms = 0;
    OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, a_, b_));
    return ms;
  }

 private:
  void flush(int i) {
    if (write_) {
      OPBENCH_CUDA_CHECK(cudaMemsetAsync(flush_, i & 0xff, kFlushBytes));
    } else {
      char* base = static_cast<char*>(flush_);
      flush_read_kernel<<<1056, 512>>>(reinterpret_cast<const int4*>(base), kFlushBytes / 16,
                                       reinterpret_cast<int*>(base + kFlushBytes));
      OPBENCH_CUDA_CHECK(cudaGetLastError());
    }
  }
  static constexpr size_t kFlushBytes = size_t(256) << 20;
  cudaEvent_t a_, b_;
  void* flush_ = nullptr;
  bool write_ = false;
};

}  // namespace opbench::bench
