// A CUDA device: CUDA events on the current stream, a 256 MiB L2 flush of a raw cudaMalloc
// buffer (so it never shows in the caching allocator's statistics): a cudaMemsetAsync (write,
// do_bench's) or our read kernel (read, l2_flush.h), peak memory from the caching
// allocator, bandwidth from a 1 GiB device-to-device copy.
//
// The flush buffer is allocated once per device and kept for the whole sweep: where it lies
// decides which dirty lines the write flush leaves in L2 and what their write-back costs the
// timed call. With a buffer per point, consecutive allocations alternated between two places
// and a 11-26 us call's median between two levels 0.7 us apart (tests/gpu/episodes_bench.cu,
// docs/measurement.md), so two providers of one point could differ by the flush alone.
#include "measure/device.hpp"

#ifdef OPBENCH_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <stdexcept>

#ifdef OPBENCH_WITH_CUDA
#include "measure/l2_flush.h"
#endif
#include "measure/nvml.hpp"

namespace opbench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RuntimeFailure(std::string(what) + ": " + cudaGetErrorString(e));
}

class CudaClock final : public Clock {
 public:
  // flush_buf: the device's flush buffer of `bytes` (nullptr when flush is none).
  CudaClock(int device, L2Flush flush, void* flush_buf, size_t bytes)
      : device_(device), read_(flush == L2Flush::read), flush_(flush_buf), flush_bytes_(bytes) {}
  ~CudaClock() override {
    for (auto e : events_) cudaEventDestroy(e);
  }
  void reserve(size_t n) override {
    while (events_.size() < 2 * n) {
      cudaEvent_t e;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
  }
  void start(size_t i) override { check(cudaEventRecord(events_[2 * i], stream()), "cudaEventRecord"); }
  void stop(size_t i) override { check(cudaEventRecord(events_[2 * i + 1], stream()), "cudaEventRecord"); }
  void sync() override { check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize"); }
  double elapsed_ms(size_t i) override {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, events_[2 * i], events_[2 * i + 1]), "cudaEventElapsedTime");
    return ms;
  }
  void flush() override {
    if (!flush_) return;
#ifdef OPBENCH_WITH_CUDA
    if (read_) {
      opbench::l2_flush_read(flush_, flush_bytes_, stream());
      return;
    }
#endif
    check(cudaMemsetAsync(flush_, 0, flush_bytes_, stream()), "cudaMemsetAsync(L2 flush)");
  }

