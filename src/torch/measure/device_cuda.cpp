// A CUDA device: CUDA events on the current stream, a 256 MiB L2 flush of a raw cudaMalloc
// buffer (so it never shows in the caching allocator's statistics): a cudaMemsetAsync (write,
// do_bench's) or our read kernel (read, l2_flush.h), peak memory from the caching
// allocator, bandwidth from a 1 GiB device-to-device copy.
//
// The flush buffers belong to the device, made once: where the buffer lies decides which dirty
// lines the write flush leaves in L2 and what their write-back costs the timed call. With a
// buffer per point, consecutive allocations alternated between two places and a 11-26 us
// call's median between two levels 0.7 us apart (tests/gpu/episodes_bench.cu,
// docs/findings/2026-11-25-placement-episodes-h100.md), so two providers of one point could differ by the flush alone. A round
// flushes through one buffer for all the cell's providers; the next round through another of a
// pool of kFlushPool allocations made while the others are held (so each lies elsewhere),
// drawn at random: the placements of the rounds without an allocation and a free (a device
// synchronisation) per round. The clocks' events are made once too, and reused.
#include "torch/measure/device.hpp"

#ifdef OPBENCH_TORCH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime.h>

#include <random>
#include <stdexcept>
#include <vector>

#ifdef OPBENCH_WITH_CUDA
#include "measure/calibrate.h"
#include "measure/l2_flush.h"
#endif
#include "measure/nvml.hpp"

namespace opbench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw RuntimeFailure(std::string(what) + ": " + cudaGetErrorString(e));
}

// Events made as needed and kept for the device's life: a clock borrows them.
class EventPool {
 public:
  ~EventPool() {
    for (auto e : events_) cudaEventDestroy(e);
  }
  void reserve(size_t n) {
    while (events_.size() < n) {
      cudaEvent_t e;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
  }
  cudaEvent_t operator[](size_t i) const { return events_[i]; }

 private:
  std::vector<cudaEvent_t> events_;
};

class CudaClock final : public Clock {
 public:
  // flush_buf: the device's flush buffer of `bytes` (nullptr when flush is none); events: the
  // device's, which no other clock uses while this one lives.
  CudaClock(int device, L2Flush flush, void* flush_buf, size_t bytes, EventPool& events)
      : device_(device), read_(flush == L2Flush::read), flush_(flush_buf), flush_bytes_(bytes), events_(events) {}
  void reserve(size_t n) override { events_.reserve(2 * n); }
  void start(size_t i) override { check(cudaEventRecord(events_[2 * i], stream()), "cudaEventRecord"); }
  void end(size_t i) override { check(cudaEventRecord(events_[2 * i + 1], stream()), "cudaEventRecord"); }
  void sync() override { check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize"); }
  bool queued() const override { return true; }
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
  EventPool& events_;
};

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int index) : index_(index), guard_(c10::DeviceIndex(index)), pick_(std::random_device()()) {}
  at::Device torch_device() const override { return at::Device(at::kCUDA, c10::DeviceIndex(index_)); }
  std::unique_ptr<Clock> clock(L2Flush flush) override {
    const std::string why = flush_unsupported(flush);
    if (!why.empty()) throw InputError("timing", "flush_l2", why);
    if (flush == L2Flush::none) return std::make_unique<CudaClock>(index_, flush, nullptr, 0, events_);
    if (buffers_.empty()) {
      void* first = nullptr;
      check(cudaMalloc(&first, kFlushBytes), "cudaMalloc(L2 flush buffer)");
      buffers_.push_back(first);
    }
    return std::make_unique<CudaClock>(index_, flush, buffers_[current_], kFlushBytes, events_);
  }
  ~CudaDevice() override {
    for (void* b : buffers_) cudaFree(b);
  }
  // Another buffer of the pool, at random; the pool is made at the first new round (as much of
  // it as there is room for: with one buffer, the rounds flush through it).
  void new_flush_buffer() override {
    if (buffers_.empty()) return;
    while (buffers_.size() < kFlushPool) {
      void* more = nullptr;
      if (cudaMalloc(&more, kFlushBytes) != cudaSuccess) {
        cudaGetLastError();
        break;
      }
      buffers_.push_back(more);
    }
    if (buffers_.size() < 2) return;
    const size_t step = 1 + size_t(pick_() % (buffers_.size() - 1));  // never the same one
    current_ = (current_ + step) % buffers_.size();
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
    CudaClock c(index_, L2Flush::none, nullptr, 0, events_);
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
    if (read_bus()) e.identity = nvml_identity(bus_);
    return e;
  }
  std::optional<CalibrationSample> calibrate() override {
#ifdef OPBENCH_WITH_CUDA
    try {
      if (!calibrator_) calibrator_ = std::make_unique<Calibrator>(index_);
      return calibrator_->measure(at::cuda::getCurrentCUDAStream(index_).stream());
    } catch (const std::exception&) {
      cudaGetLastError();  // the suite is left out; the run goes on without it
      return std::nullopt;
    }
#else
    return std::nullopt;
#endif
  }
  void synchronize() override {
    check(cudaStreamSynchronize(at::cuda::getCurrentCUDAStream(index_).stream()), "cudaStreamSynchronize");
  }
  // Throttling is measured against the device's default SM clock as the CUDA runtime gives it
  // (cudaDevAttrClockRate: nvbench's reference too).
  DeviceState state() override {
    if (!read_bus()) return {};
    return nvml_state(bus_, default_mhz_);
  }

 private:
  // The device's PCI bus id and default SM clock, read once (they do not change); false when
  // the runtime cannot say.
  bool read_bus() {
    if (!bus_.empty()) return true;
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, index_) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index_) != cudaSuccess) {
      cudaGetLastError();
      khz = 0;
    }
    bus_ = bus;
    default_mhz_ = khz / 1000.0;
    return true;
  }

  static constexpr size_t kFlushBytes = size_t(256) << 20;
  static constexpr size_t kFlushPool = 4;
  int index_;
  c10::cuda::CUDAGuard guard_;
  std::vector<void*> buffers_;  // the flush buffers: the first made by the first flushing clock
  size_t current_ = 0;          // the one the clocks flush through now
  std::mt19937_64 pick_;
  EventPool events_;
  std::string bus_;
  double default_mhz_ = 0;
#ifdef OPBENCH_WITH_CUDA
  std::unique_ptr<Calibrator> calibrator_;  // made at the first calibration
#endif
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
