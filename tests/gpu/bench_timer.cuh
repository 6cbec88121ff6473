// The kernel benchmarks' timer: CUDA events around each call, a 256 MiB L2 flush before each
// sample, after a few untimed calls. Returns the samples sorted, in ms; each benchmark takes the
// statistics it prints. The flush (environment OPBENCH_FLUSH):
//   read  (default) a kernel reads the buffer: L2 is left holding clean lines only, so the
//         timed call pays no write-back of someone else's data;
//   write a memset of the buffer (what triton.testing.do_bench does with zero_()): up to an L2's
//         worth of dirty lines stay behind, and the timed call pays their write-back;
//   none  no flush (a diagnostic: the kernel's code, and whatever data fits, stay in L2).
// OPBENCH_FLUSH_PLACES=k (default 1): flush i covers the buffer from (i mod k) x 4 MiB on, so
// the samples see k placements of the flush's lines within one allocation (a diagnostic: on
// the H100 it moved nothing, a new allocation does; docs/findings/2026-11-25-placement-episodes-h100.md).
// The samples (environment OPBENCH_SAMPLES):
//   sync   (default) the host waits for each sample before it queues the next flush;
//   stream every sample queued back to back and read at the end (what do_bench and opbench's
//          harness do: the GPU never idles between samples).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "config/config.hpp"  // L2Flush
#include "kernels/common.h"
#include "measure/l2_flush.h"

namespace opbench::bench {

class FlushTimer {
 public:
  FlushTimer() {
    if (const char* pl = std::getenv("OPBENCH_FLUSH_PLACES")) places_ = std::max(1, std::atoi(pl));
    OPBENCH_CUDA_CHECK(cudaMalloc(&flush_, kFlushBytes + size_t(places_ - 1) * kPlaceStep));
    OPBENCH_CUDA_CHECK(cudaMemset(flush_, 0, kFlushBytes + size_t(places_ - 1) * kPlaceStep));
    const char* m = std::getenv("OPBENCH_FLUSH");
    if (m != nullptr && std::strcmp(m, "write") == 0) mode_ = L2Flush::write;
    if (m != nullptr && std::strcmp(m, "none") == 0) mode_ = L2Flush::none;
    const char* sm = std::getenv("OPBENCH_SAMPLES");
    stream_ = sm != nullptr && std::strcmp(sm, "stream") == 0;
    std::printf("flush: %s; samples %s\n",
                mode_ == L2Flush::none    ? "none"
                : mode_ == L2Flush::write ? "write (memset) 256 MiB before each sample"
                                          : "read 256 MiB before each sample",
                stream_ ? "queued back to back" : "one at a time");
  }
  ~FlushTimer() {
    for (cudaEvent_t e : ev_) cudaEventDestroy(e);
    cudaFree(flush_);
  }
  FlushTimer(const FlushTimer&) = delete;
  FlushTimer& operator=(const FlushTimer&) = delete;

  template <class F>
  std::vector<double> sorted_samples(F f, int reps, int warmup = 3) {
    for (int i = 0; i < warmup; ++i) f();
    OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    reserve(reps);
    for (int i = 0; i < reps; ++i) {
      queue(f, i, i);
      if (!stream_) OPBENCH_CUDA_CHECK(cudaEventSynchronize(ev_[2 * i + 1]));
    }
    OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    OPBENCH_CUDA_CHECK(cudaGetLastError());
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) t.push_back(elapsed_ms(i));
    std::sort(t.begin(), t.end());
    return t;
  }

  // One sample (ms), waited for: the flush (i picks the memset's byte), then events around one call.
  template <class F>
  double sample(F f, int i) {
    reserve(1);
    queue(f, 0, i);
    OPBENCH_CUDA_CHECK(cudaEventSynchronize(ev_[1]));
    return elapsed_ms(0);
  }

 private:
  void reserve(int samples) {  // the events, made before anything is queued
    while (ev_.size() < 2 * static_cast<size_t>(samples)) {
      cudaEvent_t e;
      OPBENCH_CUDA_CHECK(cudaEventCreate(&e));
      ev_.push_back(e);
    }
  }
  // Queues sample `slot`: the flush, its start event, the call, its stop event.
  template <class F>
  void queue(F f, int slot, int i) {
    flush(i);
    OPBENCH_CUDA_CHECK(cudaEventRecord(ev_[2 * slot]));
    f();
    OPBENCH_CUDA_CHECK(cudaEventRecord(ev_[2 * slot + 1]));
  }
  double elapsed_ms(int slot) const {
    float ms = 0;
    OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_[2 * slot], ev_[2 * slot + 1]));
    return ms;
  }
  // OPBENCH_FLUSH_PLACES=k: flush i covers the buffer from (i mod k) x 4 MiB on.
  void flush(int i) {
    char* at = static_cast<char*>(flush_) + size_t(i % places_) * kPlaceStep;
    if (mode_ == L2Flush::write) OPBENCH_CUDA_CHECK(cudaMemsetAsync(at, i & 0xff, kFlushBytes));
    if (mode_ == L2Flush::read) opbench::l2_flush_read(at, kFlushBytes, nullptr);
  }
  static constexpr size_t kFlushBytes = size_t(256) << 20;
  static constexpr size_t kPlaceStep = size_t(4) << 20;
  int places_ = 1;
  std::vector<cudaEvent_t> ev_;  // a start and a stop event per sample
  void* flush_ = nullptr;
  L2Flush mode_ = L2Flush::read;  // OPBENCH_FLUSH
  bool stream_ = false;
};

}  // namespace opbench::bench
