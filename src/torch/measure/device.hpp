// What the measurement needs of a device: its clock (with the cache flush), peak memory of
// one call, peak bandwidth, and a description of it. CUDA through ATen/c10 when LibTorch has
// CUDA; the CPU everywhere.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "measure/bench.hpp"
#include "measure/executor.hpp"

namespace opbench {

class Device {
 public:
  virtual ~Device() = default;
  virtual at::Device torch_device() const = 0;
  virtual std::unique_ptr<Clock> clock(L2Flush flush) = 0;
  // The next clocks flush through memory placed elsewhere: a new placement for the next
  // round (CUDA: a newly allocated buffer, made before the old one is freed, the old one kept
  // when there is no room; the CPU: another window of one buffer).
  virtual void new_flush_buffer() {}
  // "" when this device's clock can flush that way, else why not (one line).
  virtual std::string flush_unsupported(L2Flush) const { return ""; }
  // Peak bytes allocated while `fn` runs once, counting what was already allocated (inputs).
  virtual int64_t peak_bytes(const std::function<void()>& fn) = 0;
  // Device-to-device copy of a large buffer, read + write counted, in GB/s (1e9 bytes/s).
  virtual double measure_bandwidth() = 0;
  virtual Environment describe() = 0;
  // The GPU's clocks, temperature, power and throttling now (NVML); unknown on the CPU.
  virtual DeviceState state() { return {}; }
  // One pass of the device calibration's micro-suite (measure/calibrate.h); none on the CPU,
  // or where the suite is not built (opbench without its CUDA kernels) or fails.
  virtual std::optional<CalibrationSample> calibrate() { return std::nullopt; }
  virtual void synchronize() = 0;
};

// "cpu", "cuda" or "cuda:N"; throws InputError for an unknown or absent device.
std::unique_ptr<Device> open_device(const std::string& name);
bool cuda_present();
// The CUDA devices visible to this process (0 without CUDA); opens none of them.
int cuda_device_count();
// The CPUs local to a device (`cuda:N`: those NVML names for its GPU), ascending; empty for the
// CPU, or where NVML cannot say. Opens no device.
std::vector<int> local_cpus(const std::string& name);

}  // namespace opbench
