// The device calibration's micro-suite (calibrate.h): seven fixed measurements, each a kernel (or
// a copy) timed by CUDA events on the device's stream, or by the host's clock for the launch
// it waits for.
#include "measure/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {
namespace {

constexpr size_t kChainBytes = size_t(256) << 20;
constexpr size_t kSlotBytes = 128;  // a link a cache line: no two links share one
constexpr size_t kSlots = kChainBytes / kSlotBytes;
constexpr int kChaseSteps = 2000;
constexpr size_t kL2Bytes = size_t(8) << 20;
constexpr int kL2Passes = 128;
constexpr size_t kCopyBytes = size_t(128) << 20;
constexpr int kCopies = 4;
constexpr size_t kNarrowBytes = size_t(8) << 20;  // the start of the copy's source, out of L2 by then
constexpr int kNarrowBlocks = 8, kNarrowThreads = 256, kNarrowInFlight = 4;
constexpr int kLaunches = 256;
constexpr int kSyncs = 32;
constexpr long long kSpinCycles = 2000000;  // about a millisecond at 2 GHz

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("calibration: ") + what + ": " + cudaGetErrorString(e));
}

__global__ void empty_kernel() {}

// Each slot's first word is the index of the next slot of the chain.
__global__ void scatter_links(const uint32_t* next, uint32_t* chain, size_t slots) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < slots; i += size_t{gridDim.x} * blockDim.x)
    chain[i * (kSlotBytes / 4)] = next[i];
}

// Lane 0 of each block follows the chain from its own start, `steps` dependent loads.
__global__ void chase_kernel(const uint32_t* chain, size_t slots, int steps, unsigned long long* out) {
  if (threadIdx.x != 0) return;
  uint32_t at = uint32_t((blockIdx.x * slots) / gridDim.x);
  for (int s = 0; s < steps; ++s) at = __ldcg(chain + size_t(at) * (kSlotBytes / 4));
  out[blockIdx.x] = at;
}

// Every thread reads its share of the buffer `passes` times; the words XOR-ed into a value
// stored only if it equals a constant the buffer does not make (so the loads stay).
__global__ void __launch_bounds__(512) l2_read_kernel(const int4* p, size_t n, int passes, unsigned long long* out) {
  int acc = 0;
  for (int pass = 0; pass < passes; ++pass)
    for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
      const int4 v = __ldcg(p + i);
      acc ^= v.x ^ v.y ^ v.z ^ v.w ^ pass;
    }
  if (acc == 0x5bd1e995) out[0] = acc;
}

// `gridDim.x` blocks share the buffer in contiguous slices; each thread keeps
// kNarrowInFlight independent 16-byte loads in flight, XOR-ed as l2_read_kernel's are.
__global__ void __launch_bounds__(kNarrowThreads) narrow_read_kernel(const int4* p, size_t n, unsigned long long* out) {
  const size_t slice = n / gridDim.x, begin = blockIdx.x * slice, step = size_t{blockDim.x} * kNarrowInFlight;
  int acc = 0;
  for (size_t i = begin + threadIdx.x; i + (kNarrowInFlight - 1) * blockDim.x < begin + slice; i += step) {
    int4 v[kNarrowInFlight];
#pragma unroll
    for (int k = 0; k < kNarrowInFlight; ++k) v[k] = __ldcg(p + i + size_t(k) * blockDim.x);
#pragma unroll
    for (int k = 0; k < kNarrowInFlight; ++k) acc ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
  }
  if (acc == 0x5bd1e995) out[0] = acc;
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Thread 0 of each block spins for `cycles` of its multiprocessor's clock and records the
// cycles and the nanoseconds they took.
__global__ void spin_kernel(long long cycles, unsigned long long* out) {
  if (threadIdx.x != 0) return;
  const unsigned long long t0 = global_ns();
  const long long c0 = clock64();
  long long c = c0;
  while (c - c0 < cycles) c = clock64();
  const unsigned long long t1 = global_ns();
  out[2 * blockIdx.x] = static_cast<unsigned long long>(c - c0);
  out[2 * blockIdx.x + 1] = t1 - t0;
}

// A random cycle through every slot: next[perm[i]] = perm[i + 1].
std::vector<uint32_t> random_cycle(size_t slots) {
  std::vector<uint32_t> perm(slots), next(slots);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(0x5eed));
  for (size_t i = 0; i < slots; ++i) next[perm[i]] = perm[(i + 1) % slots];
  return next;
}

}  // namespace

Calibrator::Calibrator(int device) : device_(device) {
  check(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_), "cudaDeviceGetAttribute");
}

Calibrator::~Calibrator() {
  for (void* p : {chain_, l2_, src_, dst_, static_cast<void*>(out_)})
    if (p) cudaFree(p);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
}

