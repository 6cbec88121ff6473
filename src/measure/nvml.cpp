// NVML, opened at run time (nvml.hpp). The few entry points used are declared here by their
// documented C signatures: every NVML call returns an int status (0: success), a device is an
// opaque pointer, clocks are in MHz, power in mW, temperatures in degrees C.
#include "measure/nvml.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace opbench {

namespace {

using Handle = void*;
using InitFn = int (*)();
using ByBusIdFn = int (*)(const char*, Handle*);
using ClockFn = int (*)(Handle, int, unsigned*);
using TemperatureFn = int (*)(Handle, int, unsigned*);
using PowerFn = int (*)(Handle, unsigned*);
using ReasonsFn = int (*)(Handle, unsigned long long*);
using AffinityFn = int (*)(Handle, unsigned, unsigned long*);
using TextFn = int (*)(Handle, char*, unsigned);
using EccFn = int (*)(Handle, int*, int*);

constexpr int kClockSm = 1, kClockMemory = 2, kTemperatureGpu = 0;

struct Api {
  bool ok = false;
  ByBusIdFn by_bus_id = nullptr;
  ClockFn clock = nullptr, max_clock = nullptr;
  TemperatureFn temperature = nullptr;
  PowerFn power = nullptr;
  ReasonsFn reasons = nullptr;
  AffinityFn affinity = nullptr;
  TextFn uuid = nullptr, serial = nullptr, vbios = nullptr;
  PowerFn power_limit = nullptr;
  ClockFn app_clock = nullptr, default_app_clock = nullptr;
  EccFn ecc = nullptr;
};

template <class Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

// Loads and initialises NVML once; ok stays false where that fails.
const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = symbol<InitFn>(lib, "nvmlInit_v2");
    a.by_bus_id = symbol<ByBusIdFn>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    a.clock = symbol<ClockFn>(lib, "nvmlDeviceGetClockInfo");
    a.max_clock = symbol<ClockFn>(lib, "nvmlDeviceGetMaxClockInfo");
    a.temperature = symbol<TemperatureFn>(lib, "nvmlDeviceGetTemperature");
    a.power = symbol<PowerFn>(lib, "nvmlDeviceGetPowerUsage");
    // The reasons' newer name (drivers from 535 on), else the older one.
    a.reasons = symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!a.reasons) a.reasons = symbol<ReasonsFn>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    a.affinity = symbol<AffinityFn>(lib, "nvmlDeviceGetCpuAffinity");
    a.uuid = symbol<TextFn>(lib, "nvmlDeviceGetUUID");
    a.serial = symbol<TextFn>(lib, "nvmlDeviceGetSerial");
    a.vbios = symbol<TextFn>(lib, "nvmlDeviceGetVbiosVersion");
    a.power_limit = symbol<PowerFn>(lib, "nvmlDeviceGetEnforcedPowerLimit");
    a.app_clock = symbol<ClockFn>(lib, "nvmlDeviceGetApplicationsClock");
    a.default_app_clock = symbol<ClockFn>(lib, "nvmlDeviceGetDefaultApplicationsClock");
    a.ecc = symbol<EccFn>(lib, "nvmlDeviceGetEccMode");
    a.ok = init && a.by_bus_id && a.clock && init() == 0;
  });
  return a;
}

// The device's handle, looked up once per bus id (nullptr where NVML does not know it).
Handle handle_of(const Api& a, const std::string& pci_bus_id) {
  static std::mutex mu;
  static std::map<std::string, Handle> handles;
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles.find(pci_bus_id);
  if (it != handles.end()) return it->second;
  Handle dev = nullptr;
  if (a.by_bus_id(pci_bus_id.c_str(), &dev) != 0) dev = nullptr;
  return handles[pci_bus_id] = dev;
}

}  // namespace

std::vector<int> nvml_cpu_affinity(const std::string& pci_bus_id) {
  const Api& a = api();
  Handle dev = nullptr;
  std::vector<int> out;
  if (!a.ok || !a.affinity || a.by_bus_id(pci_bus_id.c_str(), &dev) != 0) return out;
  constexpr unsigned kWords = 64;  // 4096 CPUs
  unsigned long set[kWords] = {0};
  if (a.affinity(dev, kWords, set) != 0) return out;
  constexpr unsigned kBits = 8 * sizeof(unsigned long);
  for (unsigned c = 0; c < kWords * kBits; ++c)
    if (set[c / kBits] & (1UL << (c % kBits))) out.push_back(int(c));
  return out;
}

namespace {

// A text NVML writes into a buffer ("" where the call is missing or fails).
std::string text_of(TextFn fn, Handle dev) {
  char buf[96] = {0};
  if (!fn || fn(dev, buf, sizeof buf) != 0) return "";
  buf[sizeof buf - 1] = 0;
  return buf;
}

// A clock in MHz (0 where the call is missing or fails).
double clock_of(ClockFn fn, Handle dev, int which) {
  unsigned v = 0;
  return fn && fn(dev, which, &v) == 0 ? double(v) : 0;
}

}  // namespace

DeviceIdentity nvml_identity(const std::string& pci_bus_id) {
  DeviceIdentity id;
  id.pci_bus_id = pci_bus_id;
  const Api& a = api();
  if (!a.ok) return id;
  Handle dev = handle_of(a, pci_bus_id);
  if (!dev) return id;
  id.uuid = text_of(a.uuid, dev);
  id.serial = text_of(a.serial, dev);
  id.vbios = text_of(a.vbios, dev);
  unsigned mw = 0;
  if (a.power_limit && a.power_limit(dev, &mw) == 0) id.power_limit_w = mw / 1000.0;
  id.app_sm_mhz = clock_of(a.app_clock, dev, kClockSm);
  id.app_memory_mhz = clock_of(a.app_clock, dev, kClockMemory);
  id.default_app_sm_mhz = clock_of(a.default_app_clock, dev, kClockSm);
  id.max_sm_mhz = clock_of(a.max_clock, dev, kClockSm);
  int current = 0, pending = 0;
  if (a.ecc && a.ecc(dev, &current, &pending) == 0) id.ecc = current ? "on" : "off";
  return id;
}

DeviceState nvml_state(const std::string& pci_bus_id, double sm_default_mhz) {
  DeviceState s;
  const Api& a = api();
  if (!a.ok) return s;
  Handle dev = handle_of(a, pci_bus_id);
  if (!dev) return s;
  unsigned v = 0;
  if (a.clock(dev, kClockSm, &v) != 0) return s;
  s.known = true;
  s.sm_mhz = v;
  if (a.clock(dev, kClockMemory, &v) == 0) s.memory_mhz = v;
  s.sm_default_mhz = sm_default_mhz;
  if (!(s.sm_default_mhz > 0) && a.max_clock && a.max_clock(dev, kClockSm, &v) == 0) s.sm_default_mhz = v;
  if (a.temperature && a.temperature(dev, kTemperatureGpu, &v) == 0) s.temperature_c = v;
  if (a.power && a.power(dev, &v) == 0) s.power_w = v / 1000.0;
  unsigned long long bits = 0;
  if (a.reasons && a.reasons(dev, &bits) == 0) s.reasons = bits;
  s.throttled = throttled_for_power_or_heat(s.sm_mhz, s.sm_default_mhz, s.reasons);
  return s;
}

}  // namespace opbench
