// The machine and software a run measured on. Torch-free.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "record/device_identity.hpp"
#include "record/device_state.hpp"

namespace opbench {

struct Environment {
  std::string device = "cpu";   // cpu | cuda:N
  std::string gpu;              // device name ("NVIDIA H100 80GB HBM3", or the CPU model)
  int64_t sm_count = 0;
  int64_t memory_bytes = 0;
  std::string driver, cuda_runtime, torch_version;
  std::string compute_capability;
  double peak_gbps = 0;         // measured at start: device-to-device copy, read + write
  DeviceState state;            // the GPU's state at the start, right after the bandwidth copy
  DeviceIdentity identity;      // which physical GPU (NVML; unknown on the CPU)
  // The tuning variables the providers declare (Provider::tuning_env) that were set, with
  // their values: what changes a kernel's behaviour beyond the config (nullopt: not recorded).
  std::optional<std::vector<std::pair<std::string, std::string>>> tuning;
};

}  // namespace opbench
