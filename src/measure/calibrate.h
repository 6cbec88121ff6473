// A device calibration: a fixed micro-suite of CUDA kernels whose figures describe the chip
// rather than any op, measured inside a run's own rounds, so that two runs on two chips (or a
// chip on two days) can be told apart from a change of code (docs/measurement.md, the device
// calibration). Torch-free.
//
//   launch_us   an empty kernel's share of 256 queued back to back, by CUDA events: what the
//               GPU spends launching one kernel
//   sync_us     one empty kernel launched and waited for by the host (the median of 32): the
//               launch path a latency-bound call pays once
//   chase_ns    one dependent load that misses L2 (a warp per multiprocessor, each following
//               its own random chain through 256 MiB): the latency a latency-bound kernel waits
//   l2_gbps     reading 8 MiB held in L2 with every multiprocessor, 32 times
//   dram_gbps   a 128 MiB device-to-device copy, read + write counted
//   narrow_gbps reading 8 MiB from DRAM with 8 blocks of 256 threads, 4 loads of 16 bytes in
//               flight a thread: the multiprocessors a small grid lands on, each bound by its own
//               path to memory (latency times loads in flight), as a kernel of a few blocks is
//   sm_mhz      the multiprocessors' clock while busy: clock64() cycles over %globaltimer time
//               in a kernel that keeps every multiprocessor spinning for about a millisecond
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "record/calibration_sample.hpp"

namespace opbench {

// The buffers and events of the micro-suite on one device, made at the first measure and kept.
class Calibrator {
 public:
  explicit Calibrator(int device);
  ~Calibrator();
  Calibrator(const Calibrator&) = delete;
  Calibrator& operator=(const Calibrator&) = delete;

  // One pass of the suite on `stream` (the device's current one), about 5 ms. Throws
  // std::runtime_error for a failed CUDA call.
  CalibrationSample measure(cudaStream_t stream);

 private:
  void allocate(cudaStream_t stream);
  double launch_us(cudaStream_t stream);
  double sync_us(cudaStream_t stream);
  double chase_ns(cudaStream_t stream);
  double l2_gbps(cudaStream_t stream);
  double dram_gbps(cudaStream_t stream);
  double narrow_gbps(cudaStream_t stream);
  double sm_mhz(cudaStream_t stream);
  float elapsed_ms(cudaStream_t stream);  // between start_ and stop_, once both are reached

  int device_ = 0, sms_ = 0;
  void* chain_ = nullptr;  // the chase's 256 MiB of links
  void* l2_ = nullptr;     // 8 MiB, read from L2
  void *src_ = nullptr, *dst_ = nullptr;  // the copy's two 128 MiB buffers
  unsigned long long* out_ = nullptr;     // what the kernels leave behind
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace opbench