void Calibrator::allocate(cudaStream_t stream) {
  check(cudaEventCreate(&start_), "cudaEventCreate");
  check(cudaEventCreate(&stop_), "cudaEventCreate");
  check(cudaMalloc(&chain_, kChainBytes), "cudaMalloc(chain)");
  check(cudaMalloc(&l2_, kL2Bytes), "cudaMalloc(L2 buffer)");
  check(cudaMalloc(&src_, kCopyBytes), "cudaMalloc(copy source)");
  check(cudaMalloc(&dst_, kCopyBytes), "cudaMalloc(copy destination)");
  check(cudaMalloc(&out_, sizeof(unsigned long long) * 2 * size_t(std::max(sms_, 1))), "cudaMalloc(results)");
  const std::vector<uint32_t> next = random_cycle(kSlots);
  void* staged = nullptr;
  check(cudaMalloc(&staged, next.size() * sizeof(uint32_t)), "cudaMalloc(links)");
  check(cudaMemcpyAsync(staged, next.data(), next.size() * sizeof(uint32_t), cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync(links)");
  scatter_links<<<4 * sms_, 256, 0, stream>>>(static_cast<const uint32_t*>(staged), static_cast<uint32_t*>(chain_),
                                              kSlots);
  check(cudaGetLastError(), "scatter_links");
  check(cudaMemsetAsync(l2_, 1, kL2Bytes, stream), "cudaMemsetAsync(L2 buffer)");
  check(cudaMemsetAsync(src_, 1, kCopyBytes, stream), "cudaMemsetAsync(copy source)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  cudaFree(staged);
}

float Calibrator::elapsed_ms(cudaStream_t stream) {
  check(cudaGetLastError(), "launch");
  check(cudaEventRecord(stop_, stream), "cudaEventRecord");
  check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

double Calibrator::launch_us(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  check(cudaEventRecord(start_, stream), "cudaEventRecord");
  for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 32, 0, stream>>>();
  return 1e3 * elapsed_ms(stream) / kLaunches;
}

double Calibrator::sync_us(cudaStream_t stream) {
  std::vector<double> us;
  for (int i = 0; i < kSyncs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    empty_kernel<<<1, 32, 0, stream>>>();
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

double Calibrator::chase_ns(cudaStream_t stream) {
  check(cudaEventRecord(start_, stream), "cudaEventRecord");
  chase_kernel<<<sms_, 32, 0, stream>>>(static_cast<const uint32_t*>(chain_), kSlots, kChaseSteps, out_);
  return 1e6 * elapsed_ms(stream) / kChaseSteps;
}

double Calibrator::l2_gbps(cudaStream_t stream) {
  const size_t words = kL2Bytes / sizeof(int4);
  l2_read_kernel<<<4 * sms_, 512, 0, stream>>>(static_cast<const int4*>(l2_), words, 1, out_);  // into L2
  check(cudaEventRecord(start_, stream), "cudaEventRecord");
  l2_read_kernel<<<4 * sms_, 512, 0, stream>>>(static_cast<const int4*>(l2_), words, kL2Passes, out_);
  return double(kL2Bytes) * kL2Passes / (elapsed_ms(stream) * 1e-3) / 1e9;
}

double Calibrator::dram_gbps(cudaStream_t stream) {
  check(cudaEventRecord(start_, stream), "cudaEventRecord");
  for (int i = 0; i < kCopies; ++i)
    check(cudaMemcpyAsync(dst_, src_, kCopyBytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
  return 2.0 * double(kCopyBytes) * kCopies / (elapsed_ms(stream) * 1e-3) / 1e9;
}

double Calibrator::narrow_gbps(cudaStream_t stream) {
  const size_t words = kNarrowBytes / sizeof(int4);
  check(cudaEventRecord(start_, stream), "cudaEventRecord");
  narrow_read_kernel<<<kNarrowBlocks, kNarrowThreads, 0, stream>>>(static_cast<const int4*>(src_), words, out_);
  return double(kNarrowBytes) / (elapsed_ms(stream) * 1e-3) / 1e9;
}

double Calibrator::sm_mhz(cudaStream_t stream) {
  spin_kernel<<<sms_, 32, 0, stream>>>(kSpinCycles, out_);
  check(cudaGetLastError(), "spin_kernel");
  std::vector<unsigned long long> got(2 * size_t(sms_));
  check(cudaMemcpyAsync(got.data(), out_, got.size() * sizeof(got[0]), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync(spin)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  double cycles = 0, ns = 0;
  for (int b = 0; b < sms_; ++b) cycles += double(got[2 * b]), ns += double(got[2 * b + 1]);
  return ns > 0 ? 1e3 * cycles / ns : 0;
}

CalibrationSample Calibrator::measure(cudaStream_t stream) {
  check(cudaSetDevice(device_), "cudaSetDevice");
  if (!chain_) allocate(stream);
  CalibrationSample f;
  f.launch_us = launch_us(stream);
  f.sync_us = sync_us(stream);
  f.chase_ns = chase_ns(stream);
  f.l2_gbps = l2_gbps(stream);
  f.dram_gbps = dram_gbps(stream);
  f.narrow_gbps = narrow_gbps(stream);  // after the copy, whose traffic has pushed its source out of L2
  f.sm_mhz = sm_mhz(stream);
  return f;
}

}  // namespace opbench