 private:
  cudaStream_t stream() const { return at::cuda::getCurrentCUDAStream(device_).stream(); }
  int device_;
  bool read_;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  std::vector<cudaEvent_t> events_;
};

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index) : index_(index), guard_(c10::DeviceIndex(index)) {}
  at::Device torch_device() const override { return at::Device(at::kCUDA, c10::DeviceIndex(index_)); }
  std::unique_ptr<Clock> clock(L2Flush flush) override {
    const std::string why = flush_unsupported(flush);
    if (!why.empty()) throw InputError("timing", "flush_l2", why);
    if (flush == L2Flush::none) return std::make_unique<CudaClock>(index_, flush, nullptr, 0);
    if (!flush_buf_) check(cudaMalloc(&flush_buf_, kFlushBytes), "cudaMalloc(L2 flush buffer)");
    return std::make_unique<CudaClock>(index_, flush, flush_buf_, kFlushBytes);
  }
  ~CudaDevice() override {
    if (flush_buf_) cudaFree(flush_buf_);
  }
  void new_flush_buffer() override {
    if (!flush_buf_) return;
    void* fresh = nullptr;
    if (cudaMalloc(&fresh, kFlushBytes) != cudaSuccess) {
      cudaGetLastError();  // no room for a second buffer: keep flushing through this one
      return;
    }
    check(cudaFree(flush_buf_), "cudaFree(L2 flush buffer)");
    flush_buf_ = fresh;
  }
  std::string flush_unsupported(L2Flush flush) const override {
#ifdef OPBENCH_WITH_CUDA
    (void)flush;
    return "";
#else
    return flush == L2Flush::read ? "read needs opbench built with its CUDA kernels (nvcc); use write or none" : "";
#endif
  }
  int64_t peak_bytes(const std::function<void()>& fn) override {
    synchronize();
    c10::cuda::CUDACachingAllocator::resetPeakStats(c10::DeviceIndex(index_));
    fn();
    synchronize();
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::DeviceIndex(index_));
    return stats.allocated_bytes[size_t(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
  double measure_bandwidth() override {
    const size_t bytes = size_t(1) << 30;
    void *src = nullptr, *dst = nullptr;
    check(cudaMalloc(&src, bytes), "cudaMalloc(bandwidth source)");
    check(cudaMalloc(&dst, bytes), "cudaMalloc(bandwidth destination)");
    cudaStream_t s = at::cuda::getCurrentCUDAStream(index_).stream();
    check(cudaMemsetAsync(src, 1, bytes, s), "cudaMemsetAsync");
    CudaClock c(index_, L2Flush::none, nullptr, 0);
    Timing t;
    t.warmup_ms = 25;
    t.rep_ms = 200;
    auto samples = do_bench(c, [&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync"); }, t);
    cudaFree(src);
    cudaFree(dst);
    double ms = summarize(samples).median;
    return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
  }
  Environment describe() override {
    Environment e;
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, index_), "cudaGetDeviceProperties");
    e.device = "cuda:" + std::to_string(index_);
    e.gpu = p.name;
    e.sm_count = p.multiProcessorCount;
    e.memory_bytes = int64_t(p.totalGlobalMem);
    e.compute_capability = std::to_string(p.major) + "." + std::to_string(p.minor);
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess) e.driver = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    if (cudaRuntimeGetVersion(&v) == cudaSuccess) e.cuda_runtime = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
    return e;
  }
  void synchronize() override {
    check(cudaStreamSynchronize(at::cuda::getCurrentCUDAStream(index_).stream()), "cudaStreamSynchronize");
  }
  // Throttling is measured against the device's default SM clock as the CUDA runtime gives it
  // (cudaDevAttrClockRate: nvbench's reference too).
  DeviceState state() override {
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, index_) != cudaSuccess) {
      cudaGetLastError();
      return {};
    }
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index_) != cudaSuccess) {
      cudaGetLastError();
      khz = 0;
    }
    return nvml_state(bus, khz / 1000.0);
  }

 private:
  static constexpr size_t kFlushBytes = size_t(256) << 20;
  int index_;
  c10::cuda::CUDAGuard guard_;
  void* flush_buf_ = nullptr;  // the flush buffer, allocated by the first flushing clock
};

}  // namespace

bool cuda_present() { return c10::cuda::device_count() > 0; }
int cuda_device_count() { return int(c10::cuda::device_count()); }
std::vector<int> gpu_local_cpus(int index) {
  char bus[32] = {0};
  if (index < 0 || index >= c10::cuda::device_count() || cudaDeviceGetPCIBusId(bus, sizeof bus, index) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  return nvml_cpu_affinity(bus);
}
std::unique_ptr<Device> make_cuda_device(int index) {
  if (index < 0 || index >= c10::cuda::device_count())
    throw InputError("--device", "cuda:" + std::to_string(index),
                     "no such CUDA device (" + std::to_string(c10::cuda::device_count()) + " present)");
  return std::make_unique<CudaDevice>(index);
}

}  // namespace opbench

#else  // LibTorch without CUDA

namespace opbench {
bool cuda_present() { return false; }
int cuda_device_count() { return 0; }
std::vector<int> gpu_local_cpus(int) { return {}; }
std::unique_ptr<Device> make_cuda_device(int) {
  throw InputError("--device", "cuda", "this opbench was built against a LibTorch without CUDA");
}
}  // namespace opbench

#endif

namespace opbench {

std::unique_ptr<Device> make_cpu_device();

std::vector<int> local_cpus(const std::string& name) {
  if (name == "cuda") return gpu_local_cpus(0);
  if (name.rfind("cuda:", 0) == 0) {
    const std::string idx = name.substr(5);
    if (!idx.empty() && idx.size() < 5 && idx.find_first_not_of("0123456789") == std::string::npos)
      return gpu_local_cpus(std::stoi(idx));
  }
  return {};
}

std::unique_ptr<Device> open_device(const std::string& name) {
  if (name == "cpu") return make_cpu_device();
  if (name == "cuda") return make_cuda_device(0);
  if (name.rfind("cuda:", 0) == 0) {
    std::string idx = name.substr(5);
    if (!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos)
      return make_cuda_device(std::stoi(idx));
  }
  throw InputError("--device", name, "unknown device (cpu, cuda or cuda:N)");
}

}  // namespace opbench
