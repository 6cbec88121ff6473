// The GPU's state through NVML (clocks, temperature, power, clock event reasons) and the CPUs
// local to it. The driver's NVML library (libnvidia-ml.so.1) is opened at run time on first
// use: nothing is linked, so opbench starts where there is no driver, and where the library,
// the device or a reading is missing the state comes back unknown (or without that reading).
// Thread-safe.
#pragma once
#include <string>
#include <vector>

#include "record/device_state.hpp"

namespace opbench {

// The state of the GPU on PCI bus `pci_bus_id` (as cudaDeviceGetPCIBusId writes it, e.g.
// "0000:3B:00.0"); `sm_default_mhz` is the clock throttling is measured against (the device's
// default SM clock; when 0, NVML's maximum SM clock).
DeviceState nvml_state(const std::string& pci_bus_id, double sm_default_mhz);

// The CPUs NVML names as local to that GPU (nvmlDeviceGetCpuAffinity: its NUMA node's, or the
// socket's), ascending; empty where NVML, the device or the reading is missing.
std::vector<int> nvml_cpu_affinity(const std::string& pci_bus_id);

}  // namespace opbench
