// The GPU's state at one moment: clocks, temperature, power and the reasons the driver gives for
// holding the clocks down (NVML's clock event reasons), and whether that was throttling for
// power or heat. Plain data, torch-free: the CUDA device reads it (measure/nvml.cpp), the store
// keeps it per run and per point, the report and diff show it.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace opbench {

// A clock below this fraction of the default SM clock, with a power or thermal reason active,
// is throttling (nvbench's --throttle-threshold, whose default is 75% of the default clock).
constexpr double kThrottleThreshold = 0.75;

// NVML's clock event reason bits (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*).
namespace clock_reason {
constexpr uint64_t kGpuIdle = 0x1, kApplicationsClocks = 0x2, kSwPowerCap = 0x4, kHwSlowdown = 0x8,
                   kSyncBoost = 0x10, kSwThermal = 0x20, kHwThermal = 0x40, kHwPowerBrake = 0x80,
                   kDisplayClocks = 0x100;
// The reasons that mean power or heat (HW slowdown: the driver's signal of either).
constexpr uint64_t kPowerOrHeat = kSwPowerCap | kHwSlowdown | kSwThermal | kHwThermal | kHwPowerBrake;
}  // namespace clock_reason

struct DeviceState {
  bool known = false;          // false: nothing read (the CPU, no NVML, no permission)
  double sm_mhz = 0;           // current SM clock
  double memory_mhz = 0;       // current memory clock
  double sm_default_mhz = 0;   // the device's default (peak) SM clock: throttling's reference
  double temperature_c = 0;    // GPU core temperature
  double power_w = 0;          // board power draw
  uint64_t reasons = 0;        // NVML clock event reason bits active
  bool throttled = false;      // see throttled_for_power_or_heat
};

// A power or thermal reason active and the SM clock below kThrottleThreshold of its default.
inline bool throttled_for_power_or_heat(double sm_mhz, double sm_default_mhz, uint64_t reasons) {
  return (reasons & clock_reason::kPowerOrHeat) != 0 && sm_default_mhz > 0 && sm_mhz > 0 &&
         sm_mhz < kThrottleThreshold * sm_default_mhz;
}

// The active reasons in words, comma-separated ("power cap, thermal slowdown (hw)"); "" for none.
inline std::string clock_reasons_text(uint64_t reasons) {
  using namespace clock_reason;
  static const std::pair<uint64_t, const char*> names[] = {
      {kGpuIdle, "idle"},
      {kApplicationsClocks, "application clocks"},
      {kSwPowerCap, "power cap"},
      {kHwSlowdown, "hw slowdown"},
      {kSyncBoost, "sync boost"},
      {kSwThermal, "thermal slowdown (sw)"},
      {kHwThermal, "thermal slowdown (hw)"},
      {kHwPowerBrake, "power brake (hw)"},
      {kDisplayClocks, "display clocks"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (reasons & bit) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

}  // namespace opbench
