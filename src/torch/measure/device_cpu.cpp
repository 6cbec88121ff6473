// The CPU as a device: a steady clock, a flush buffer twice the last-level cache (one instance
// of it), and peak memory through a counting wrapper around LibTorch's CPU allocator.
#include <c10/core/CPUAllocator.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <unordered_map>

#include "torch/measure/device.hpp"

namespace opbench {

namespace {

// Counts the bytes live through LibTorch's CPU allocator (current and peak).
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = inner_->allocate(n);
    auto* ctx = new Ctx{std::move(inner), n, this};
    void* data = ctx->inner.get();
    add(int64_t(n));
    return {data, ctx, &CountingAllocator::release, c10::Device(c10::DeviceType::CPU)};
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
  void reset_peak() { peak_.store(current_.load()); }
  int64_t peak() const { return peak_.load(); }

 private:
  struct Ctx {
    c10::DataPtr inner;
    size_t n;
    CountingAllocator* owner;
  };
  static void release(void* p) {
    auto* ctx = static_cast<Ctx*>(p);
    ctx->owner->add(-int64_t(ctx->n));
    delete ctx;  // frees the inner allocation
  }
  void add(int64_t d) {
    int64_t now = current_.fetch_add(d) + d;
    int64_t old = peak_.load();
    while (now > old && !peak_.compare_exchange_weak(old, now)) {
    }
  }
  c10::Allocator* inner_;
  std::atomic<int64_t> current_{0}, peak_{0};
};

CountingAllocator& counting() {
  static CountingAllocator* a = [] {
    auto* alloc = new CountingAllocator(c10::GetDefaultCPUAllocator());
    c10::SetCPUAllocator(alloc, /*priority=*/10);
    return alloc;
  }();
  return *a;
}

class CpuClock final : public Clock {
 public:
  // buf, bytes: the device's flush window (kept for the whole sweep, as on CUDA); nullptr for none.
  CpuClock(L2Flush flush, unsigned char* buf, size_t bytes) : buf_(buf), bytes_(bytes), read_(flush == L2Flush::read) {}
  void reserve(size_t n) override { t_.assign(n * 2, {}); }
  bool estimate_includes_flush() const override { return false; }
  size_t min_repeat() const override { return 10; }
  void start(size_t i) override { t_[2 * i] = std::chrono::steady_clock::now(); }
  void end(size_t i) override { t_[2 * i + 1] = std::chrono::steady_clock::now(); }
  void sync() override {}
  double elapsed_ms(size_t i) override {
    return std::chrono::duration<double, std::milli>(t_[2 * i + 1] - t_[2 * i]).count();
  }
  void flush() override {
    if (!buf_) return;
    if (read_) {  // every cache line read, nothing written
      uint64_t acc = 0;
      for (size_t i = 0; i < bytes_; i += 64) acc += buf_[i];
      asm volatile("" : : "r"(acc));
      return;
    }
    ++fill_;
    std::memset(buf_, fill_, bytes_);
    asm volatile("" : : "r"(buf_) : "memory");
  }

 private:
  std::vector<std::chrono::steady_clock::time_point> t_;
  unsigned char* buf_;
  size_t bytes_;
  unsigned char fill_ = 0;
  bool read_;
};

// The largest cache one core reaches, in bytes: the highest level sysfs lists for cpu0 (one
// instance: an L3 shared by a core complex), else what sysconf says of the L3 (which some
// C libraries report summed over every instance: 320 MiB for ten 32 MiB ones on one VM).
long last_level_cache_bytes() {
  long best_level = 0, bytes = 0;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::ifstream level_in(dir + "level"), size_in(dir + "size");
    long level = 0, size = 0;
    std::string unit;
    if (!(level_in >> level) || !(size_in >> size)) continue;
    size_in >> unit;
    if (unit == "K") size <<= 10;
    else if (unit == "M") size <<= 20;
    if (level > best_level || (level == best_level && size > bytes)) best_level = level, bytes = size;
  }
  if (bytes > 0) return bytes;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? l3 : 0;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(line.find_first_not_of(" \t", c + 1));
    }
  return "cpu";
}

}  // namespace

class CpuDevice final : public Device {
 public:
  CpuDevice() { counting(); }
  at::Device torch_device() const override { return at::Device(at::kCPU); }
  std::unique_ptr<Clock> clock(L2Flush flush) override {
    if (flush == L2Flush::none) return std::make_unique<CpuClock>(flush, nullptr, 0);
    if (flush_buf_.empty()) {
      flush_bytes_ = size_t(std::max<long>(last_level_cache_bytes(), 16l << 20)) * 2;
      flush_buf_.assign(flush_bytes_ + kWindowSlack, 0);
    }
    return std::make_unique<CpuClock>(flush, flush_buf_.data() + offset_, flush_bytes_);
  }
  // A new placement without a new allocation: the flush window moves to another page-aligned
  // offset inside one buffer made with room for it (the inputs, made anew each round, are what
  // the timed call touches).
  void new_flush_buffer() override {
    if (flush_buf_.empty()) return;
    offset_ = size_t(rng_() % (kWindowSlack / kPage)) * kPage;
  }
  int64_t peak_bytes(const std::function<void()>& fn) override {
    counting().reset_peak();
    fn();
    return counting().peak();
  }
  double measure_bandwidth() override {
    const int64_t bytes = int64_t(256) << 20;
    at::Tensor src = at::empty({bytes}, at::TensorOptions().dtype(at::kByte)).fill_(1);
    at::Tensor dst = at::empty_like(src);
    CpuClock c(L2Flush::none, nullptr, 0);
    Timing t;
    t.warmup_ms = 50;
    t.rep_ms = 200;
    auto samples = do_bench(c, [&] { dst.copy_(src); }, t);
    double ms = summarize(samples).median;
    return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
  }
  Environment describe() override {
    Environment e;
    e.device = "cpu";
    e.gpu = cpu_model();
    e.sm_count = sysconf(_SC_NPROCESSORS_ONLN);
    e.memory_bytes = int64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
    return e;
  }
  void synchronize() override {}

 private:
  static constexpr size_t kPage = 4096, kWindowSlack = size_t(64) << 20;
  // The flush buffer: twice the last-level cache plus room to move the window, made by the
  // first flushing clock; the window of flush_bytes_ starts at offset_.
  std::vector<unsigned char> flush_buf_;
  size_t flush_bytes_ = 0, offset_ = 0;
  std::mt19937_64 rng_{std::random_device()()};
};

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

}  // namespace opbench
